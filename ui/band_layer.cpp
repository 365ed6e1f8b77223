#include "band_layer.h"

#include <algorithm>

namespace memscope {

BandLayer::BandLayer(QCustomPlot* plot, QCPAxisRect* rect, Style style, int rows)
    : QCPLayerable(plot), m_rect(rect), m_style(style), m_rows(std::max(1, rows))
{
}

void BandLayer::setBands(std::vector<Band> bands)
{
    m_bands = std::move(bands);
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

void BandLayer::draw(QCPPainter* painter)
{
    if (!m_rect)
        return;
    QCPAxis* x = m_rect->axis(QCPAxis::atBottom);
    const QCPRange range = x->range();
    const QRect r = m_rect->rect();
    painter->setFont(m_font);
    const QFontMetrics fm(m_font);
    double lastLine = -1e9;
    double lastLabelEnd = -1e9;
    for (const Band& b : m_bands) {
        if (b.x1 < range.lower || b.x0 > range.upper)
            continue;
        double p0 = std::max<double>(x->coordToPixel(b.x0), r.left() - 1);
        double p1 = std::min<double>(x->coordToPixel(b.x1), r.right() + 1);
        if (m_style == Style::Lines) {
            // Dense boundaries (many short iterations zoomed out) would hatch the chart:
            // keep a line every few pixels and a label only where it fits.
            if (p0 - lastLine < 6)
                continue;
            lastLine = p0;
            QColor c = b.color;
            c.setAlphaF(0.6);
            painter->setPen(QPen(c, 1, Qt::DashLine));
            painter->drawLine(QPointF(p0, r.top()), QPointF(p0, r.bottom()));
            if (!b.label.isEmpty() && p0 + 4 > lastLabelEnd) {
                painter->setPen(m_text);
                painter->drawText(QPointF(p0 + 4, r.top() + fm.ascent() + 3), b.label);
                lastLabelEnd = p0 + 4 + fm.horizontalAdvance(b.label) + 8;
            }
            continue;
        }
        if (p1 - p0 < 1)
            p1 = p0 + 1;
        const QRectF rect = rowRect(b.row, p0, p1);
        painter->fillRect(rect, b.color);
        if (!b.label.isEmpty() && rect.width() > fm.horizontalAdvance(QStringLiteral("xx…")) + 6) {
            painter->setPen(m_text);
            const QString text = fm.elidedText(b.label, Qt::ElideRight, static_cast<int>(rect.width()) - 6);
            painter->drawText(rect.adjusted(3, 0, -3, 0), Qt::AlignVCenter | Qt::AlignLeft, text);
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
