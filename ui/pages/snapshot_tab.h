#pragma once

#include "ui/document/document.h"

#include <QPointer>
#include <QWidget>

#include <memory>

class QCPGraph;
class QComboBox;
class QLabel;
class QSplitter;
class QTabWidget;
class QToolButton;

namespace memscope {

class AllocationTimelineView;
class AllocatorStateView;
class CategoryTimelineView;
class DiagnosticsPanel;
class EstimatorPanel;
class FlamePanel;
class WhatIfPanel;
class PeakPanel;

// One opened snapshot: a device selector and axis toggle, the category timeline on top
// and, below it, the peak panel, the allocation timeline and the allocator view, all
// following the time selected in the timeline (the global peak until one is clicked), the
// diagnostics (activating a finding's moment, call site or allocation selects it in the
// timelines) and the training-memory estimator.
//
// A tab opens on the loader's first document, the Replayed stage's (curves, no categories),
// and setDocument() hands it each later stage of the same analysis: the views fill in what the
// stage adds and keep what the user did meanwhile (device, zoom, selected time, range, open
// detail). Until then the parts that need categories or findings say "Categorising…" or
// "Diagnosing…".
class SnapshotTab : public QWidget {
    Q_OBJECT
public:
    explicit SnapshotTab(std::shared_ptr<const Document> document, QWidget* parent = nullptr);

    // A later stage of the same analysis (same replay); ignored when it is another file's.
    void setDocument(std::shared_ptr<const Document> document);
    // The same recording grown (a live tab's update): more events, maybe more devices; the
    // views keep the device, zoom, selected time and range as setDocument() does.
    void setGrownDocument(std::shared_ptr<const Document> document);

    const Document& document() const { return *m_document; }
    std::shared_ptr<const Document> documentPtr() const { return m_document; }
    QString path() const;
    void setDevice(size_t index);
    size_t deviceIndex() const { return m_deviceIndex; }
    const DeviceModel& deviceModel() const { return m_document->devices[m_deviceIndex]; }
    void setXAxisMode(XAxisMode mode);
    XAxisMode xAxisMode() const { return m_mode; }
    void setSelectedEvent(int64_t event);
    int64_t selectedEvent() const { return m_event; }
    void goToPeak();

    CategoryTimelineView* timeline() const { return m_timeline; }
    AllocationTimelineView* allocations() const { return m_allocations; }
    AllocatorStateView* allocator() const { return m_allocator; }
    PeakPanel* peakPanel() const { return m_peak; }
    DiagnosticsPanel* diagnostics() const { return m_diagnostics; }
    EstimatorPanel* estimator() const { return m_estimator; }
    WhatIfPanel* whatIf() const { return m_whatIf; }
    FlamePanel* flame() const { return m_flame; }
    // The detail tabs in order; detailTabs()->setCurrentIndex(int(DetailTab::…)).
    enum class DetailTab { Breakdown, Allocations, Allocator, Diagnostics, Estimator, WhatIf, Flame };
    void showDetail(DetailTab tab);
    // What the evidence of a finding leads to: the time, and the allocation(s) highlighted.
    void showFindingEvent(int64_t event);
    void showAllocation(AllocationId id);
    void showCallSite(StackId stack);
    QTabWidget* detailTabs() const { return m_details; }
    // The flame graph's frame filter: the breakdown's allocations and call sites and the
    // allocations timeline show only the allocations whose stack lies under the flame graph's
    // node; "filter: <frame> ×" above the details clears it. Node 0 clears.
    void setFrameFilter(int node);
    void clearFrameFilter();
    QString frameFilterText() const { return m_filterText; }
    QToolButton* frameFilterButton() const { return m_filterButton; }
    // The filtered allocations' bytes over time, drawn on the category timeline (null: no filter).
    QCPGraph* frameFilterGraph() const;
    // The timeline's range selection, which the breakdown and the flame graph follow.
    void setRange(int64_t firstEvent, int64_t lastEvent);
    void clearRange();
    bool hasRange() const { return m_rangeFirst >= 0; }
    QByteArray saveLayout() const;
    void restoreLayout(const QByteArray& state);

signals:
    void selectedEventChanged(qint64 event);
    void xAxisModeChanged(memscope::XAxisMode mode);
    void statusMessage(const QString& text);

private:
    // Hands the document's parts for the current device to the views that need more than the replay.
    void applyStagedParts();
    void updateInfo();
    void updateFilterCurve();
    int64_t eventShowing(const Allocation& a) const;

    std::shared_ptr<const Document> m_document;
    size_t m_deviceIndex = 0;
    XAxisMode m_mode = XAxisMode::Time;
    int64_t m_event = -1;
    bool m_syncing = false;
    int64_t m_rangeFirst = -1, m_rangeLast = -1;
    QString m_filterText;
    std::vector<uint8_t> m_filterMask;
    QPointer<QCPGraph> m_filterGraph;

    QComboBox* m_device;
    QComboBox* m_axis;
    QToolButton* m_peakButton;
    QComboBox* m_iterations;
    QLabel* m_info;
    QToolButton* m_filterButton;
    QSplitter* m_split;
    CategoryTimelineView* m_timeline;
    QTabWidget* m_details;
    PeakPanel* m_peak;
    AllocationTimelineView* m_allocations;
    AllocatorStateView* m_allocator;
    DiagnosticsPanel* m_diagnostics;
    EstimatorPanel* m_estimator;
    WhatIfPanel* m_whatIf;
    FlamePanel* m_flame;
};

} // namespace memscope
