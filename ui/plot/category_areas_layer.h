#pragma once

#include "ui/document/device_model.h"

#include <QColor>
#include <QImage>
#include <QPointer>
#include <qcustomplot.h>

#include <array>
#include <utility>
#include <vector>

namespace memscope {

/*
 * The stacked category areas of the timeline, painted as one image column per device
 * pixel: each column stacks the categories at its column event (columnEvents(): the
 * highest point among the events in that pixel). A vector polygon per category would have
 * thousands of spiky edges per scanline once several events share a pixel, which costs
 * the rasterizer tens of milliseconds a frame; the columns cost categories × pixels,
 * whatever the trace length, and show exactly the same shape. Each category's top edge
 * gets a darker pixel row so neighbouring areas stay distinct.
 *
 * Where a column holds events of different totals, the rows between its lowest and its
 * highest total are tinted with the haze colour: the range the total swept inside that
 * pixel, drawn here (one blend per pixel) rather than as a vertical line per pixel over the
 * areas, which hid them.
 *
 * The columns are those of the requested line (TimelinePlotter::columnCount(), the same
 * columnEvents()), so the top of the stack is the line at every pixel.
 *
 * Zoomed out, reading a column's categories is seven cache misses (one per curve of the
 * trace's length, ~3 ms a frame at 10M events). A pan moves the columns by a pixel or two
 * and most keep their event, so the values read for one frame are kept for the next.
 */
class CategoryAreasLayer : public QCPLayerable {
    Q_OBJECT
public:
    CategoryAreasLayer(QCustomPlot* plot, QCPAxisRect* rect);

    void setModel(const DeviceModel* model, XAxisMode mode, std::vector<Category> stackOrder);
    void setBackground(const QColor& background);
    void setHaze(const QColor& haze); // with alpha; transparent: none
    const std::vector<int64_t>& columns() const { return m_columns; }
    const std::vector<int64_t>& lowest() const { return m_lowest; }
    const QImage& image() const { return m_image; }
    double lastRenderMs() const { return m_lastRenderMs; }

protected:
    void applyDefaultAntialiasingHint(QCPPainter* painter) const override;
    void draw(QCPPainter* painter) override;
    QRect clipRect() const override;

private:
    void render(const QRect& area, double columnDpr, double rowDpr);

    QPointer<QCPAxisRect> m_rect;
    const DeviceModel* m_model = nullptr;
    XAxisMode m_mode = XAxisMode::Time;
    std::vector<Category> m_order;
    QColor m_background = Qt::white;
    QColor m_haze = Qt::transparent;
    bool m_valid = false;
    QImage m_image;
    QSize m_size;
    double m_dpr = 1;
    QCPRange m_x, m_y;
    std::vector<int64_t> m_columns;
    std::vector<int64_t> m_lowest; // per column, the event of the fewest requested bytes
    std::vector<int64_t> m_valueEvents; // the last frame's column events, ascending, once each
    std::vector<int64_t> m_values; // their categories' bytes, m_order.size() per event
    std::pair<const DeviceAttribution*, int64_t> m_valuesFrom{nullptr, 0};
    double m_lastRenderMs = 0;
};

} // namespace memscope
