#include "ui/plot/category_areas_layer.h"

#include "ui/plot/column_events.h"
#include "ui/style/plot_theme.h"

#include <QElapsedTimer>

#include <algorithm>
#include <array>
#include <cmath>

namespace memscope {

CategoryAreasLayer::CategoryAreasLayer(QCustomPlot* plot, QCPAxisRect* rect) : QCPLayerable(plot), m_rect(rect) { }

void CategoryAreasLayer::setModel(const DeviceModel* model, XAxisMode mode, std::vector<Category> stackOrder)
{
    m_model = model;
    m_mode = mode;
    m_order = std::move(stackOrder);
    m_valid = false;
    m_valueEvents.clear();
    m_values.clear();
}

void CategoryAreasLayer::setBackground(const QColor& background)
{
    m_background = background;
    m_valid = false;
}

void CategoryAreasLayer::setHaze(const QColor& haze)
{
    m_haze = haze;
    m_valid = false;
}

void CategoryAreasLayer::applyDefaultAntialiasingHint(QCPPainter* painter) const { painter->setAntialiasing(false); }

QRect CategoryAreasLayer::clipRect() const { return m_rect ? m_rect->rect() : QRect(); }

void CategoryAreasLayer::render(const QRect& area, double columnDpr, double rowDpr)
{
    QElapsedTimer timer;
    timer.start();
    const int w = std::max(1, static_cast<int>(std::lround(std::max(1, area.width()) * columnDpr)));
    const int h = std::max(1, static_cast<int>(std::lround(area.height() * rowDpr)));
    m_image = QImage(w, h, QImage::Format_ARGB32_Premultiplied);
    m_image.fill(Qt::transparent);
    m_columns.assign(static_cast<size_t>(w), kNoColumnEvent);
    if (!m_model || m_model->eventCount() == 0)
        return;
    const QCPRange x = m_rect->axis(QCPAxis::atBottom)->range();
    const QCPRange y = m_rect->axis(QCPAxis::atLeft)->range();
    m_columns = columnEvents(*m_model, m_mode, x.lower, x.upper, w, &m_lowest);
    const QRgb haze = qPremultiply(m_haze.rgba());
    const uint hazeKeep = 255 - qAlpha(haze);

    // Colours a little towards the background, as the translucent areas of a chart look.
    std::vector<QRgb> fill, edge;
    for (Category c : m_order) {
        const QColor base = categoryQColor(c);
        const auto mix = [&](int a, int b) { return (a * 84 + b * 16) / 100; };
        const QColor f(mix(base.red(), m_background.red()), mix(base.green(), m_background.green()),
                       mix(base.blue(), m_background.blue()));
        fill.push_back(f.rgb());
        edge.push_back(base.darker(125).rgb());
    }
    uchar* bits = m_image.bits();
    const qsizetype stride = m_image.bytesPerLine();
    auto pixel = [&](int row, int col) -> QRgb& { return reinterpret_cast<QRgb*>(bits + row * stride)[col]; };
    const double rowsPerByte = h / (y.upper - y.lower);
    const size_t kinds = m_order.size();
    if (m_valuesFrom != std::pair(m_model->attribution, m_model->eventCount())) {
        m_valueEvents.clear();
        m_values.clear();
        m_valuesFrom = {m_model->attribution, m_model->eventCount()};
    }
    std::vector<int64_t> valueEvents, values;
    valueEvents.reserve(static_cast<size_t>(w));
    values.reserve(static_cast<size_t>(w) * kinds);
    size_t kept = 0; // into m_valueEvents, which ascends as the columns do
    int64_t previous = kNoColumnEvent, previousLow = kNoColumnEvent;
    for (int c = 0; c < w; ++c) {
        const int64_t e = m_columns[static_cast<size_t>(c)];
        const int64_t low = m_lowest[static_cast<size_t>(c)];
        if (e == kNoColumnEvent)
            continue;
        if (c > 0 && e == previous && low == previousLow) {
            for (int r = 0; r < h; ++r)
                pixel(r, c) = pixel(r, c - 1);
            continue;
        }
        previous = e;
        previousLow = low;
        while (kept < m_valueEvents.size() && m_valueEvents[kept] < e)
            ++kept;
        std::array<int64_t, kCategoryCount> fresh{};
        const int64_t* bytes = fresh.data();
        if (valueEvents.empty() || valueEvents.back() < e) {
            valueEvents.push_back(e);
            if (kept < m_valueEvents.size() && m_valueEvents[kept] == e)
                values.insert(values.end(), m_values.begin() + static_cast<std::ptrdiff_t>(kept * kinds),
                              m_values.begin() + static_cast<std::ptrdiff_t>((kept + 1) * kinds));
            else
                for (Category k : m_order)
                    values.push_back(m_model->categoryBytes(k, e));
            bytes = values.data() + values.size() - kinds;
        } else {
            for (size_t k = 0; k < kinds; ++k)
                fresh[k] = m_model->categoryBytes(m_order[k], e);
        }
        double cum = 0;
        for (size_t k = 0; k < kinds; ++k) {
            const double v = static_cast<double>(bytes[k]);
            if (v <= 0)
                continue;
            const double top = (y.upper - (cum + v)) * rowsPerByte;
            const double bottom = (y.upper - cum) * rowsPerByte;
            cum += v;
            const int r0 = std::max(0, static_cast<int>(std::lround(top)));
            const int r1 = std::min(h, static_cast<int>(std::lround(bottom)));
            for (int r = r0; r < r1; ++r)
                pixel(r, c) = fill[k];
            if (r1 - r0 >= 3)
                pixel(r0, c) = edge[k];
        }
        if (hazeKeep < 255 && low >= 0 && low != e) {
            const double lowBytes = static_cast<double>(m_model->requestedAfter(low));
            const int r0 = std::max(0, static_cast<int>(std::lround((y.upper - cum) * rowsPerByte)));
            const int r1 = std::min(h, static_cast<int>(std::lround((y.upper - lowBytes) * rowsPerByte)));
            for (int r = r0; r < r1; ++r) {
                QRgb& p = pixel(r, c);
                p = haze + (((p & 0xff00ff) * hazeKeep >> 8) & 0xff00ff) + ((((p >> 8) & 0xff00ff) * hazeKeep) & 0xff00ff00);
            }
        }
    }
    m_valueEvents = std::move(valueEvents);
    m_values = std::move(values);
    m_lastRenderMs = static_cast<double>(timer.nsecsElapsed()) / 1e6;
}

void CategoryAreasLayer::draw(QCPPainter* painter)
{
    if (!m_rect)
        return;
    const QRect area = m_rect->rect();
    // The columns are the device pixels of the screen, as the requested line's
    // (TimelinePlotter::columnCount()); exports that scale the painter get rows at the
    // target's resolution and the same columns, widened, so the line stays on their tops.
    const double columnDpr = mParentPlot ? mParentPlot->bufferDevicePixelRatio() : 1.0;
    const double dpr = columnDpr * std::max(1.0, painter->transform().m22());
    const QCPRange x = m_rect->axis(QCPAxis::atBottom)->range();
    const QCPRange y = m_rect->axis(QCPAxis::atLeft)->range();
    if (!m_valid || area.size() != m_size || dpr != m_dpr || x != m_x || y != m_y) {
        render(area, columnDpr, dpr);
        m_size = area.size();
        m_dpr = dpr;
        m_x = x;
        m_y = y;
        m_valid = true;
    }
    painter->save();
    painter->setRenderHint(QPainter::SmoothPixmapTransform, false);
    painter->drawImage(QRectF(area), m_image, QRectF(m_image.rect()));
    painter->restore();
}

} // namespace memscope
