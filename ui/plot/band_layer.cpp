#include "ui/plot/band_layer.h"

#include <algorithm>
#include <cmath>

namespace memscope {

BandLayer::BandLayer(QCustomPlot* plot, QCPAxisRect* rect, Style style, int rows)
    : QCPLayerable(plot), m_rect(rect), m_style(style), m_rows(std::max(1, rows)), m_set(std::make_shared<BandSet>())
{
}

void BandLayer::setBands(std::shared_ptr<const BandSet> bands) { m_set = bands ? std::move(bands) : std::make_shared<BandSet>(); }

void BandLayer::setBands(std::vector<Band> bands)
{
    m_set = std::make_shared<BandSet>(std::move(bands), m_style == Style::Lanes ? m_rows : 1);
}

void BandLayer::setColors(std::vector<QColor> colors) { m_colors = std::move(colors); }

QColor BandLayer::colorOf(const Band& b) const { return b.style < m_colors.size() ? m_colors[b.style] : QColor(Qt::transparent); }

void BandLayer::applyDefaultAntialiasingHint(QCPPainter* painter) const { painter->setAntialiasing(false); }

QRect BandLayer::clipRect() const { return m_rect ? m_rect->rect() : QRect(); }

void BandLayer::setRows(int rows) { m_rows = std::max(1, rows); }

QRectF BandLayer::rowRect(int row, double px0, double px1) const
{
    const QRect r = m_rect->rect();
    if (m_style != Style::Lanes)
        return QRectF(QPointF(px0, r.top()), QPointF(px1, r.bottom() + 1));
    const double h = static_cast<double>(r.height()) / m_rows;
    return QRectF(QPointF(px0, r.top() + row * h + 1), QPointF(px1, r.top() + (row + 1) * h - 1));
}

std::vector<int64_t> BandLayer::columnBands(int row, double lower, double upper, int columns) const
{
    return m_set->columnBands(row, lower, upper, columns);
}

void BandLayer::drawLines(QCPPainter* painter)
{
    QCPAxis* x = m_rect->axis(QCPAxis::atBottom);
    const QCPRange range = x->range();
    const QRect r = m_rect->rect();
    const QFontMetrics fm(m_font);
    double lastLine = -1e9;
    double lastLabelEnd = -1e9;
    const std::vector<QRectF> avoid = m_obstacles ? m_obstacles() : std::vector<QRectF>{};
    m_labelsDrawn.clear();
    // Lines are zero-width bands sorted by x0; a wider one is drawn at its start.
    const std::vector<Band>& bands = m_set->bands();
    for (size_t i = m_set->firstReaching(0, range.lower); i < bands.size(); ++i) {
        const Band& b = bands[i];
        if (b.x0 > range.upper)
            break;
        if (b.x1 < range.lower)
            continue;
        const double p0 = std::max<double>(x->coordToPixel(b.x0), r.left() - 1);
        // Dense boundaries (many short iterations zoomed out) would hatch the chart:
        // keep a line every few pixels and a label only where it fits.
        if (p0 - lastLine < 6)
            continue;
        lastLine = p0;
        QColor c = colorOf(b);
        c.setAlphaF(0.6);
        painter->setPen(QPen(c, 1, Qt::DashLine));
        painter->drawLine(QPointF(p0, r.top()), QPointF(p0, r.bottom()));
        ++m_primitives;
        if (p0 + 4 <= lastLabelEnd)
            continue;
        if (const QString label = labelOf(b); !label.isEmpty()) {
            QRectF box(p0 + 2, r.top() + 1, fm.horizontalAdvance(label) + 4, fm.height() + 2);
            for (int pass = 0; pass < 2; ++pass) // below one obstacle, then check the others again
                for (const QRectF& o : avoid)
                    if (box.intersects(o))
                        box.moveTop(o.bottom() + 2);
            const auto meets = [&](const QRectF& o) { return box.intersects(o); };
            if (box.bottom() > r.bottom() || std::any_of(avoid.begin(), avoid.end(), meets))
                continue; // no free place: left out rather than drawn over a label or the peak's line
            m_labelsDrawn.push_back(box);
            painter->setPen(m_text);
            painter->drawText(QPointF(box.left() + 2, box.top() + fm.ascent() + 2), label);
            lastLabelEnd = p0 + 4 + fm.horizontalAdvance(label) + 8;
            ++m_primitives;
        }
    }
}

void BandLayer::draw(QCPPainter* painter)
{
    m_primitives = 0;
    if (!m_rect)
        return;
    painter->setFont(m_font);
    if (m_style == Style::Lines) {
        drawLines(painter);
        return;
    }
    QCPAxis* x = m_rect->axis(QCPAxis::atBottom);
    const QCPRange range = x->range();
    const QRect r = m_rect->rect();
    const int columns = r.width();
    if (columns <= 0)
        return;
    const QFontMetrics fm(m_font);
    const double minLabelWidth = fm.horizontalAdvance(QStringLiteral("xx…")) + 6;
    const double left = r.left();
    const std::vector<Band>& bands = m_set->bands();
    for (int row = 0; row < std::min(m_rows, m_set->rows()); ++row) {
        // One rectangle per run of columns showing the same colour.
        const std::vector<int64_t> shown = columnBands(row, range.lower, range.upper, columns);
        for (int c = 0; c < columns;) {
            const int64_t band = shown[static_cast<size_t>(c)];
            int end = c + 1;
            if (band == BandLod::kNone) {
                c = end;
                continue;
            }
            const uint32_t style = bands[static_cast<size_t>(band)].style;
            while (end < columns && shown[static_cast<size_t>(end)] != BandLod::kNone &&
                   bands[static_cast<size_t>(shown[static_cast<size_t>(end)])].style == style)
                ++end;
            painter->fillRect(rowRect(row, left + c, left + end), colorOf(bands[static_cast<size_t>(band)]));
            ++m_primitives;
            c = end;
        }
        // Labels on the bands wide enough for one.
        const size_t e = m_set->rowEnd(row);
        const double pixelsPerX = columns / std::max(range.size(), 1e-300);
        for (size_t i = m_set->firstReaching(row, range.lower); i < e; ++i) {
            const Band& band = bands[i];
            if (band.x0 > range.upper)
                break;
            if (band.x1 < range.lower || (band.x1 - band.x0) * pixelsPerX <= minLabelWidth)
                continue;
            const double p0 = std::max<double>(x->coordToPixel(band.x0), r.left() - 1);
            const double p1 = std::min<double>(x->coordToPixel(band.x1), r.right() + 1);
            const QRectF rect = rowRect(row, p0, p1);
            if (rect.width() <= minLabelWidth)
                continue;
            const QString label = labelOf(band);
            if (label.isEmpty())
                continue;
            painter->setPen(m_text);
            const QString text = fm.elidedText(label, Qt::ElideRight, static_cast<int>(rect.width()) - 6);
            painter->drawText(rect.adjusted(3, 0, -3, 0), Qt::AlignVCenter | Qt::AlignLeft, text);
            ++m_primitives;
        }
    }
}

const BandLayer::Band* BandLayer::bandAt(const QPointF& pos) const
{
    if (!m_rect || !m_rect->rect().contains(pos.toPoint()))
        return nullptr;
    QCPAxis* x = m_rect->axis(QCPAxis::atBottom);
    const double v = x->pixelToCoord(pos.x());
    const double slack = std::fabs(x->pixelToCoord(pos.x() + 2) - v);
    const Band* best = nullptr;
    for (const Band& b : m_set->bands()) {
        if (v < b.x0 - slack || v > b.x1 + slack)
            continue;
        if (m_style == Style::Lanes && !rowRect(b.row, 0, 1).adjusted(0, -1, 0, 1).contains(QPointF(0.5, pos.y())))
            continue;
        if (!best || b.x1 - b.x0 < best->x1 - best->x0)
            best = &b;
    }
    return best;
}

} // namespace memscope
