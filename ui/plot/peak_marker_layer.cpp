#include "ui/plot/peak_marker_layer.h"

#include <QPainter>

#include <cmath>
#include <unordered_set>

namespace memscope {

PeakMarkerLayer::PeakMarkerLayer(QCustomPlot* plot, QCPAxisRect* rect) : QCPLayerable(plot), m_rect(rect) { }

void PeakMarkerLayer::setPoints(std::vector<QPointF> points) { m_points = std::move(points); }

void PeakMarkerLayer::setStyle(double size, const QPen& pen, const QBrush& brush)
{
    m_size = size;
    m_pen = pen;
    m_brush = brush;
    m_spriteDpr = 0;
}

void PeakMarkerLayer::applyDefaultAntialiasingHint(QCPPainter* painter) const { painter->setAntialiasing(true); }

QRect PeakMarkerLayer::clipRect() const { return m_rect ? m_rect->rect() : QRect(); }

void PeakMarkerLayer::draw(QCPPainter* painter)
{
    m_drawn = 0;
    if (!m_rect || m_points.empty())
        return;
    QCPAxis* x = m_rect->axis(QCPAxis::atBottom);
    QCPAxis* y = m_rect->axis(QCPAxis::atLeft);
    const QRect area = m_rect->rect();
    const double half = m_size / 2;
    const double reach = half + m_pen.widthF() + 1;
    const bool vector = painter->modes().testFlag(QCPPainter::pmVectorized) ||
                        painter->modes().testFlag(QCPPainter::pmNoCaching) || painter->transform().m11() != 1.0;
    const double dpr = mParentPlot ? mParentPlot->bufferDevicePixelRatio() : 1.0;
    const int extent = static_cast<int>(std::ceil(2 * reach));
    if (!vector && (m_spriteDpr != dpr || m_sprite.isNull())) {
        m_sprite = QPixmap(static_cast<int>(std::ceil(extent * dpr)), static_cast<int>(std::ceil(extent * dpr)));
        m_sprite.setDevicePixelRatio(dpr);
        m_sprite.fill(Qt::transparent);
        QPainter p(&m_sprite);
        p.setRenderHint(QPainter::Antialiasing);
        p.setPen(m_pen);
        p.setBrush(m_brush);
        p.drawEllipse(QPointF(extent / 2.0, extent / 2.0), half, half);
        m_spriteDpr = dpr;
    }
    painter->setPen(m_pen);
    painter->setBrush(m_brush);
    std::unordered_set<uint64_t> taken;
    taken.reserve(m_points.size());
    // Last to first: a later marker is drawn on top, so it is the one kept on a shared pixel.
    std::vector<QPointF> centres;
    for (size_t i = m_points.size(); i-- > 0;) {
        const double px = x->coordToPixel(m_points[i].x());
        const double py = y->coordToPixel(m_points[i].y());
        if (!std::isfinite(px) || !std::isfinite(py) || px < area.left() - reach || px > area.right() + reach ||
            py < area.top() - reach || py > area.bottom() + reach)
            continue;
        const uint64_t cell = (static_cast<uint64_t>(std::lround(px)) << 32) ^ static_cast<uint32_t>(std::lround(py));
        if (taken.insert(cell).second)
            centres.emplace_back(px, py);
    }
    for (auto it = centres.rbegin(); it != centres.rend(); ++it) {
        if (vector)
            painter->drawEllipse(*it, half, half);
        else
            painter->drawPixmap(QPointF(std::round(it->x() - extent / 2.0), std::round(it->y() - extent / 2.0)), m_sprite);
        ++m_drawn;
    }
}

} // namespace memscope
