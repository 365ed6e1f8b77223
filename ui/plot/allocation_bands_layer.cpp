#include "ui/plot/allocation_bands_layer.h"

#include "ui/plot/column_events.h"
#include "ui/style/plot_theme.h"

#include <QElapsedTimer>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace memscope {

AllocationBandsLayer::AllocationBandsLayer(QCustomPlot* plot, QCPAxisRect* rect) : QCPLayerable(plot), m_rect(rect) { }

void AllocationBandsLayer::setModel(const DeviceModel* model, XAxisMode mode)
{
    m_model = model;
    m_mode = mode;
    m_matches.clear();
    m_selected = {};
    m_valid = false;
    m_paletteValid = false;
}

void AllocationBandsLayer::setColorMode(ColorMode mode)
{
    m_colorMode = mode;
    m_valid = false;
    m_paletteValid = false;
}

void AllocationBandsLayer::setMatches(std::vector<uint8_t> matches)
{
    m_matches = std::move(matches);
    m_valid = false;
    m_paletteValid = false;
}

void AllocationBandsLayer::setSelected(AllocationId id)
{
    m_selected = id;
    m_valid = false;
    m_paletteValid = false;
}

void AllocationBandsLayer::setDark(bool dark)
{
    m_dark = dark;
    m_valid = false;
    m_paletteValid = false;
}

void AllocationBandsLayer::applyDefaultAntialiasingHint(QCPPainter* painter) const { painter->setAntialiasing(false); }

QRect AllocationBandsLayer::clipRect() const { return m_rect ? m_rect->rect() : QRect(); }

void AllocationBandsLayer::buildPalette()
{
    for (int k = 0; k < kCategoryCount; ++k) {
        const QColor base = categoryQColor(static_cast<Category>(k));
        for (int s = 0; s < kShades; ++s) {
            const int factor = 86 + s * 7; // 86..114 %
            m_categoryShades[static_cast<size_t>(k * kShades + s)] =
                (factor >= 100 ? base.lighter(factor) : base.darker(200 - factor)).rgb();
        }
    }
    for (int i = 0; i < kGreys; ++i) {
        const int g = (m_dark ? 58 : 218) + i * 3;
        m_greys[static_cast<size_t>(i)] = qRgb(g, g, g);
    }
    m_hsv.clear();
    if (m_colorMode == ColorMode::Allocation) {
        m_hsv.resize(static_cast<size_t>(kHues * kSaturations));
        for (int hue = 0; hue < kHues; ++hue)
            for (int s = 0; s < kSaturations; ++s)
                m_hsv[static_cast<size_t>(hue * kSaturations + s)] = QColor::fromHsv(hue, 140 + s, m_dark ? 200 : 225).rgb();
    }
    m_paletteValid = true;
}

QRgb AllocationBandsLayer::colorOf(AllocationId id) const
{
    const size_t k = static_cast<size_t>(id.value);
    if (id == m_selected)
        return m_dark ? qRgb(255, 80, 120) : qRgb(220, 0, 70);
    const uint32_t h = static_cast<uint32_t>(id.value) * 2654435761u;
    if (!m_matches.empty() && (k >= m_matches.size() || !m_matches[k]))
        return m_greys[h >> 29];
    if (m_colorMode == ColorMode::Allocation)
        return m_hsv[((h >> 8) % kHues) * kSaturations + h % kSaturations];
    const DeviceAttribution* a = m_model->attribution;
    const Category c = a && k < a->allocationCategory.size() ? a->category(id) : Category::Other;
    return m_categoryShades[static_cast<size_t>(c) * kShades + (h >> 27) % kShades];
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
    m_columnEvent.assign(static_cast<size_t>(w), kNoColumnEvent);
    if (!m_model || m_model->eventCount() == 0) {
        m_lastRenderMs = static_cast<double>(timer.nsecsElapsed()) / 1e6;
        return;
    }
    QCPAxis* xa = m_rect->axis(QCPAxis::atBottom);
    QCPAxis* ya = m_rect->axis(QCPAxis::atLeft);
    const double ylo = ya->range().lower, yhi = ya->range().upper;
    const double rowsPerByte = h / (yhi - ylo);
    m_columnEvent = columnEvents(*m_model, m_mode, xa->range().lower, xa->range().upper, w);
    uchar* bits = m_image.bits();
    const qsizetype stride = m_image.bytesPerLine();
    auto pixel = [&](int row, int col) -> QRgb& { return reinterpret_cast<QRgb*>(bits + row * stride)[col]; };

    std::vector<float> coverage(static_cast<size_t>(h));
    std::vector<QRgb> color(static_cast<size_t>(h));
    // The live set moves forward from column to column by the events in between; a jump
    // longer than the replay's checkpoint stride asks the replay instead.
    const DeviceReplay& replay = *m_model->replay;
    if (!m_paletteValid)
        buildPalette();
    std::vector<AllocationId> live;
    std::vector<double> prefix{0.0}; // prefix[j]: bytes of live[0..j), the bottom of live[j]
    int64_t liveEvent = kNoColumnEvent;
    constexpr size_t kUnchanged = SIZE_MAX;
    size_t firstChanged = 0; // lowest position of `live` that changed since the last column
    auto advance = [&](int64_t target) {
        if (liveEvent == kNoColumnEvent || target < liveEvent || target - liveEvent > replay.checkpointStride ||
            replay.doubleAllocs > 0 || replay.eventAllocation.size() != static_cast<size_t>(replay.eventCount)) {
            live = replay.activeAfter(target);
            liveEvent = target;
            firstChanged = 0;
            return;
        }
        for (int64_t i = liveEvent + 1; i <= target; ++i) {
            const AllocationId id = replay.eventAllocation[static_cast<size_t>(i)];
            if (!id.valid())
                continue;
            const Allocation& a = replay.allocation(id);
            if (a.allocEvent.value == i) {
                auto it = live.empty() || live.back() < id ? live.end() : std::lower_bound(live.begin(), live.end(), id);
                firstChanged = std::min(firstChanged, static_cast<size_t>(it - live.begin()));
                live.insert(it, id);
            } else if (a.freeEvent.value == i) {
                auto it = std::lower_bound(live.begin(), live.end(), id);
                if (it != live.end() && *it == id) {
                    firstChanged = std::min(firstChanged, static_cast<size_t>(it - live.begin()));
                    live.erase(it);
                }
            }
        }
        liveEvent = target;
    };
    auto rowOf = [&](double bytes) { return (yhi - bytes) * rowsPerByte; }; // image rows grow downwards

    // Successive columns share the bottom of the stack (what was allocated first and is still
    // live): each column copies the rows below the lowest change from the column before and
    // stacks only the allocations from there up.
    int previousColumn = -1;
    for (int c = 0; c < w; ++c) {
        const int64_t rep = m_columnEvent[static_cast<size_t>(c)];
        if (rep == kNoColumnEvent)
            continue;
        firstChanged = kUnchanged;
        advance(rep);
        if (previousColumn < 0)
            firstChanged = 0;
        if (firstChanged == kUnchanged) {
            for (int y = 0; y < h; ++y)
                pixel(y, c) = pixel(y, previousColumn);
            previousColumn = c;
            continue;
        }
        prefix.resize(live.size() + 1);
        for (size_t j = std::min(firstChanged, live.size()); j < live.size(); ++j)
            prefix[j + 1] = prefix[j] + static_cast<double>(replay.allocation(live[j]).size);
        int boundaryRow = h - 1; // rows below it are the previous column's
        size_t j0 = 0;
        if (firstChanged > 0) {
            const double pb = rowOf(prefix[std::min(firstChanged, live.size())]);
            boundaryRow = std::min(h - 1, static_cast<int>(std::floor(pb)));
            j0 = std::min(firstChanged, live.size());
            while (j0 > 0 && rowOf(prefix[j0]) < boundaryRow + 1)
                --j0; // allocations that share the boundary row are drawn again
            for (int y = std::max(boundaryRow + 1, 0); y < h; ++y)
                pixel(y, c) = pixel(y, previousColumn);
        }
        previousColumn = c;
        if (boundaryRow < 0)
            continue;
        std::fill(coverage.begin(), coverage.begin() + boundaryRow + 1, 0.0f);
        for (size_t j = j0; j < live.size(); ++j) {
            const AllocationId id = live[j];
            const double top = rowOf(prefix[j + 1]);
            const double bottom = rowOf(prefix[j]);
            if (top >= boundaryRow + 1 || bottom - top <= 0)
                continue;
            if (bottom <= 0)
                break; // everything above is above the image
            const QRgb col = colorOf(id);
            const int r0 = static_cast<int>(std::floor(std::max(top, 0.0)));
            const int r1 = std::min(boundaryRow, static_cast<int>(std::ceil(std::min(bottom, static_cast<double>(h)))) - 1);
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
        for (int y = 0; y <= boundaryRow; ++y)
            if (coverage[static_cast<size_t>(y)] > 0)
                pixel(y, c) = color[static_cast<size_t>(y)];
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
    for (AllocationId id : m_model->replay->activeAfter(e)) {
        const double size = static_cast<double>(m_model->replay->allocation(id).size);
        if (bytes >= cum && bytes < cum + size)
            return id;
        cum += size;
    }
    return {};
}

} // namespace memscope
