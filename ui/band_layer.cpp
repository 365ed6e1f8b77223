#include "band_layer.h"

#include <algorithm>
#include <cmath>

namespace memscope {

BandLayer::BandLayer(QCustomPlot* plot, QCPAxisRect* rect, Style style, int rows)
    : QCPLayerable(plot), m_rect(rect), m_style(style), m_rows(std::max(1, rows))
{
    m_rowBegin.assign(static_cast<size_t>(m_rows) + 1, 0);
}

void BandLayer::setBands(std::vector<Band> bands)
{
    for (Band& b : bands)
        b.row = m_style == Style::Lanes ? std::clamp(b.row, 0, m_rows - 1) : 0;
    std::stable_sort(bands.begin(), bands.end(),
                     [](const Band& a, const Band& b) { return a.row != b.row ? a.row < b.row : a.x0 < b.x0; });
    m_bands = std::move(bands);
    m_lod.resize(m_bands.size());
    m_maxX1.resize(m_bands.size());
    m_rowBegin.assign(static_cast<size_t>(m_rows) + 1, m_bands.size());
    for (size_t i = m_bands.size(); i-- > 0;)
        m_rowBegin[static_cast<size_t>(m_bands[i].row)] = i;
    for (size_t r = static_cast<size_t>(m_rows); r-- > 0;)
        m_rowBegin[r] = std::min(m_rowBegin[r], m_rowBegin[r + 1]);
    for (size_t i = 0; i < m_bands.size(); ++i) {
        const Band& b = m_bands[i];
        m_lod[i] = {b.x0, b.x1, b.color.rgba()};
        const bool rowStart = i == 0 || m_bands[i - 1].row != b.row;
        m_maxX1[i] = rowStart ? b.x1 : std::max(m_maxX1[i - 1], b.x1);
    }
}

void BandLayer::applyDefaultAntialiasingHint(QCPPainter* painter) const
{
    painter->setAntialiasing(false);
}

QRect BandLayer::clipRect() const
{
    return m_rect ? m_rect->rect() : QRect();
}

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
    if (row < 0 || row >= m_rows)
        return std::vector<int64_t>(static_cast<size_t>(std::max(columns, 0)), BandLod::kNone);
    const size_t b = m_rowBegin[static_cast<size_t>(row)];
    const size_t e = m_rowBegin[static_cast<size_t>(row) + 1];
    std::vector<int64_t> out = BandLod::columns(std::span(m_lod).subspan(b, e - b), std::span(m_maxX1).subspan(b, e - b),
                                                lower, upper, columns);
    for (int64_t& i : out)
        if (i != BandLod::kNone)
            i += static_cast<int64_t>(b);
    return out;
}

void BandLayer::drawLines(QCPPainter* painter)
{
    QCPAxis* x = m_rect->axis(QCPAxis::atBottom);
    const QCPRange range = x->range();
    const QRect r = m_rect->rect();
    const QFontMetrics fm(m_font);
    double lastLine = -1e9;
    double lastLabelEnd = -1e9;
    // Lines are zero-width bands sorted by x0; a wider one is drawn at its start.
    const size_t start = static_cast<size_t>(std::lower_bound(m_maxX1.begin(), m_maxX1.end(), range.lower) - m_maxX1.begin());
    for (size_t i = start; i < m_bands.size(); ++i) {
        const Band& b = m_bands[i];
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
        QColor c = b.color;
        c.setAlphaF(0.6);
        painter->setPen(QPen(c, 1, Qt::DashLine));
        painter->drawLine(QPointF(p0, r.top()), QPointF(p0, r.bottom()));
        ++m_primitives;
        if (!b.label.isEmpty() && p0 + 4 > lastLabelEnd) {
            painter->setPen(m_text);
            painter->drawText(QPointF(p0 + 4, r.top() + fm.ascent() + 3), b.label);
            lastLabelEnd = p0 + 4 + fm.horizontalAdvance(b.label) + 8;
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
    for (int row = 0; row < m_rows; ++row) {
        // One rectangle per run of columns showing the same colour.
        const std::vector<int64_t> shown = columnBands(row, range.lower, range.upper, columns);
        for (int c = 0; c < columns;) {
            const int64_t band = shown[static_cast<size_t>(c)];
            int end = c + 1;
            if (band == BandLod::kNone) {
                c = end;
                continue;
            }
            const QRgb key = m_lod[static_cast<size_t>(band)].key;
            while (end < columns && shown[static_cast<size_t>(end)] != BandLod::kNone &&
                   m_lod[static_cast<size_t>(shown[static_cast<size_t>(end)])].key == key)
                ++end;
            painter->fillRect(rowRect(row, left + c, left + end), m_bands[static_cast<size_t>(band)].color);
            ++m_primitives;
            c = end;
        }
        // Labels on the bands wide enough for one.
        const size_t b = m_rowBegin[static_cast<size_t>(row)];
        const size_t e = m_rowBegin[static_cast<size_t>(row) + 1];
        const size_t start = static_cast<size_t>(
            std::lower_bound(m_maxX1.begin() + static_cast<std::ptrdiff_t>(b), m_maxX1.begin() + static_cast<std::ptrdiff_t>(e),
                             range.lower) -
            m_maxX1.begin());
        const double pixelsPerX = columns / std::max(range.size(), 1e-300);
        for (size_t i = start; i < e; ++i) {
            const Band& band = m_bands[i];
            if (band.x0 > range.upper)
                break;
            if (band.label.isEmpty() || band.x1 < range.lower || (band.x1 - band.x0) * pixelsPerX <= minLabelWidth)
                continue;
            const double p0 = std::max<double>(x->coordToPixel(band.x0), r.left() - 1);
            const double p1 = std::min<double>(x->coordToPixel(band.x1), r.right() + 1);
            const QRectF rect = rowRect(row, p0, p1);
            if (rect.width() <= minLabelWidth)
                continue;
            painter->setPen(m_text);
            const QString text = fm.elidedText(band.label, Qt::ElideRight, static_cast<int>(rect.width()) - 6);
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
    for (const Band& b : m_bands) {
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
