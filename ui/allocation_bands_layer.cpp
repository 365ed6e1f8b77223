#include "allocation_bands_layer.h"

#include "plot_theme.h"

#include <QElapsedTimer>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace memscope {

AllocationBandsLayer::AllocationBandsLayer(QCustomPlot* plot, QCPAxisRect* rect) : QCPLayerable(plot), m_rect(rect) {}

void AllocationBandsLayer::setModel(const DeviceModel* model, XAxisMode mode)
{
    m_model = model;
    m_mode = mode;
    m_matches.clear();
    m_selected = {};
    m_valid = false;
}

void AllocationBandsLayer::setColorMode(ColorMode mode)
{
    m_colorMode = mode;
    m_valid = false;
}

void AllocationBandsLayer::setMatches(std::vector<uint8_t> matches)
{
    m_matches = std::move(matches);
    m_valid = false;
}

void AllocationBandsLayer::setSelected(AllocationId id)
{
    m_selected = id;
    m_valid = false;
}

void AllocationBandsLayer::setDark(bool dark)
{
    m_dark = dark;
    m_valid = false;
}

void AllocationBandsLayer::applyDefaultAntialiasingHint(QCPPainter* painter) const
{
    painter->setAntialiasing(false);
}

QRect AllocationBandsLayer::clipRect() const
{
    return m_rect ? m_rect->rect() : QRect();
}

QRgb AllocationBandsLayer::colorOf(AllocationId id) const
{
    const size_t k = static_cast<size_t>(id.value);
    if (id == m_selected)
        return m_dark ? qRgb(255, 80, 120) : qRgb(220, 0, 70);
    const uint32_t h = static_cast<uint32_t>(id.value) * 2654435761u;
    if (!m_matches.empty() && (k >= m_matches.size() || !m_matches[k])) {
        const int g = m_dark ? 58 + static_cast<int>(h >> 29) * 3 : 218 + static_cast<int>(h >> 29) * 3;
        return qRgb(g, g, g);
    }
    if (m_colorMode == ColorMode::Allocation) {
        const int hue = static_cast<int>((h >> 8) % 360);
        return QColor::fromHsv(hue, 140 + static_cast<int>(h % 60), m_dark ? 200 : 225).rgb();
    }
    const Category c = k < m_model->attribution->allocationCategory.size() ? m_model->attribution->category(id)
                                                                           : Category::Other;
    const QColor base = categoryQColor(c);
    const int factor = 86 + static_cast<int>((h >> 27) % 5) * 7; // 86..114 %
    return (factor >= 100 ? base.lighter(factor) : base.darker(200 - factor)).rgb();
}

void AllocationBandsLayer::render(const QRect& area, double dpr)
{
    QElapsedTimer timer;
    timer.start();
    const int w = std::max(1, static_cast<int>(std::lround(area.width() * dpr)));
    const int h = std::max(1, static_cast<int>(std::lround(area.height() * dpr)));
    m_image = QImage(w, h, QImage::Format_ARGB32_Premultiplied);
    m_image.fill(Qt::transparent);
    m_image.setDevicePixelRatio(dpr);
    m_columnEvent.assign(static_cast<size_t>(w), -2);
    if (!m_model || m_model->eventCount() == 0) {
        m_lastRenderMs = static_cast<double>(timer.nsecsElapsed()) / 1e6;
        return;
    }
    QCPAxis* xa = m_rect->axis(QCPAxis::atBottom);
    QCPAxis* ya = m_rect->axis(QCPAxis::atLeft);
    const double lo = xa->range().lower, hi = xa->range().upper;
    const double ylo = ya->range().lower, yhi = ya->range().upper;
    const double rowsPerByte = h / (yhi - ylo);
    const int64_t n = m_model->eventCount();

    std::vector<float> coverage(static_cast<size_t>(h));
    std::vector<QRgb> color(static_cast<size_t>(h));
    int64_t previous = -3;
    int previousColumn = -1;
    int64_t first = m_model->firstEventAtOrAfter(lo, m_mode);
    for (int c = 0; c < w; ++c) {
        const double edge = lo + (hi - lo) * (c + 1) / w;
        const int64_t last = std::min(m_model->firstEventAtOrAfter(edge, m_mode), n);
        int64_t rep;
        if (last > first)
            rep = m_model->requested.query(first, last).maxIndex;
        else
            rep = first - 1;
        const double xc = lo + (hi - lo) * (c + 0.5) / w;
        if (first >= n && xc > m_model->xMax(m_mode))
            rep = -2; // past the end
        if (first == 0 && last == 0 && xc < m_model->xMin(m_mode))
            rep = -2; // before the start
        first = std::max(first, last);
        m_columnEvent[static_cast<size_t>(c)] = rep;
        if (rep == -2)
            continue;
        if (rep == previous && previousColumn >= 0) {
            for (int y = 0; y < h; ++y) {
                auto* line = reinterpret_cast<QRgb*>(m_image.scanLine(y));
                line[c] = line[previousColumn];
            }
            previousColumn = c;
            continue;
        }
        previous = rep;
        previousColumn = c;
        std::fill(coverage.begin(), coverage.end(), 0.0f);
        const std::vector<AllocationId> live = m_model->replay->liveAfter(rep);
        double cum = 0;
        for (AllocationId id : live) {
            const double size = static_cast<double>(m_model->replay->allocation(id).size);
            const double y0 = cum, y1 = cum + size;
            cum = y1;
            // Image rows grow downwards: top = yhi.
            const double top = (yhi - y1) * rowsPerByte;
            const double bottom = (yhi - y0) * rowsPerByte;
            if (bottom <= 0 || top >= h || bottom - top <= 0)
                continue;
            const QRgb col = colorOf(id);
            const int r0 = static_cast<int>(std::floor(std::max(top, 0.0)));
            const int r1 = static_cast<int>(std::ceil(std::min(bottom, static_cast<double>(h)))) - 1;
            for (int r = r0; r <= r1; ++r) {
                const double cover = std::min(bottom, r + 1.0) - std::max(top, static_cast<double>(r));
                auto& cv = coverage[static_cast<size_t>(r)];
                const float f = static_cast<float>(cover);
                if (f > cv || (id == m_selected && f > 0.05f)) {
                    cv = id == m_selected ? 2.0f : f;
                    color[static_cast<size_t>(r)] = col;
                }
            }
        }
        for (int y = 0; y < h; ++y)
            if (coverage[static_cast<size_t>(y)] > 0)
                reinterpret_cast<QRgb*>(m_image.scanLine(y))[c] = color[static_cast<size_t>(y)];
    }
    m_lastRenderMs = static_cast<double>(timer.nsecsElapsed()) / 1e6;
}

void AllocationBandsLayer::draw(QCPPainter* painter)
{
    if (!m_rect)
        return;
    const QRect area = m_rect->rect();
    const double dpr = mParentPlot ? mParentPlot->bufferDevicePixelRatio() : 1.0;
    const QCPRange x = m_rect->axis(QCPAxis::atBottom)->range();
    const QCPRange y = m_rect->axis(QCPAxis::atLeft)->range();
    if (!m_valid || area.size() != m_area.size() || dpr != m_dpr || x != m_x || y != m_y) {
        render(area, dpr);
        m_area = area;
        m_dpr = dpr;
        m_x = x;
        m_y = y;
        m_valid = true;
    }
    painter->drawImage(area.topLeft(), m_image);
}

int64_t AllocationBandsLayer::eventAtPixel(double x) const
{
    if (m_columnEvent.empty() || !m_rect)
        return -2;
    const int c = static_cast<int>(std::floor((x - m_area.left()) * m_dpr));
    if (c < 0 || c >= static_cast<int>(m_columnEvent.size()))
        return -2;
    return m_columnEvent[static_cast<size_t>(c)];
}

AllocationId AllocationBandsLayer::allocationAt(const QPointF& pos) const
{
    const int64_t e = eventAtPixel(pos.x());
    if (e < -1 || !m_model)
        return {};
    const double bytes = m_rect->axis(QCPAxis::atLeft)->pixelToCoord(pos.y());
    double cum = 0;
    for (AllocationId id : m_model->replay->liveAfter(e)) {
        const double size = static_cast<double>(m_model->replay->allocation(id).size);
        if (bytes >= cum && bytes < cum + size)
            return id;
        cum += size;
    }
    return {};
}

} // namespace memscope
