#include "ui/pages/snapshot_tab.h"

#include "ui/pages/allocation_timeline_view.h"
#include "ui/pages/allocator_state_view.h"
#include "ui/plot/category_timeline_view.h"
#include "ui/pages/diagnostics_panel.h"
#include "ui/pages/estimator_panel.h"
#include "ui/pages/flame_panel.h"
#include "ui/pages/what_if_panel.h"
#include "query/point_report.h"
#include "replay/replay.h"
#include "ui/pages/peak_panel.h"
#include "ui/style/text_format.h"

#include <QComboBox>
#include <qcustomplot.h>
#include <QDataStream>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QMap>
#include <QSplitter>
#include <QTabWidget>
#include <QToolButton>
#include <QVBoxLayout>

namespace memscope {

SnapshotTab::SnapshotTab(std::shared_ptr<const Document> document, QWidget* parent)
    : QWidget(parent), m_document(std::move(document)), m_device(new QComboBox(this)), m_axis(new QComboBox(this)),
      m_peakButton(new QToolButton(this)), m_iterations(new QComboBox(this)), m_info(new QLabel(this)),
      m_filterButton(new QToolButton(this)), m_split(new QSplitter(Qt::Vertical, this)),
      m_timeline(new CategoryTimelineView(this)), m_details(new QTabWidget(this)), m_peak(new PeakPanel(this)),
      m_allocations(new AllocationTimelineView(this)), m_allocator(new AllocatorStateView(this)),
      m_diagnostics(new DiagnosticsPanel(this)), m_estimator(new EstimatorPanel(this)), m_whatIf(new WhatIfPanel(this)),
      m_flame(new FlamePanel(this))
{
    for (const DeviceModel& d : m_document->devices)
        m_device->addItem(tr("Device %1").arg(d.device));
    m_device->setEnabled(m_document->devices.size() > 1);
    m_device->setToolTip(tr("The CUDA device whose trace is shown"));
    m_axis->addItem(tr("Time"));
    m_axis->addItem(tr("Event index"));
    m_axis->setToolTip(tr("X axis: real time from time_us, or the order of the trace events (T)"));
    m_peakButton->setText(tr("Global peak"));
    m_peakButton->setToolTip(tr("Select the global peak (P)"));
    m_iterations->setToolTip(tr("Select an iteration's peak"));
    // Sized by a fixed length, not by measuring every item: a long run has thousands of
    // iterations, and shaping their texts cost ~0.1 s at first show.
    m_iterations->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_iterations->setMinimumContentsLength(16);
    m_info->setTextInteractionFlags(Qt::TextSelectableByMouse);
    // Wraps instead of setting the window's minimum width (1000 px must fit).
    m_info->setWordWrap(true);
    m_info->setMinimumWidth(120);

    auto* bar = new QHBoxLayout;
    bar->setContentsMargins(6, 4, 6, 0);
    bar->addWidget(m_device);
    bar->addWidget(new QLabel(tr("X axis"), this));
    bar->addWidget(m_axis);
    bar->addWidget(m_peakButton);
    bar->addWidget(m_iterations);
    bar->addSpacing(12);
    bar->addWidget(m_info, 1);
    m_filterButton->setVisible(false);
    m_filterButton->setAutoRaise(false);
    m_filterButton->setToolTip(tr("The allocations shown are those under this flame graph frame; click to clear"));
    bar->addWidget(m_filterButton);

    m_details->addTab(m_peak, tr("Breakdown at selected time"));
    m_details->addTab(m_allocations, tr("Allocations timeline"));
    m_details->addTab(m_allocator, tr("Allocator state"));
    m_details->addTab(m_diagnostics, tr("Diagnostics"));
    m_details->addTab(m_estimator, tr("Estimator"));
    m_details->addTab(m_whatIf, tr("What-if"));
    // the estimator's what-if follows the what-if panel's precision and optimizer
    connect(m_whatIf, &WhatIfPanel::changesEdited, this, [this] {
        const ModelChanges c = m_whatIf->changes();
        m_estimator->setWhatIfChanges(c.precision, c.optimizer);
    });
    m_details->addTab(m_flame, tr("Flame graph"));
    m_details->setDocumentMode(true);
    m_split->addWidget(m_timeline);
    m_split->addWidget(m_details);
    m_split->setStretchFactor(0, 5);
    m_split->setStretchFactor(1, 4);
    m_split->setChildrenCollapsible(false);
    m_split->setSizes({560, 420});
    m_split->setObjectName(QStringLiteral("tabSplit"));

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    layout->addLayout(bar);
    layout->addWidget(m_split, 1);

    connect(m_device, &QComboBox::currentIndexChanged, this, [this](int i) {
        if (i >= 0)
            setDevice(static_cast<size_t>(i));
    });
    connect(m_axis, &QComboBox::currentIndexChanged, this,
            [this](int i) { setXAxisMode(i == 1 ? XAxisMode::EventIndex : XAxisMode::Time); });
    connect(m_peakButton, &QToolButton::clicked, this, &SnapshotTab::goToPeak);
    connect(m_peak, &PeakPanel::goToPeakRequested, this, &SnapshotTab::goToPeak);
    connect(m_iterations, &QComboBox::activated, this, [this](int i) {
        const QVariant e = m_iterations->itemData(i);
        if (e.isValid()) {
            setSelectedEvent(e.toLongLong());
            m_timeline->scrollToEvent(e.toLongLong());
        }
    });
    connect(m_timeline, &CategoryTimelineView::eventClicked, this, [this](qint64 e) { setSelectedEvent(e); });
    connect(m_timeline, &CategoryTimelineView::rangeSelected, this, [this](qint64 first, qint64 last) {
        setRange(first, last);
        if (auto r = m_timeline->rangeSummary())
            emit statusMessage(tr("Range peak %1 at event %2; +%3 allocated, −%4 freed")
                                   .arg(bytesText(r->peakBytes), countText(r->peakEvent), bytesText(r->allocatedBytes),
                                        bytesText(r->freedBytes)));
    });
    connect(m_timeline, &CategoryTimelineView::rangeCleared, this, &SnapshotTab::clearRange);
    connect(m_filterButton, &QToolButton::clicked, this, &SnapshotTab::clearFrameFilter);
    connect(m_flame, &FlamePanel::frameFilterRequested, this, &SnapshotTab::setFrameFilter);
    connect(m_timeline, &CategoryTimelineView::xRangeChanged, this, [this](double lo, double hi) {
        if (m_syncing)
            return;
        m_syncing = true;
        m_allocations->setXRange(lo, hi);
        m_syncing = false;
    });
    connect(m_allocations, &AllocationTimelineView::xRangeChanged, this, [this](double lo, double hi) {
        if (m_syncing)
            return;
        m_syncing = true;
        m_timeline->setXRange(lo, hi);
        m_syncing = false;
    });
    connect(m_diagnostics, &DiagnosticsPanel::eventActivated, this, &SnapshotTab::showFindingEvent);
    connect(m_diagnostics, &DiagnosticsPanel::allocationActivated, this, &SnapshotTab::showAllocation);
    connect(m_diagnostics, &DiagnosticsPanel::stackActivated, this, &SnapshotTab::showCallSite);
    setDevice(m_document->analysis ? m_document->analysis->focusDevice() : 0);
}

QString SnapshotTab::path() const { return QString::fromStdString(m_document->path); }

void SnapshotTab::setDevice(size_t index)
{
    if (index >= m_document->devices.size())
        return;
    m_deviceIndex = index;
    if (m_device->currentIndex() != static_cast<int>(index)) {
        const QSignalBlocker block(m_device);
        m_device->setCurrentIndex(static_cast<int>(index));
    }
    m_timeline->setDocument(m_document, index);
    m_allocations->setDocument(m_document, index);
    m_peak->setDocument(m_document, index);
    m_allocator->setDocument(m_document, index);
    m_rangeFirst = m_rangeLast = -1;
    m_details->setTabText(static_cast<int>(DetailTab::Breakdown), tr("Breakdown at selected time"));
    m_filterText.clear();
    m_filterButton->setVisible(false);
    m_filterMask.clear();
    updateFilterCurve();
    m_peak->clearRange();
    m_peak->setStackFilter({}, QString());
    m_flame->setDocument(m_document, index);
    applyStagedParts();
    m_event = peakEvent(*deviceModel().replay);
    updateInfo();
    emit selectedEventChanged(m_event);
}

void SnapshotTab::setDocument(std::shared_ptr<const Document> document)
{
    if (!document || !document->analysis || document->analysis->replay != m_document->analysis->replay)
        return;
    m_document = std::move(document);
    m_timeline->updateDocument(m_document);
    m_allocations->updateDocument(m_document);
    m_peak->updateDocument(m_document);
    m_allocator->updateDocument(m_document);
    m_flame->updateDocument(m_document);
    applyStagedParts();
    updateInfo();
}

void SnapshotTab::setGrownDocument(std::shared_ptr<const Document> document)
{
    if (!document || !document->analysis || document->devices.empty())
        return;
    const bool devicesChanged = document->devices.size() != m_document->devices.size();
    m_document = std::move(document);
    if (devicesChanged) {
        QSignalBlocker block(m_device);
        m_device->clear();
        for (const DeviceModel& d : m_document->devices)
            m_device->addItem(tr("Device %1").arg(d.device));
        m_device->setEnabled(m_document->devices.size() > 1);
        m_deviceIndex = std::min(m_deviceIndex, m_document->devices.size() - 1);
        m_device->setCurrentIndex(static_cast<int>(m_deviceIndex));
    }
    m_timeline->updateDocument(m_document);
    m_allocations->updateDocument(m_document);
    m_peak->updateDocument(m_document, true);
    m_allocator->updateDocument(m_document);
    m_flame->updateDocument(m_document);
    applyStagedParts();
    updateInfo();
}

void SnapshotTab::applyStagedParts()
{
    const size_t index = m_deviceIndex;
    if (m_document->diagnosed())
        m_diagnostics->setDiagnostics(m_document->diagnosis(), m_document->analysis->replay, m_document->frames().get(), index);
    else
        m_diagnostics->clear(m_document->attributed() ? tr("Diagnosing…") : tr("Categorising…"));
    if (index < m_document->training().size())
        m_estimator->setMeasurement(m_document->training()[index]);
    else
        m_estimator->clear(m_document->diagnosed() ? QString() : tr("Measuring the run…"));
    if (m_document->attribution())
        m_whatIf->setAttribution(m_document->attribution(), index);
    else
        m_whatIf->clear();
    const DeviceModel& m = deviceModel();
    m_iterations->clear();
    m_iterations->addItem(m.attribution ? tr("Iteration peaks…") : tr("Categorising…"));
    for (size_t i = 0; m.attribution && i < m.attribution->iterations.size(); ++i) {
        const IterationPeak& p = m.attribution->iterations[i].peak;
        if (p.event.valid())
            m_iterations->addItem(tr("Iteration %1: %2").arg(i + 1).arg(bytesText(p.bytes)),
                                  QVariant::fromValue<qlonglong>(p.event.value));
    }
    m_iterations->setEnabled(m_iterations->count() > 1);
}

void SnapshotTab::updateInfo()
{
    const DeviceModel& m = deviceModel();
    QString text = tr("%1 events · %2 allocations · peak %3 requested, %4 reserved")
                       .arg(countText(m.eventCount()), countText(static_cast<int64_t>(m.replay->allocations.size())),
                            bytesText(m.replay->peakRequested.bytes), bytesText(m.replay->peakReserved.bytes));
    if (!m.replay->oomEvents.empty())
        text += tr(" · <b>%1 out-of-memory event(s)</b>").arg(m.replay->oomEvents.size());
    if (m.replay->truncated)
        text += tr(" · <i>trace truncated: %1</i>").arg(QString::fromStdString(m.replay->truncationReason).toHtmlEscaped());
    m_info->setText(text);
}

void SnapshotTab::setXAxisMode(XAxisMode mode)
{
    m_mode = mode;
    if (m_axis->currentIndex() != (mode == XAxisMode::EventIndex ? 1 : 0)) {
        const QSignalBlocker block(m_axis);
        m_axis->setCurrentIndex(mode == XAxisMode::EventIndex ? 1 : 0);
    }
    m_syncing = true;
    m_allocations->setXAxisMode(mode);
    m_timeline->setXAxisMode(mode);
    m_syncing = false;
    const auto [lo, hi] = m_timeline->xRange();
    m_allocations->setXRange(lo, hi);
    updateFilterCurve();
    emit xAxisModeChanged(mode);
}

void SnapshotTab::setSelectedEvent(int64_t event)
{
    m_event = event;
    if (hasRange()) // a time chosen (clicked, the peak, a finding): the panels go back to a point
        m_timeline->clearRangeSelection();
    m_timeline->setCursorEvent(event);
    m_peak->setEvent(event);
    m_allocator->setEvent(event);
    m_flame->setSelectedEvent(event);
    emit selectedEventChanged(event);
}

void SnapshotTab::setRange(int64_t firstEvent, int64_t lastEvent)
{
    m_rangeFirst = std::min(firstEvent, lastEvent);
    m_rangeLast = std::max(firstEvent, lastEvent);
    m_peak->setRange(m_rangeFirst, m_rangeLast);
    m_flame->setRange(m_rangeFirst, m_rangeLast);
    m_details->setTabText(static_cast<int>(DetailTab::Breakdown), tr("Breakdown of the range"));
    if (!m_timeline->rangeSummary() || m_timeline->rangeSummary()->firstEvent != m_rangeFirst ||
        m_timeline->rangeSummary()->lastEvent != m_rangeLast) {
        const QSignalBlocker block(m_timeline);
        m_timeline->selectRange(m_rangeFirst, m_rangeLast);
    }
}

void SnapshotTab::clearRange()
{
    if (m_rangeFirst < 0)
        return;
    m_rangeFirst = m_rangeLast = -1;
    m_peak->clearRange();
    m_flame->clearRange();
    m_details->setTabText(static_cast<int>(DetailTab::Breakdown), tr("Breakdown at selected time"));
    if (m_timeline->rangeSummary()) {
        const QSignalBlocker block(m_timeline);
        m_timeline->clearRangeSelection();
    }
}

void SnapshotTab::setFrameFilter(int node)
{
    const std::vector<uint8_t> mask = node > 0 ? m_flame->stacksUnder(node) : std::vector<uint8_t>{};
    if (mask.empty()) {
        clearFrameFilter();
        return;
    }
    m_filterText = m_flame->nodeText(node);
    m_filterButton->setText(tr("filter: %1 ×").arg(m_filterText));
    m_filterButton->setVisible(true);
    m_peak->setStackFilter(mask, m_filterText);
    m_allocations->highlightStacks(mask, tr("under %1").arg(m_filterText));
    m_filterMask = mask;
    updateFilterCurve();
    emit statusMessage(tr("Allocations filtered to the stacks under %1").arg(m_filterText));
}

QCPGraph* SnapshotTab::frameFilterGraph() const { return m_filterGraph.data(); }

// The bytes of the filter's allocations after each event where they change, as a step line over
// the category areas.
void SnapshotTab::updateFilterCurve()
{
    QCustomPlot* plot = m_timeline->plot();
    if (m_filterMask.empty()) {
        if (m_filterGraph) {
            plot->removeGraph(m_filterGraph);
            plot->replot(QCustomPlot::rpQueuedReplot);
        }
        return;
    }
    if (!m_filterGraph) {
        m_filterGraph = plot->addGraph(m_timeline->mainRect()->axis(QCPAxis::atBottom),
                                       m_timeline->mainRect()->axis(QCPAxis::atLeft));
        m_filterGraph->removeFromLegend();
        m_filterGraph->setLineStyle(QCPGraph::lsStepLeft);
        m_filterGraph->setPen(QPen(QColor(170, 0, 170), 2));
        m_filterGraph->setBrush(QColor(170, 0, 170, 40));
        m_filterGraph->setSelectable(QCP::stNone);
    }
    const DeviceModel& m = deviceModel();
    const DeviceReplay& r = *m.replay;
    const size_t none = m_filterMask.size() - 1;
    int64_t baseline = 0;
    std::vector<std::pair<int64_t, int64_t>> changes; // event, delta
    for (const Allocation& a : r.allocations) {
        const size_t k = a.stack.valid() ? static_cast<size_t>(a.stack.value) : none;
        if (k >= m_filterMask.size() || !m_filterMask[k])
            continue;
        const int64_t size = static_cast<int64_t>(a.size);
        if (a.allocEvent.valid())
            changes.emplace_back(a.allocEvent.value, size);
        else
            baseline += size;
        if (a.freeEvent.valid())
            changes.emplace_back(a.freeEvent.value, -size);
    }
    std::sort(changes.begin(), changes.end());
    QVector<double> keys, values;
    keys.reserve(static_cast<qsizetype>(changes.size()) + 2);
    values.reserve(keys.capacity());
    int64_t bytes = baseline;
    keys << m.x(0, m_mode);
    values << static_cast<double>(baseline);
    for (size_t i = 0; i < changes.size(); ++i) {
        bytes += changes[i].second;
        if (i + 1 < changes.size() && changes[i + 1].first == changes[i].first)
            continue;
        keys << m.x(changes[i].first, m_mode);
        values << static_cast<double>(bytes);
    }
    keys << m.x(std::max<int64_t>(m.eventCount() - 1, 0), m_mode);
    values << static_cast<double>(bytes);
    m_filterGraph->setName(tr("Filter: %1").arg(m_filterText));
    m_filterGraph->setData(keys, values); // time_us may step back: let QCustomPlot sort
    plot->replot(QCustomPlot::rpQueuedReplot);
}

void SnapshotTab::clearFrameFilter()
{
    const bool had = !m_filterText.isEmpty();
    m_filterText.clear();
    m_filterButton->setVisible(false);
    m_filterMask.clear();
    updateFilterCurve();
    if (!had)
        return;
    m_peak->setStackFilter({}, QString());
    m_allocations->highlightStacks({}, QString());
    m_flame->zoomToPath({});
}

void SnapshotTab::goToPeak()
{
    const int64_t e = peakEvent(*deviceModel().replay);
    setSelectedEvent(e);
    m_timeline->scrollToEvent(e);
}

void SnapshotTab::showDetail(DetailTab tab) { m_details->setCurrentIndex(static_cast<int>(tab)); }

int64_t SnapshotTab::eventShowing(const Allocation& a) const
{
    if (const Diagnostic* d = m_diagnostics->currentFinding(); d && d->event >= 0 && a.activeAfter(d->event))
        return d->event;
    if (a.activeAfter(m_event))
        return m_event;
    if (const int64_t pe = peakEvent(*deviceModel().replay); a.activeAfter(pe))
        return pe;
    return a.allocEvent.valid() ? a.allocEvent.value : -1;
}

void SnapshotTab::showFindingEvent(int64_t event)
{
    setSelectedEvent(event);
    m_timeline->scrollToEvent(event);
}

void SnapshotTab::showAllocation(AllocationId id)
{
    const DeviceReplay& r = *deviceModel().replay;
    if (!id.valid() || static_cast<size_t>(id.value) >= r.allocations.size())
        return;
    showFindingEvent(eventShowing(r.allocation(id)));
    m_allocations->selectAllocation(id);
    showDetail(DetailTab::Allocations);
}

void SnapshotTab::showCallSite(StackId stack)
{
    const DeviceReplay& r = *deviceModel().replay;
    m_allocations->highlightStack(stack);
    AllocationId largest;
    if (const Diagnostic* d = m_diagnostics->currentFinding())
        for (AllocationId id : d->allocations)
            if (r.allocation(id).stack == stack) {
                largest = id;
                break;
            }
    if (largest.valid()) {
        showFindingEvent(eventShowing(r.allocation(largest)));
        m_allocations->selectAllocation(largest);
    }
    showDetail(DetailTab::Allocations);
    emit statusMessage(
        tr("%1 allocations from this call site highlighted in the allocations timeline (Ctrl+4: back to the diagnostics)")
            .arg(countText(m_allocations->matchCount())));
}

// The vertical split, the detail tab and every named splitter inside the tab.
QByteArray SnapshotTab::saveLayout() const
{
    QByteArray out;
    QDataStream s(&out, QIODevice::WriteOnly);
    s << m_split->saveState() << m_details->currentIndex();
    QMap<QString, QByteArray> inner;
    for (const QSplitter* split : findChildren<QSplitter*>())
        if (split != m_split && !split->objectName().isEmpty())
            inner.insert(split->objectName(), split->saveState());
    s << inner;
    return out;
}

void SnapshotTab::restoreLayout(const QByteArray& state)
{
    if (state.isEmpty())
        return;
    QDataStream s(state);
    QByteArray split;
    int tab = 0;
    s >> split >> tab;
    m_split->restoreState(split);
    if (tab >= 0 && tab < m_details->count())
        m_details->setCurrentIndex(tab);
    QMap<QString, QByteArray> inner;
    if (!s.atEnd())
        s >> inner;
    for (QSplitter* child : findChildren<QSplitter*>())
        if (auto it = inner.constFind(child->objectName()); child != m_split && it != inner.constEnd())
            child->restoreState(*it);
}

} // namespace memscope
