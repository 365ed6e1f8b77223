#pragma once

#include "ui/plot/band_layer.h"
#include "query/range_summary.h"
#include "ui/document/document.h"
#include "ui/style/plot_theme.h"

#include <QRgb>
#include <QWidget>

#include <memory>
#include <optional>

class QCustomPlot;
class QCPAxisRect;
class QCPRange;
class QCPItemStraightLine;
class QCPItemRect;
class QCPItemText;
class QCPItemTracer;
class QMouseEvent;

namespace memscope {

class ReplotGate;

class PeakMarkerLayer;
class TimelinePlotter;

/*
 * The main view: memory over time as stacked areas per category, with the requested total
 * and the reserved line on top, private pools' held memory as bands above the requested
 * total, phase, annotation and (where recorded) user_metadata lanes above, iteration boundaries,
 * the global peak and each iteration's peak marked, and a cursor at the selected time.
 * Wheel zooms, drag pans, Shift+drag (or right-drag) selects a range and shows its peak
 * and totals, double-click resets, a click selects a time, hovering shows the numbers.
 */
class CategoryTimelineView : public QWidget {
    Q_OBJECT
public:
    explicit CategoryTimelineView(QWidget* parent = nullptr);
    ~CategoryTimelineView() override;

    void setDocument(std::shared_ptr<const Document> document, size_t deviceIndex);
    // A later stage of the same analysis: draws what it adds (categories, phases, iteration
    // peaks) and keeps the device, the zoom, the cursor and the range selection.
    void updateDocument(std::shared_ptr<const Document> document);
    void setXAxisMode(XAxisMode mode);
    XAxisMode xAxisMode() const { return m_mode; }
    void setCursorEvent(int64_t event);
    int64_t cursorEvent() const { return m_cursorEvent; }
    void resetZoom();
    void zoomBy(double factor); // < 1 zooms in, around the centre
    void panBy(double fraction); // of the visible width
    void setXRange(double lower, double upper);
    std::pair<double, double> xRange() const;
    void scrollToEvent(int64_t event); // scroll so that the event is visible
    void selectRange(int64_t firstEvent, int64_t lastEvent);
    void clearRangeSelection();

    QCustomPlot* plot() const { return m_plot; }
    QCPAxisRect* mainRect() const { return m_main; }
    const TimelinePlotter* plotter() const { return m_plotter.get(); }
    const DeviceModel* model() const;
    QString peakLabelText() const;
    // What stands in the phase lanes while the document has no categories yet ("Categorising…"),
    // empty once it has them.
    QString pendingText() const;
    QString hoverText(int64_t event) const; // what the tooltip says at an event (rich text)
    const BandLayer* laneBands() const { return m_laneBands; }
    const BandLayer* iterationLines() const { return m_iterationLines; }
    // What the iteration lines' labels keep clear of: the peak and range labels, the
    // iterations' peak labels and circles and the peak's line (pixels).
    std::vector<QRectF> labelObstacles() const;
    const PeakMarkerLayer* peakMarkers() const { return m_peakMarkers; }
    QString bandTooltip(const BandLayer::Band& band) const; // a phase or annotation band's tooltip (rich text)
    std::optional<RangeSummary> rangeSummary() const { return m_range; }
    int pointsHanded() const;
    QSize minimumSizeHint() const override { return {400, 260}; }

signals:
    void eventClicked(qint64 event);
    void rangeSelected(qint64 firstEvent, qint64 lastEvent);
    void rangeCleared();
    void xRangeChanged(double lower, double upper);

protected:
    void changeEvent(QEvent* event) override;

private:
    void rebuild();
    void rebuildBands();
    void setLaneRows(int rows);
    void rebuildMarkers();
    void applyTheme();
    void onAfterLayout();
    void onRangeChanged(const QCPRange& range);
    void onMousePress(QMouseEvent* event);
    void onMouseMove(QMouseEvent* event);
    void onMouseRelease(QMouseEvent* event);
    void onSelectionAccepted(const QRect& rect);
    void placeLabels();
    QRectF peakLabelRect() const; // in pixels; empty when the label is hidden
    void updateRangeItems();
    QCPRange fullRange() const;

    QCustomPlot* m_plot;
    ReplotGate* m_replot;
    QCPAxisRect* m_main;
    QCPAxisRect* m_lanes;
    std::unique_ptr<TimelinePlotter> m_plotter;
    BandLayer* m_laneBands = nullptr;
    BandLayer* m_iterationLines = nullptr;
    QCPItemStraightLine* m_cursor = nullptr;
    QCPItemStraightLine* m_peakLine = nullptr;
    QCPItemTracer* m_peakMarker = nullptr;
    QCPItemText* m_peakLabel = nullptr;
    std::vector<QCPItemTracer*> m_iterationMarkers; // with labels (few iterations)
    PeakMarkerLayer* m_peakMarkers = nullptr; // without (many)
    std::vector<QCPItemText*> m_iterationLabels;
    QCPItemRect* m_rangeRect = nullptr;
    QCPItemText* m_rangeLabel = nullptr;
    QCPItemText* m_pendingLabel = nullptr; // in the lanes, until the categories arrive

    std::shared_ptr<const Document> m_document;
    size_t m_deviceIndex = 0;
    XAxisMode m_mode = XAxisMode::Time;
    int64_t m_cursorEvent = -1;
    std::optional<RangeSummary> m_range;
    PlotTheme m_theme;
    QPoint m_pressPos;
    bool m_pressed = false;
    bool m_selecting = false;
    bool m_clamping = false;
    double m_lastLower = 0, m_lastUpper = 0;
    int m_lastWidth = 0;
};

} // namespace memscope
