#include "ui/pages/allocation_timeline_view.h"

#include "ui/plot/allocation_bands_layer.h"
#include "ui/plot/byte_axis_ticker.h"
#include "ui/plot/column_events.h"
#include "query/point_report.h"
#include "ui/style/plot_theme.h"
#include "ui/plot/replot_gate.h"
#include "ui/pages/stack_view.h"
#include "ui/style/text_format.h"
#include "ui/plot/time_axis_ticker.h"
#include "ui/plot/timeline_plotter.h"

#include <QComboBox>
#include <QEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QSplitter>
#include <QToolTip>
#include <QVBoxLayout>
#include <qcustomplot.h>

#include <algorithm>

namespace memscope {

AllocationTimelineView::AllocationTimelineView(QWidget* parent)
    : QWidget(parent), m_plot(new QCustomPlot(this)), m_replot(new ReplotGate(m_plot)), m_search(new QLineEdit(this)),
      m_matchLabel(new QLabel(this)), m_colorMode(new QComboBox(this)), m_details(new QLabel(this)), m_stack(new StackView(this))
{
    auto* top = new QHBoxLayout;
    top->setContentsMargins(6, 4, 6, 0);
    m_search->setPlaceholderText(tr("Search stack frames (file, function) or an address (0x…)"));
    m_search->setClearButtonEnabled(true);
    m_search->setMinimumWidth(320);
    top->addWidget(m_search, 2);
    top->addWidget(m_matchLabel, 1);
    top->addStretch();
    top->addWidget(new QLabel(tr("Colour by"), this));
    m_colorMode->addItem(tr("Category"));
    m_colorMode->addItem(tr("Allocation"));
    top->addWidget(m_colorMode);

    auto* side = new QWidget(this);
    auto* sideLayout = new QVBoxLayout(side);
    sideLayout->setContentsMargins(6, 0, 0, 0);
    m_details->setWordWrap(true);
    m_details->setTextFormat(Qt::RichText);
    m_details->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_details->setAlignment(Qt::AlignTop | Qt::AlignLeft);
    sideLayout->addWidget(m_details);
    sideLayout->addWidget(m_stack, 1);

    auto* split = new QSplitter(Qt::Horizontal, this);
    split->setObjectName(QStringLiteral("allocationsSplit"));
    split->setObjectName(QStringLiteral("allocationSplitter"));
    split->addWidget(m_plot);
    split->addWidget(side);
    split->setStretchFactor(0, 4);
    split->setStretchFactor(1, 1);
    split->setSizes({900, 320});

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(4);
    layout->addLayout(top);
    layout->addWidget(split, 1);

    m_plot->setPlottingHints(QCP::phCacheLabels);
    m_plot->setNoAntialiasingOnDrag(true);
    m_plot->axisRect()->setRangeDrag(Qt::Horizontal);
    m_plot->axisRect()->setRangeZoom(Qt::Horizontal);
    m_plot->axisRect()->setRangeZoomFactor(0.85);
    m_plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    m_plot->yAxis->setTicker(QSharedPointer<ByteAxisTicker>(new ByteAxisTicker));
    m_plot->yAxis->setLabel(tr("Live allocations, stacked"));
    m_plot->addLayer(QStringLiteral("bands"), m_plot->layer(QStringLiteral("grid")), QCustomPlot::limAbove);
    m_bands = new AllocationBandsLayer(m_plot, m_plot->axisRect());
    m_bands->setLayer(QStringLiteral("bands"));
    m_plot->setMouseTracking(true);

    connect(m_search, &QLineEdit::textChanged, this, &AllocationTimelineView::runSearch);
    connect(m_colorMode, &QComboBox::currentIndexChanged, this, [this](int i) {
        m_bands->setColorMode(i == 1 ? AllocationBandsLayer::ColorMode::Allocation : AllocationBandsLayer::ColorMode::Category);
        m_plot->replot();
    });
    connect(m_plot->xAxis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), this, [this](const QCPRange& r) {
        const DeviceModel* m = m_document ? &m_document->devices[m_deviceIndex] : nullptr;
        if (m) {
            const double span = m->xMax(m_mode) - m->xMin(m_mode);
            const QCPRange full(m->xMin(m_mode) - span * 0.01, m->xMax(m_mode) + span * 0.01);
            QCPRange b = r;
            if (b.size() > full.size())
                b = full;
            if (b.lower < full.lower)
                b = QCPRange(full.lower, full.lower + b.size());
            if (b.upper > full.upper)
                b = QCPRange(full.upper - b.size(), full.upper);
            if (b != r) {
                m_plot->xAxis->setRange(b);
                return;
            }
        }
        if (!m_syncing)
            emit xRangeChanged(r.lower, r.upper);
    });
    connect(m_plot, &QCustomPlot::afterLayout, this, [this] {
        const QCPRange r = m_plot->xAxis->range();
        if (r.lower != m_lastLower || r.upper != m_lastUpper || m_plot->axisRect()->width() != m_lastWidth) {
            refreshTotalLine();
            m_lastLower = r.lower;
            m_lastUpper = r.upper;
            m_lastWidth = m_plot->axisRect()->width();
        }
    });
    connect(m_plot, &QCustomPlot::mousePress, this, &AllocationTimelineView::onMousePress);
    connect(m_plot, &QCustomPlot::mouseRelease, this, &AllocationTimelineView::onMouseRelease);
    connect(m_plot, &QCustomPlot::mouseMove, this, &AllocationTimelineView::onMouseMove);
    connect(m_plot, &QCustomPlot::mouseDoubleClick, this, [this] {
        if (!m_document)
            return;
        const DeviceModel& m = m_document->devices[m_deviceIndex];
        const double span = m.xMax(m_mode) - m.xMin(m_mode);
        m_plot->xAxis->setRange(m.xMin(m_mode) - span * 0.01, m.xMax(m_mode) + span * 0.01);
        m_plot->replot();
    });
    applyTheme();
    m_details->setText(tr("Click a band to see that allocation and the stack that made it."));
}

void AllocationTimelineView::setDocument(std::shared_ptr<const Document> document, size_t deviceIndex)
{
    m_document = std::move(document);
    m_deviceIndex = deviceIndex;
    m_selected = {};
    rebuild();
    const DeviceModel& m = m_document->devices[m_deviceIndex];
    const double span = m.xMax(m_mode) - m.xMin(m_mode);
    m_plot->xAxis->setRange(m.xMin(m_mode) - span * 0.01, m.xMax(m_mode) + span * 0.01);
    runSearch();
    m_details->setText(tr("Click a band to see that allocation and the stack that made it."));
    m_stack->clear(QStringLiteral(" "));
}

void AllocationTimelineView::updateDocument(std::shared_ptr<const Document> document)
{
    const QCPRange r = m_plot->xAxis->range();
    const AllocationId selected = m_selected;
    const std::vector<uint8_t> matches = m_bands->matches();
    m_document = std::move(document);
    rebuild();
    setXRange(r.lower, r.upper);
    m_bands->setMatches(matches);
    m_bands->setSelected(selected);
    m_selected = selected;
    if (selected.valid()) {
        m_details->setText(detailsText());
        m_stack->setStack(m_document.get(), m_document->devices[m_deviceIndex].replay->allocation(selected).stack, QString());
    }
}

void AllocationTimelineView::setXAxisMode(XAxisMode mode)
{
    if (mode == m_mode)
        return;
    m_mode = mode;
    rebuild();
}

void AllocationTimelineView::rebuild()
{
    const DeviceModel* m = m_document ? &m_document->devices[m_deviceIndex] : nullptr;
    m_bands->setModel(m, m_mode);
    m_plot->clearGraphs();
    if (m_mode == XAxisMode::Time) {
        m_plot->xAxis->setTicker(QSharedPointer<TimeAxisTicker>(new TimeAxisTicker));
        m_plot->xAxis->setLabel(tr("Time since the first event"));
    } else {
        m_plot->xAxis->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
        m_plot->xAxis->setNumberFormat(QStringLiteral("f"));
        m_plot->xAxis->setNumberPrecision(0);
        m_plot->xAxis->setLabel(tr("Event index"));
    }
    if (!m)
        return;
    auto* total = m_plot->addGraph();
    total->setLineStyle(QCPGraph::lsStepLeft);
    total->setAdaptiveSampling(false);
    total->setAntialiased(false);
    total->setPen(QPen(PlotTheme::current().requested, 1.2));
    total->setName(tr("Requested (total)"));
    const double top = static_cast<double>(std::max<int64_t>(m->replay->peakRequested.bytes, 1024));
    m_plot->yAxis->setRange(0, top * 1.06);
    m_lastWidth = -1;
    m_replot->request();
}

void AllocationTimelineView::refreshTotalLine()
{
    if (!m_document || m_plot->graphCount() == 0)
        return;
    const DeviceModel& m = m_document->devices[m_deviceIndex];
    const QCPRange r = m_plot->xAxis->range();
    // One point a device pixel column, its highest (columnEvents(), as the timeline's areas):
    // a vertical stroke per pixel (lowest to highest total) would cover the top of the bands,
    // which reach that highest total, and after a fast drop the line takes the state after
    // it, as the bands do.
    const int pixels = std::max(
        1, static_cast<int>(std::lround(std::max(1, m_plot->axisRect()->width()) * m_plot->bufferDevicePixelRatio())));
    const ColumnLine line = columnLine(columnEvents(m, m_mode, r.lower, r.upper, pixels), r.lower, r.upper);
    QVector<double> k(line.keys.begin(), line.keys.end()), v(static_cast<qsizetype>(line.events.size()));
    for (size_t i = 0; i < line.events.size(); ++i)
        v[static_cast<qsizetype>(i)] = static_cast<double>(m.requestedAfter(line.events[i]));
    m_plot->graph(0)->setData(k, v, true);
    // Thin once the line turns in most pixels: thicker, its edges would cover the bands' tops.
    QPen pen = m_plot->graph(0)->pen();
    pen.setWidthF(k.size() * 8 > pixels ? 1.0 : 1.2);
    m_plot->graph(0)->setPen(pen);
}

void AllocationTimelineView::setXRange(double lower, double upper)
{
    m_syncing = true;
    m_plot->xAxis->setRange(lower, upper);
    m_syncing = false;
    m_replot->request();
}

void AllocationTimelineView::setSearchText(const QString& text) { m_search->setText(text); }

void AllocationTimelineView::runSearch()
{
    m_matchCount = 0;
    m_matchBytes = 0;
    if (!m_document) {
        m_matchLabel->clear();
        return;
    }
    const QString q = m_search->text().trimmed();
    if (q.isEmpty()) {
        m_bands->setMatches({});
        m_matchLabel->clear();
        m_replot->request();
        return;
    }
    const Snapshot& s = m_document->snapshot();
    const DeviceModel& m = m_document->devices[m_deviceIndex];
    const std::string needle = q.toLower().toStdString();
    auto lower = [](std::string_view v) {
        std::string out(v);
        std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        return out;
    };
    std::vector<uint8_t> frameMatch(s.frames.size(), 0);
    for (size_t i = 0; i < frameMatch.size(); ++i) {
        const Frame& f = s.frames.frame(FrameId{static_cast<int32_t>(i)});
        frameMatch[i] = lower(s.str(f.filename)).find(needle) != std::string::npos ||
                        lower(s.str(f.name)).find(needle) != std::string::npos;
    }
    std::vector<uint8_t> stackMatch(s.stacks.size(), 0);
    for (size_t i = 0; i < stackMatch.size(); ++i)
        for (FrameId f : s.stacks.frames(StackId{static_cast<int32_t>(i)}))
            if (frameMatch[static_cast<size_t>(f.value)]) {
                stackMatch[i] = 1;
                break;
            }
    std::string hexNeedle = needle;
    if (hexNeedle.rfind("0x", 0) == 0)
        hexNeedle = hexNeedle.substr(2);
    const bool isHex = hexNeedle.size() >= 3 &&
                       std::all_of(hexNeedle.begin(), hexNeedle.end(), [](unsigned char c) { return std::isxdigit(c); });
    const auto& allocs = m.replay->allocations;
    std::vector<uint8_t> matches(allocs.size(), 0);
    char buf[32];
    for (size_t i = 0; i < allocs.size(); ++i) {
        const Allocation& a = allocs[i];
        bool hit = a.stack.valid() && stackMatch[static_cast<size_t>(a.stack.value)];
        if (!hit && isHex) {
            std::snprintf(buf, sizeof buf, "%llx", static_cast<unsigned long long>(a.addr));
            hit = std::string_view(buf).find(hexNeedle) != std::string_view::npos;
        }
        matches[i] = hit;
    }
    showMatches(std::move(matches), tr("match"));
}

void AllocationTimelineView::highlightStack(StackId stack)
{
    if (!m_document)
        return;
    {
        const QSignalBlocker block(m_search);
        m_search->clear();
    }
    const auto& allocs = m_document->devices[m_deviceIndex].replay->allocations;
    std::vector<uint8_t> matches(allocs.size(), 0);
    for (size_t i = 0; i < allocs.size(); ++i)
        matches[i] = allocs[i].stack == stack;
    showMatches(std::move(matches), tr("from this call site"));
}

void AllocationTimelineView::highlightStacks(const std::vector<uint8_t>& stackMask, const QString& what)
{
    if (!m_document)
        return;
    {
        const QSignalBlocker block(m_search);
        m_search->clear();
    }
    if (stackMask.empty()) {
        runSearch();
        return;
    }
    const auto& allocs = m_document->devices[m_deviceIndex].replay->allocations;
    std::vector<uint8_t> matches(allocs.size(), 0);
    const size_t none = stackMask.size() - 1;
    for (size_t i = 0; i < allocs.size(); ++i) {
        const size_t k = allocs[i].stack.valid() ? static_cast<size_t>(allocs[i].stack.value) : none;
        matches[i] = k < stackMask.size() && stackMask[k];
    }
    showMatches(std::move(matches), what);
}

void AllocationTimelineView::showMatches(std::vector<uint8_t> matches, const QString& what)
{
    const DeviceModel& m = m_document->devices[m_deviceIndex];
    const auto& allocs = m.replay->allocations;
    const int64_t pe = peakEvent(*m.replay);
    m_matchCount = 0;
    m_matchBytes = 0;
    for (size_t i = 0; i < allocs.size() && i < matches.size(); ++i)
        if (matches[i]) {
            ++m_matchCount;
            if (allocs[i].activeAfter(pe))
                m_matchBytes += static_cast<int64_t>(allocs[i].size);
        }
    m_bands->setMatches(m_matchCount ? std::move(matches) : std::vector<uint8_t>(allocs.size(), 0));
    m_matchLabel->setText(
        m_matchCount
            ? tr("%1 allocations %2 · %3 of them live at the peak").arg(countText(m_matchCount), what, bytesText(m_matchBytes))
            : tr("No allocation matches"));
    m_replot->request();
}

void AllocationTimelineView::selectAllocation(AllocationId id)
{
    m_selected = id;
    m_bands->setSelected(id);
    m_replot->request();
    if (!m_document || !id.valid()) {
        m_details->setText(tr("Click a band to see that allocation and the stack that made it."));
        m_stack->clear(QStringLiteral(" "));
        return;
    }
    m_details->setText(detailsText());
    m_stack->setAllocation(m_document.get(), m_deviceIndex, id, QString());
    emit allocationSelected(id);
}

QString AllocationTimelineView::detailsText() const
{
    if (!m_document || !m_selected.valid())
        return {};
    const DeviceModel& m = m_document->devices[m_deviceIndex];
    const Allocation& a = m.replay->allocation(m_selected);
    const Category c = m.attribution ? m.attribution->category(m_selected) : Category::Other;
    const size_t k = static_cast<size_t>(m_selected.value);
    const Phase ph = m.attribution && k < m.attribution->allocationPhase.size() ? m.attribution->allocationPhase[k]
                                                                                : Phase::Other;
    auto when = [&](EventIndex e) {
        return tr("%1 (event %2)").arg(secondsText(m.x(e.value, XAxisMode::Time)), countText(e.value));
    };
    QString html = tr("<b>%1</b> %2 <b>%3</b><br>")
                       .arg(colorSwatchHtml(categoryQColor(c)), bytesText(static_cast<int64_t>(a.size)),
                            m_document->attributed()   ? categoryText(c)
                            : m_document->attributed() ? tr("(not attributed)")
                                                       : tr("(categorising…)"));
    html +=
        tr("allocation #%1 · address 0x%2 · stream %3<br>").arg(m_selected.value).arg(QString::number(a.addr, 16)).arg(a.stream);
    html += a.allocEvent.valid() ? tr("allocated at %1").arg(when(a.allocEvent)) : tr("existed before recording began");
    if (m_document->attributed() && ph != Phase::Other)
        html += tr(" in %1").arg(phaseText(ph));
    html += QStringLiteral("<br>");
    if (a.freeEvent.valid()) {
        html += tr("freed at %1").arg(when(a.freeEvent));
        if (a.allocEvent.valid())
            html += tr(" · lived %1")
                        .arg(secondsText(m.x(a.freeEvent.value, XAxisMode::Time) - m.x(a.allocEvent.value, XAxisMode::Time)));
    } else {
        html += tr("still allocated at the end of the trace");
    }
    html += fieldsText(m, a);
    return html;
}

QString AllocationTimelineView::fieldsText(const DeviceModel& m, const Allocation& a) const
{
    // What newer recordings say about the alloc: its private pool, the user_metadata in force
    // (torch.cuda.memory._set_memory_metadata), its torch.compile context.
    QString html;
    const AllocationId id = m_selected;
    if (const PoolUsage* pool = m.pools().poolOf(id))
        html += tr("<br>in <b>%1</b> %2")
                    .arg(TimelinePlotter::poolLabel(*pool).toHtmlEscaped(), QString::fromStdString(pool->idText()));
    if (!a.allocEvent.valid() || !m.events)
        return html;
    const Snapshot& s = m_document->snapshot();
    const size_t row = static_cast<size_t>(a.allocEvent.value);
    auto text = [&](StringId v) {
        const std::string_view t = v.valid() ? s.str(v) : std::string_view{};
        return QString::fromUtf8(t.data(), static_cast<qsizetype>(t.size()));
    };
    if (row < m.events->userMetadata.size())
        if (const QString md = text(m.events->userMetadata[row]); !md.isEmpty())
            html += tr("<br>user_metadata: <b>%1</b>").arg(md.toHtmlEscaped());
    if (row < m.events->compileContext.size())
        if (const QString cc = text(m.events->compileContext[row]); !cc.isEmpty() && cc != QLatin1String("N/A"))
            html += tr("<br>compiled: %1").arg(cc.toHtmlEscaped());
    if (!m.events->forwardFrames.empty())
        if (const StackId f = m.events->forwardFramesOf(row); f.valid())
            html += tr("<br>backward of a forward (%1 frames, see the stack)").arg(s.stacks.frames(f).size());
    return html;
}

void AllocationTimelineView::onMousePress(QMouseEvent* event) { m_pressPos = event->pos(); }

void AllocationTimelineView::onMouseRelease(QMouseEvent* event)
{
    if ((event->pos() - m_pressPos).manhattanLength() >= 4 || event->button() != Qt::LeftButton)
        return;
    selectAllocation(m_bands->allocationAt(event->pos()));
}

void AllocationTimelineView::onMouseMove(QMouseEvent* event)
{
    if (!m_document || event->buttons() != Qt::NoButton)
        return;
    const AllocationId id = m_bands->allocationAt(event->pos());
    if (!id.valid()) {
        QToolTip::hideText();
        return;
    }
    const DeviceModel& m = m_document->devices[m_deviceIndex];
    const Allocation& a = m.replay->allocation(id);
    const Category c = m.attribution ? m.attribution->category(id) : Category::Other;
    const QString frame = stackSummaryText(m_document->frames().get(), a.stack, 2);
    QToolTip::showText(event->globalPosition().toPoint(),
                       tr("%1 <b>%2</b> %3<br>%4")
                           .arg(colorSwatchHtml(categoryQColor(c)), bytesText(static_cast<int64_t>(a.size)),
                                m_document->attributed() ? categoryText(c) : QString(),
                                frame.isEmpty() ? tr("(no stack)") : frame.toHtmlEscaped()),
                       m_plot);
}

void AllocationTimelineView::applyTheme()
{
    const PlotTheme t = PlotTheme::current();
    t.applyTo(m_plot);
    m_bands->setDark(t.dark);
    if (m_plot->graphCount())
        m_plot->graph(0)->setPen(QPen(t.requested, 1.2));
    m_replot->request();
}

void AllocationTimelineView::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::PaletteChange || event->type() == QEvent::ApplicationPaletteChange)
        applyTheme();
    QWidget::changeEvent(event);
}

} // namespace memscope
