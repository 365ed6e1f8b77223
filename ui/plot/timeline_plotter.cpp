#include "ui/plot/timeline_plotter.h"

#include "ui/plot/category_areas_layer.h"
#include "ui/plot/column_events.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace memscope {

TimelinePlotter::TimelinePlotter(QCustomPlot* plot, QCPAxisRect* rect)
    : m_plot(plot), m_rect(rect), m_areaLayer(new CategoryAreasLayer(plot, rect))
{
}

void TimelinePlotter::clearGraphs()
{
    for (QCPGraph*& g : m_areas) {
        if (g)
            m_plot->removeGraph(g);
        g = nullptr;
    }
    if (m_requested)
        m_plot->removeGraph(m_requested);
    if (m_reserved)
        m_plot->removeGraph(m_reserved);
    m_requested = m_reserved = nullptr;
    for (QCPGraph* g : m_pools)
        m_plot->removeGraph(g);
    m_pools.clear();
}

QString TimelinePlotter::poolLabel(const PoolUsage& pool)
{
    return QStringLiteral("Private pool %1 (%2)").arg(pool.number).arg(QString::fromStdString(pool.kindText()));
}

void TimelinePlotter::setModel(const DeviceModel* model, XAxisMode mode, bool attributed)
{
    clearGraphs();
    m_model = model;
    m_mode = mode;
    std::vector<Category> order;
    if (model)
        for (Category c : kStackOrder)
            if (model->categoryPresent[static_cast<size_t>(c)])
                order.push_back(c);
    m_areaLayer->setModel(model, mode, order);
    if (!model)
        return;
    QCPAxis* x = m_rect->axis(QCPAxis::atBottom);
    QCPAxis* y = m_rect->axis(QCPAxis::atLeft);
    for (Category c : kStackOrder) {
        if (!model->categoryPresent[static_cast<size_t>(c)])
            continue;
        QCPGraph* g = m_plot->addGraph(x, y);
        g->setLineStyle(QCPGraph::lsNone);
        const QColor fill = categoryQColor(c);
        g->setPen(QPen(fill.darker(125), 1));
        g->setBrush(fill);
        g->setName(attributed || c != Category::Other ? QString::fromUtf8(categoryLabel(c).data())
                                                      : QStringLiteral("Requested (not attributed)"));
        g->setSelectable(QCP::stNone);
        m_areas[static_cast<size_t>(c)] = g;
    }
    m_requested = m_plot->addGraph(x, y);
    m_requested->setLineStyle(QCPGraph::lsStepLeft);
    m_requested->setAntialiased(false); // steps: only vertical and horizontal segments
    m_requested->setName(QStringLiteral("Requested (total)"));
    m_requested->setSelectable(QCP::stNone);
    m_requested->setAdaptiveSampling(false);
    m_reserved = m_plot->addGraph(x, y);
    m_reserved->setLineStyle(QCPGraph::lsStepLeft);
    m_reserved->setAntialiased(false);
    m_reserved->setName(QStringLiteral("Reserved"));
    m_reserved->setSelectable(QCP::stNone);
    m_reserved->setAdaptiveSampling(false);
    for (const PoolUsage& pool : model->pools().pools) {
        QCPGraph* g = m_plot->addGraph(x, y);
        g->setLineStyle(QCPGraph::lsStepLeft);
        g->setAntialiased(false);
        g->setAntialiasedFill(false);
        g->setName(poolLabel(pool));
        g->setSelectable(QCP::stNone);
        g->setAdaptiveSampling(false);
        g->setChannelFillGraph(m_pools.empty() ? m_requested : m_pools.back());
        m_pools.push_back(g);
    }
    applyTheme(PlotTheme::current());
}

void TimelinePlotter::applyTheme(const PlotTheme& theme)
{
    if (m_requested)
        m_requested->setPen(QPen(theme.requested, 1.6));
    if (m_reserved)
        m_reserved->setPen(QPen(theme.reserved, 1.6, Qt::DashLine));
    for (size_t k = 0; k < m_pools.size(); ++k) {
        // Purple hatching, a shade per pool: no category uses it, and the hatch reads as
        // "held, not filled" next to the solid areas.
        const QColor c = poolQColor(k, theme.dark);
        m_pools[k]->setPen(QPen(c, 1.0));
        QColor fill = c;
        fill.setAlpha(theme.dark ? 70 : 45);
        m_pools[k]->setBrush(fill);
    }
    m_areaLayer->setBackground(theme.background);
    QColor haze = theme.requested;
    haze.setAlpha(80);
    m_areaLayer->setHaze(haze);
}

std::vector<int64_t> TimelinePlotter::sampleEvents(const DeviceModel& m, const MinMaxPyramid& pyramid, XAxisMode mode, double lo,
                                                   double hi, int pixels)
{
    std::vector<int64_t> out;
    const int64_t n = m.eventCount();
    if (n == 0 || pixels <= 0 || hi <= lo)
        return out;
    out.reserve(static_cast<size_t>(pixels) * 2 + 4);
    const double step = (hi - lo) / pixels;
    std::vector<double> edges(static_cast<size_t>(pixels) + 1);
    edges[0] = lo;
    for (int p = 0; p < pixels; ++p)
        edges[static_cast<size_t>(p) + 1] = p + 1 == pixels ? hi : lo + step * (p + 1);
    const std::vector<int64_t> at = m.firstEventsAtOrAfter(edges, mode);
    const int64_t before = at[0] - 1;
    if (before >= 0)
        out.push_back(before);
    int64_t first = before + 1;
    for (int p = 0; p < pixels && first < n; ++p) {
        int64_t last = at[static_cast<size_t>(p) + 1];
        if (p + 1 == pixels)
            last = std::max(last, std::min<int64_t>(m.eventAtX(hi, mode) + 1, n));
        if (last <= first)
            continue;
        const MinMaxPyramid::Extremes e = pyramid.query(first, last);
        const int64_t a = std::min(e.minIndex, e.maxIndex);
        const int64_t b = std::max(e.minIndex, e.maxIndex);
        if (out.empty() || out.back() < a)
            out.push_back(a);
        if (out.back() < b)
            out.push_back(b);
        // Keep the bucket's last state, so the step into the next bucket starts right.
        if (out.back() < last - 1)
            out.push_back(last - 1);
        first = last;
    }
    if (first < n && (out.empty() || out.back() < first))
        out.push_back(first);
    return out;
}

std::vector<int64_t> TimelinePlotter::highestPerPixel(const DeviceModel& m, const std::vector<int64_t>& events, XAxisMode mode,
                                                      double lo, double hi, int pixels)
{
    std::vector<int64_t> out;
    const double scale = pixels / (hi - lo);
    int64_t group = std::numeric_limits<int64_t>::min();
    for (size_t i = 0; i < events.size(); ++i) {
        const int64_t e = events[i];
        const int64_t p = static_cast<int64_t>(std::floor((m.x(e, mode) - lo) * scale));
        if (out.empty() || p != group) {
            out.push_back(e);
            group = p;
        } else if (m.requestedAfter(e) > m.requestedAfter(out.back())) {
            out.back() = e;
        }
    }
    if (!events.empty() && out.back() != events.back())
        out.push_back(events.back()); // the line runs to the last sample
    return out;
}

int TimelinePlotter::columnCount() const
{
    const double dpr = m_plot ? m_plot->bufferDevicePixelRatio() : 1.0;
    return std::max(1, static_cast<int>(std::lround(std::max(1, m_rect->width()) * dpr)));
}

void TimelinePlotter::refresh()
{
    if (!m_model || !m_rect)
        return;
    QCPAxis* x = m_rect->axis(QCPAxis::atBottom);
    const QCPRange r = x->range();
    const int pixels = std::max(1, m_rect->width());

    // A step curve's point at the same value as the point before it draws nothing: drop it
    // (reserved memory is flat for long stretches, and every dashed segment costs).
    auto setSteps = [&](QCPGraph* g, const std::vector<double>& at, const std::vector<int64_t>& events, auto valueAfter) {
        QVector<double> keys, values;
        keys.reserve(static_cast<qsizetype>(events.size()));
        values.reserve(static_cast<qsizetype>(events.size()));
        for (size_t i = 0; i < events.size(); ++i) {
            const double v = static_cast<double>(valueAfter(events[i]));
            if (!values.isEmpty() && values.back() == v && i + 1 < events.size())
                continue;
            keys.push_back(at[i]);
            values.push_back(v);
        }
        g->setData(keys, values, true);
    };
    // The requested line is the top of the stacked areas: it takes its value in each device
    // pixel column from the column events the areas stack (columnEvents(), each column's
    // highest total), so the two never part. Its lowest totals are the areas' haze.
    const ColumnLine line = columnLine(columnEvents(*m_model, m_mode, r.lower, r.upper, columnCount()), r.lower, r.upper);
    setSteps(m_requested, line.keys, line.events, [&](int64_t e) { return m_model->requestedAfter(e); });
    if (!m_pools.empty()) {
        // Each pool's band sits on the one below it (the first on the requested total), so
        // its value is the requested total plus the held bytes of it and the pools before.
        const std::vector<int64_t>& at = line.events;
        const auto& pools = m_model->pools().pools;
        std::vector<int64_t> below(at.size());
        for (size_t i = 0; i < at.size(); ++i)
            below[i] = m_model->requestedAfter(at[i]);
        for (size_t k = 0; k < m_pools.size(); ++k) {
            QVector<double> keys, values;
            keys.reserve(static_cast<qsizetype>(at.size()));
            values.reserve(static_cast<qsizetype>(at.size()));
            for (size_t i = 0; i < at.size(); ++i) {
                below[i] += std::max<int64_t>(0, pools[k].heldAfter(at[i]));
                keys.push_back(line.keys[i]);
                values.push_back(static_cast<double>(below[i]));
            }
            m_pools[k]->setData(keys, values, true);
        }
    }
    const std::vector<int64_t> resEvents = sampleEvents(*m_model, m_model->reserved, m_mode, r.lower, r.upper, pixels);
    std::vector<double> resKeys(resEvents.size());
    for (size_t i = 0; i < resEvents.size(); ++i)
        resKeys[i] = m_model->x(resEvents[i], m_mode);
    setSteps(m_reserved, resKeys, resEvents, [&](int64_t e) { return m_model->reservedAfter(e); });
    // A line of more points than pixels is a column of spikes: a pen wider than one pixel
    // makes the rasterizer stroke and fill an outline of every spike (a second a frame at a
    // million events); one pixel wide it is drawn by the fast cosmetic line path. The
    // requested line, one point a pixel at most, is thin once it turns in most pixels:
    // thicker, its edges alone would cover the top of the areas.
    const int requestedPoints = m_requested->dataCount();
    const int reservedPoints = m_reserved->dataCount();
    for (auto [g, thin] :
         {std::pair{m_requested, requestedPoints * 8 > columnCount()}, std::pair{m_reserved, reservedPoints > pixels}}) {
        QPen pen = g->pen();
        pen.setWidthF(thin ? 1.0 : 1.6);
        g->setPen(pen);
    }
    m_pointsHanded = std::max(requestedPoints, reservedPoints);
}

} // namespace memscope
