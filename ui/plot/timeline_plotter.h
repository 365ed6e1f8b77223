#pragma once

#include "ui/document/device_model.h"
#include "ui/style/plot_theme.h"

#include <QPointer>
#include <qcustomplot.h>

#include <array>
#include <vector>

namespace memscope {

class CategoryAreasLayer;

/*
 * The stacked category areas, the requested total and the reserved line of one device,
 * drawn into an axis rect. The areas are a CategoryAreasLayer (one image column per
 * pixel); the category graphs hold no data and only give the legend its entries. Each
 * refresh() hands the two line graphs only what the visible pixels can show. The requested
 * line is reduced exactly as the areas are (columnEvents(): per device pixel column, the
 * event of the column's highest total, or the state carried into an empty column), one
 * point a column at most, so the top of the stack and the line agree at every pixel and
 * every zoom. The reserved line cuts the visible range into one bucket per pixel column and
 * each bucket contributes the events where the curve is lowest and highest (from the
 * min/max pyramid) and its last event, plus the last event before the range: at most three
 * points per pixel. Every peak stays visible at every zoom. Lines are steps: the state
 * after an event holds until the next one.
 *
 * Private pools (CUDA graphs, MemPool) get a hatched band each, stacked on the requested
 * total at the requested line's points: the bytes the pool reserves but no live allocation
 * of it uses. Between the areas and the reserved line that memory would read as free cache;
 * only the pool's own allocations (a graph's replays) can use it.
 */
class TimelinePlotter {
public:
    // Bottom to top.
    static constexpr std::array<Category, kCategoryCount> kStackOrder{
        Category::Parameter,  Category::OptimizerState, Category::Gradient, Category::Input,
        Category::Activation, Category::Intermediate,   Category::Other};

    TimelinePlotter(QCustomPlot* plot, QCPAxisRect* rect);

    void setModel(const DeviceModel* model, XAxisMode mode, bool attributed);
    void applyTheme(const PlotTheme& theme);
    void refresh();

    const DeviceModel* model() const { return m_model; }
    XAxisMode mode() const { return m_mode; }
    QCPGraph* requestedGraph() const { return m_requested; }
    QCPGraph* reservedGraph() const { return m_reserved; }
    const std::vector<QCPGraph*>& poolGraphs() const { return m_pools; } // one per private pool, stacked in order
    static QString poolLabel(const PoolUsage& pool);
    CategoryAreasLayer* areas() const { return m_areaLayer; }
    int pointsHanded() const { return m_pointsHanded; } // largest graph of the last refresh
    // The device pixel columns the requested line and the areas are reduced to.
    int columnCount() const;
    // Of sampled events, the one of most requested bytes per pixel column (and the last).
    static std::vector<int64_t> highestPerPixel(const DeviceModel& m, const std::vector<int64_t>& events, XAxisMode mode,
                                                double lo, double hi, int pixels);
    // Events sampled for [lo, hi] at `pixels` columns using `pyramid`.
    static std::vector<int64_t> sampleEvents(const DeviceModel& m, const MinMaxPyramid& pyramid, XAxisMode mode, double lo,
                                             double hi, int pixels);

private:
    void clearGraphs();

    QCustomPlot* m_plot;
    QPointer<QCPAxisRect> m_rect;
    const DeviceModel* m_model = nullptr;
    XAxisMode m_mode = XAxisMode::Time;
    std::array<QCPGraph*, kCategoryCount> m_areas{};
    CategoryAreasLayer* m_areaLayer = nullptr;
    QCPGraph* m_requested = nullptr;
    QCPGraph* m_reserved = nullptr;
    std::vector<QCPGraph*> m_pools;
    int m_pointsHanded = 0;
};

} // namespace memscope
