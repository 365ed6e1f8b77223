#include "ui/plot/category_timeline_view.h"

#include "ui/plot/band_layer.h"
#include "ui/plot/byte_axis_ticker.h"
#include "ui/plot/centered_legend.h"
#include "query/point_report.h"
#include "ui/plot/peak_marker_layer.h"
#include "ui/plot/replot_gate.h"
#include "ui/style/text_format.h"
#include "ui/plot/time_axis_ticker.h"
#include "ui/plot/timeline_plotter.h"

#include <QEvent>
#include <QToolTip>
#include <QVBoxLayout>
#include <qcustomplot.h>

#include <algorithm>
#include <array>
#include <cmath>

namespace memscope {

namespace {

const QString kMarkersLayer = QStringLiteral("markers");

QColor annotationColor(const QString& name, bool dark)
{
    const uint h = qHash(name);
    const int hue = static_cast<int>(h % 360);
    return QColor::fromHsl(hue, dark ? 70 : 90, dark ? 80 : 205);
}

} // namespace

CategoryTimelineView::CategoryTimelineView(QWidget* parent)
    : QWidget(parent), m_plot(new QCustomPlot(this)), m_replot(new ReplotGate(m_plot))
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_plot);
    m_plot->setPlottingHints(QCP::phCacheLabels);
    m_plot->setNoAntialiasingOnDrag(true);
    m_plot->addLayer(kMarkersLayer, m_plot->layer(QStringLiteral("main")), QCustomPlot::limAbove);

    m_main = m_plot->axisRect();
    m_main->setRangeDrag(Qt::Horizontal);
    m_main->setRangeZoom(Qt::Horizontal);
    m_main->setRangeZoomFactor(0.85);
    m_plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    m_plot->yAxis->setTicker(QSharedPointer<ByteAxisTicker>(new ByteAxisTicker));
    m_plot->yAxis->setLabel(tr("GPU memory"));
    m_plot->xAxis->grid()->setVisible(true);
    m_plot->yAxis->grid()->setSubGridVisible(false);

    m_plot->legend->setVisible(true);
    m_main->insetLayout()->take(m_plot->legend);
    m_plot->plotLayout()->insertRow(0);
    placeCenteredLegend(m_plot, m_plot->plotLayout(), 0);
    m_plot->legend->setMargins(QMargins(8, 4, 8, 0));
    m_plot->legend->setColumnSpacing(14);
    m_plot->plotLayout()->setRowStretchFactor(0, 0.001);

    m_lanes = new QCPAxisRect(m_plot, false);
    m_lanes->addAxes(QCPAxis::atBottom | QCPAxis::atLeft);
    m_plot->plotLayout()->insertRow(1);
    m_plot->plotLayout()->addElement(1, 0, m_lanes);
    m_plot->plotLayout()->setRowStretchFactor(1, 0.001);
    m_plot->plotLayout()->setRowSpacing(2);
    m_lanes->setMinimumSize(0, 38);
    m_lanes->setMaximumSize(QWIDGETSIZE_MAX, 38);
    m_lanes->setMinimumMargins(QMargins(0, 2, 0, 0));
    m_lanes->setAutoMargins(QCP::msLeft | QCP::msRight);
    m_lanes->setMargins(QMargins(0, 2, 0, 0));
    QCPAxis* laneX = m_lanes->axis(QCPAxis::atBottom);
    laneX->setTicks(false);
    laneX->setTickLabels(false);
    laneX->grid()->setVisible(false);
    QCPAxis* laneY = m_lanes->axis(QCPAxis::atLeft);
    auto laneTicker = QSharedPointer<QCPAxisTickerText>(new QCPAxisTickerText);
    laneTicker->addTick(1.5, tr("Phase"));
    laneTicker->addTick(0.5, tr("Annot."));
    laneY->setTicker(laneTicker);
    laneY->setRange(0, 2); // three rows (a metadata lane) where the device has user_metadata: setLaneRows()
    laneY->setTickLength(0, 0);
    laneY->setSubTicks(false);
    laneY->grid()->setVisible(false);
    m_lanes->setRangeDrag(Qt::Horizontal);
    m_lanes->setRangeZoom(Qt::Horizontal);
    m_lanes->setRangeDragAxes(m_plot->xAxis, nullptr);
    m_lanes->setRangeZoomAxes(m_plot->xAxis, nullptr);

    auto* group = new QCPMarginGroup(m_plot);
    m_main->setMarginGroup(QCP::msLeft | QCP::msRight, group);
    m_lanes->setMarginGroup(QCP::msLeft | QCP::msRight, group);

    m_laneBands = new BandLayer(m_plot, m_lanes, BandLayer::Style::Lanes, 2);
    m_iterationLines = new BandLayer(m_plot, m_main, BandLayer::Style::Lines);
    m_iterationLines->setLayer(kMarkersLayer);
    m_peakMarkers = new PeakMarkerLayer(m_plot, m_main);
    m_peakMarkers->setLayer(kMarkersLayer);

    m_plotter = std::make_unique<TimelinePlotter>(m_plot, m_main);

    auto makeLine = [this] {
        auto* l = new QCPItemStraightLine(m_plot);
        l->setLayer(kMarkersLayer);
        l->setClipAxisRect(m_main);
        l->point1->setAxisRect(m_main);
        l->point2->setAxisRect(m_main);
        l->point1->setTypeY(QCPItemPosition::ptAxisRectRatio);
        l->point2->setTypeY(QCPItemPosition::ptAxisRectRatio);
        l->point1->setCoords(0, 0);
        l->point2->setCoords(0, 1);
        l->setSelectable(false);
        l->setVisible(false);
        return l;
    };
    m_cursor = makeLine();
    m_peakLine = makeLine();
    m_peakMarker = new QCPItemTracer(m_plot);
    m_peakMarker->setLayer(kMarkersLayer);
    m_peakMarker->setClipAxisRect(m_main);
    m_peakMarker->setStyle(QCPItemTracer::tsCircle);
    m_peakMarker->setSize(10);
    m_peakMarker->setSelectable(false);
    m_peakMarker->setVisible(false);
    m_peakLabel = new QCPItemText(m_plot);
    m_peakLabel->setLayer(kMarkersLayer);
    m_peakLabel->setClipAxisRect(m_main);
    m_peakLabel->position->setParentAnchor(m_peakMarker->position);
    m_peakLabel->position->setType(QCPItemPosition::ptAbsolute);
    m_peakLabel->setPadding(QMargins(6, 3, 6, 3));
    m_peakLabel->setTextAlignment(Qt::AlignLeft);
    m_peakLabel->setSelectable(false);
    m_peakLabel->setVisible(false);

    m_rangeRect = new QCPItemRect(m_plot);
    m_rangeRect->setLayer(kMarkersLayer);
    m_rangeRect->setClipAxisRect(m_main);
    m_rangeRect->topLeft->setAxisRect(m_main);
    m_rangeRect->bottomRight->setAxisRect(m_main);
    m_rangeRect->topLeft->setTypeY(QCPItemPosition::ptAxisRectRatio);
    m_rangeRect->bottomRight->setTypeY(QCPItemPosition::ptAxisRectRatio);
    m_rangeRect->setSelectable(false);
    m_rangeRect->setVisible(false);
    m_rangeLabel = new QCPItemText(m_plot);
    m_rangeLabel->setLayer(kMarkersLayer);
    m_rangeLabel->setClipAxisRect(m_main);
    m_rangeLabel->position->setType(QCPItemPosition::ptAbsolute);
    m_rangeLabel->setPositionAlignment(Qt::AlignLeft | Qt::AlignTop);
    m_rangeLabel->setTextAlignment(Qt::AlignLeft);
    m_rangeLabel->setPadding(QMargins(6, 4, 6, 4));
    m_rangeLabel->setSelectable(false);
    m_rangeLabel->setVisible(false);

    m_pendingLabel = new QCPItemText(m_plot);
    m_pendingLabel->setClipAxisRect(m_lanes);
    m_pendingLabel->position->setAxisRect(m_lanes);
    m_pendingLabel->position->setType(QCPItemPosition::ptAxisRectRatio);
    m_pendingLabel->position->setCoords(0.5, 0.25); // in the phase row (the top one)
    m_pendingLabel->setPositionAlignment(Qt::AlignCenter);
    m_pendingLabel->setText(tr("Categorising…"));
    m_pendingLabel->setSelectable(false);
    m_pendingLabel->setVisible(false);

    m_plot->setSelectionRectMode(QCP::srmNone);
    connect(m_plot->xAxis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), this, &CategoryTimelineView::onRangeChanged);
    connect(m_plot, &QCustomPlot::afterLayout, this, &CategoryTimelineView::onAfterLayout);
    connect(m_plot, &QCustomPlot::mousePress, this, &CategoryTimelineView::onMousePress);
    connect(m_plot, &QCustomPlot::mouseMove, this, &CategoryTimelineView::onMouseMove);
    connect(m_plot, &QCustomPlot::mouseRelease, this, &CategoryTimelineView::onMouseRelease);
    connect(m_plot, &QCustomPlot::mouseDoubleClick, this, [this] {
        clearRangeSelection();
        resetZoom();
    });
    connect(m_plot->selectionRect(), &QCPSelectionRect::accepted, this,
            [this](const QRect& rect, QMouseEvent*) { onSelectionAccepted(rect); });
    connect(m_plot->selectionRect(), &QCPSelectionRect::canceled, this, [this] {
        QMetaObject::invokeMethod(
            this, [this] { m_plot->setSelectionRectMode(QCP::srmNone); }, Qt::QueuedConnection);
    });
    m_plot->setMouseTracking(true);
    applyTheme();
}

CategoryTimelineView::~CategoryTimelineView() = default;

const DeviceModel* CategoryTimelineView::model() const
{
    return m_document && m_deviceIndex < m_document->devices.size() ? &m_document->devices[m_deviceIndex] : nullptr;
}

int CategoryTimelineView::pointsHanded() const { return m_plotter->pointsHanded(); }

void CategoryTimelineView::setDocument(std::shared_ptr<const Document> document, size_t deviceIndex)
{
    m_document = std::move(document);
    m_deviceIndex = deviceIndex;
    m_range.reset();
    const DeviceModel* m = model();
    m_cursorEvent = m ? peakEvent(*m->replay) : -1;
    rebuild();
    resetZoom();
}

void CategoryTimelineView::updateDocument(std::shared_ptr<const Document> document)
{
    const QCPRange r = m_plot->xAxis->range();
    m_document = std::move(document);
    rebuild(); // the cursor and the range selection are events: they mean the same in any stage
    m_clamping = true; // the range stays; only the lanes follow it
    m_plot->xAxis->setRange(r);
    m_clamping = false;
    m_lanes->axis(QCPAxis::atBottom)->setRange(r);
    m_replot->request();
}

QString CategoryTimelineView::pendingText() const { return m_pendingLabel->visible() ? m_pendingLabel->text() : QString(); }

void CategoryTimelineView::setXAxisMode(XAxisMode mode)
{
    if (mode == m_mode)
        return;
    const DeviceModel* m = model();
    int64_t first = 0, last = 0;
    if (m) {
        const QCPRange r = m_plot->xAxis->range();
        first = m->eventAtX(r.lower, m_mode);
        last = m->eventAtX(r.upper, m_mode);
    }
    m_mode = mode;
    rebuild();
    if (m) {
        const bool full = first <= 0 && last >= m->eventCount() - 1;
        if (full)
            resetZoom();
        else
            setXRange(m->x(std::max<int64_t>(first, 0), m_mode), m->x(std::max<int64_t>(last, 0), m_mode));
    }
    if (m_range)
        selectRange(m_range->firstEvent, m_range->lastEvent);
}

void CategoryTimelineView::rebuild()
{
    const DeviceModel* m = model();
    m_plotter->setModel(m, m_mode, m_document && m_document->attributed());
    m_lastWidth = -1; // the new graphs are empty: the next layout samples them whatever the range
    m_pendingLabel->setVisible(m && !m_document->attributed());
    if (m_mode == XAxisMode::Time) {
        m_plot->xAxis->setTicker(QSharedPointer<TimeAxisTicker>(new TimeAxisTicker));
        m_plot->xAxis->setLabel(tr("Time since the first event"));
    } else {
        auto t = QSharedPointer<QCPAxisTicker>(new QCPAxisTicker);
        m_plot->xAxis->setTicker(t);
        m_plot->xAxis->setNumberFormat(QStringLiteral("f"));
        m_plot->xAxis->setNumberPrecision(0);
        m_plot->xAxis->setLabel(tr("Event index"));
    }
    if (m) {
        const double top = static_cast<double>(
            std::max<int64_t>({m->replay->peakRequested.bytes, m->replay->peakReserved.bytes, int64_t{1024}}));
        m_plot->yAxis->setRange(0, top * 1.2);
    }
    int legendItems = 0;
    for (int i = 0; i < m_plot->graphCount(); ++i)
        legendItems += m_plot->graph(i)->name().isEmpty() ? 0 : 1;
    m_plot->legend->setWrap(legendItems > 6 && width() < 1100 ? 5 : 0);
    rebuildMarkers();
    applyTheme(); // and the bands' look
}

void CategoryTimelineView::setLaneRows(int rows)
{
    if (m_laneBands->rows() == rows)
        return;
    m_laneBands->setRows(rows);
    auto ticker = QSharedPointer<QCPAxisTickerText>(new QCPAxisTickerText);
    ticker->addTick(rows - 0.5, tr("Phase"));
    ticker->addTick(rows - 1.5, tr("Annot."));
    if (rows > 2)
        ticker->addTick(rows - 2.5, tr("Metadata"));
    QCPAxis* laneY = m_lanes->axis(QCPAxis::atLeft);
    laneY->setTicker(ticker);
    laneY->setRange(0, rows);
    const int height = 19 * rows;
    m_lanes->setMinimumSize(0, height);
    m_lanes->setMaximumSize(QWIDGETSIZE_MAX, height);
}

void CategoryTimelineView::rebuildBands()
{
    const DeviceModel* m = model();
    setLaneRows(m ? m->laneRows() : 2);
    if (!m || !m->laneBands[0]) {
        m_laneBands->setBands(std::vector<Band>{});
        m_iterationLines->setBands(std::vector<Band>{});
        return;
    }
    // The bands were made with the model; only their look is the theme's.
    m_laneBands->setBands(m->laneBands[static_cast<size_t>(m_mode)]);
    m_iterationLines->setBands(m->iterationLines[static_cast<size_t>(m_mode)]);
    std::vector<QColor> colors;
    std::vector<QString> labels;
    for (Phase p : kAllPhases) {
        colors.push_back(m_theme.band(p));
        labels.push_back(phaseText(p));
    }
    for (const std::string& name : m->annotationLabels) {
        labels.push_back(QString::fromStdString(name));
        colors.push_back(annotationColor(labels.back(), m_theme.dark));
    }
    // The metadata lane: stretches of one user_metadata text, annotate markers in a strong colour.
    colors.push_back(m_theme.dark ? QColor(70, 110, 150) : QColor(184, 208, 232));
    colors.push_back(m_theme.dark ? QColor(240, 160, 60) : QColor(226, 120, 20));
    m_laneBands->setColors(std::move(colors));
    std::vector<QString> metadata;
    metadata.reserve(m->metadata().size());
    for (const MetadataSpan& md : m->metadata()) {
        const std::string_view text = m_document->snapshot().str(md.text);
        metadata.push_back(QString::fromUtf8(text.data(), static_cast<qsizetype>(text.size())).simplified());
    }
    m_laneBands->setLabeler([labels = std::move(labels), metadata = std::move(metadata)](const Band& b) {
        if (b.row == 2)
            return b.source >= 0 && static_cast<size_t>(b.source) < metadata.size() ? metadata[static_cast<size_t>(b.source)]
                                                                                    : QString();
        return b.style < labels.size() ? labels[b.style] : QString();
    });
    m_iterationLines->setColors({m_theme.muted});
    m_iterationLines->setLabeler([](const Band& b) { return tr("iter %1").arg(b.source + 1); });
    m_iterationLines->setLabelObstacles([this] { return labelObstacles(); });
}

QString CategoryTimelineView::bandTooltip(const BandLayer::Band& b) const
{
    const DeviceModel* m = model();
    if (!m || b.source < 0)
        return {};
    if (b.row == 2) {
        if (static_cast<size_t>(b.source) >= m->metadata().size())
            return {};
        const MetadataSpan& md = m->metadata()[static_cast<size_t>(b.source)];
        const std::string_view text = m_document->snapshot().str(md.text);
        const QString t = QString::fromUtf8(text.data(), static_cast<qsizetype>(text.size())).toHtmlEscaped();
        if (md.marker)
            return tr("<b>annotate</b> at event %1<br>%2").arg(countText(md.firstEvent), t);
        return tr("<b>user_metadata</b> (torch.cuda.memory._set_memory_metadata)<br>%1<br>events %2 – %3")
            .arg(t, countText(md.firstEvent), countText(md.lastEvent));
    }
    if (b.row == 1) {
        if (static_cast<size_t>(b.source) >= m->annotations.size())
            return {};
        const AnnotationRange& a = m->annotations[static_cast<size_t>(b.source)];
        return tr("<b>%1</b><br>record_function range, %2<br>events %3 – %4")
            .arg(QString::fromStdString(a.name).toHtmlEscaped(), secondsText(static_cast<double>(a.endUs - a.startUs) / 1e6),
                 countText(a.firstEvent), countText(a.lastEvent));
    }
    const int64_t n = m->eventCount();
    auto timeOf = [&](int64_t e) {
        return secondsText(m->x(std::clamp<int64_t>(e, 0, std::max<int64_t>(n - 1, 0)), XAxisMode::Time));
    };
    return tr("<b>%1</b> · iteration %2<br>events %3 – %4<br>%5 – %6")
        .arg(phaseText(static_cast<Phase>(b.tag)))
        .arg(b.source + 1)
        .arg(countText(b.firstEvent), countText(b.lastEvent))
        .arg(timeOf(b.firstEvent), timeOf(b.lastEvent));
}

void CategoryTimelineView::rebuildMarkers()
{
    for (QCPItemTracer* t : m_iterationMarkers)
        m_plot->removeItem(t);
    for (QCPItemText* t : m_iterationLabels)
        m_plot->removeItem(t);
    m_iterationMarkers.clear();
    m_iterationLabels.clear();
    m_peakMarkers->setPoints({});
    const DeviceModel* m = model();
    if (!m || m->eventCount() == 0) {
        m_peakMarker->setVisible(false);
        m_peakLabel->setVisible(false);
        m_peakLine->setVisible(false);
        m_cursor->setVisible(false);
        return;
    }
    const int64_t pe = peakEvent(*m->replay);
    const double px = m->x(std::max<int64_t>(pe, 0), m_mode);
    const double bytes = static_cast<double>(m->replay->peakRequested.bytes);
    m_peakMarker->position->setCoords(px, bytes);
    m_peakMarker->setVisible(true);
    m_peakLine->point1->setCoords(px, 0);
    m_peakLine->point2->setCoords(px, 1);
    m_peakLine->setVisible(true);
    m_peakLabel->setText(peakLabelText());
    m_peakLabel->setVisible(true);

    static const std::vector<Iteration> none;
    const auto& its = m->attribution ? m->attribution->iterations : none;
    const bool labels = its.size() <= 24;
    if (!labels) {
        // Too many to label: one sprite layer draws them, at most one per pixel.
        std::vector<QPointF> points;
        points.reserve(its.size());
        for (const Iteration& it : its)
            if (it.peak.event.valid() && it.peak.event.value != pe)
                points.emplace_back(m->x(it.peak.event.value, m_mode), static_cast<double>(it.peak.bytes));
        m_peakMarkers->setPoints(std::move(points));
    }
    for (size_t i = 0; i < its.size() && labels; ++i) {
        const IterationPeak& p = its[i].peak;
        if (!p.event.valid() || p.event.value == pe)
            continue;
        auto* t = new QCPItemTracer(m_plot);
        t->setLayer(kMarkersLayer);
        t->setClipAxisRect(m_main);
        t->setStyle(QCPItemTracer::tsCircle);
        t->setSize(7);
        t->setSelectable(false);
        t->position->setCoords(m->x(p.event.value, m_mode), static_cast<double>(p.bytes));
        m_iterationMarkers.push_back(t);
        auto* text = new QCPItemText(m_plot);
        text->setLayer(kMarkersLayer);
        text->setClipAxisRect(m_main);
        text->position->setParentAnchor(t->position);
        text->position->setType(QCPItemPosition::ptAbsolute);
        text->position->setCoords(0, -8);
        text->setPositionAlignment(Qt::AlignHCenter | Qt::AlignBottom);
        text->setText(tr("iter %1: %2").arg(i + 1).arg(bytesText(p.bytes)));
        text->setPadding(QMargins(3, 1, 3, 1));
        text->setSelectable(false);
        m_iterationLabels.push_back(text);
    }
    setCursorEvent(m_cursorEvent);
}

QString CategoryTimelineView::peakLabelText() const
{
    const DeviceModel* m = model();
    if (!m)
        return {};
    const int64_t pe = peakEvent(*m->replay);
    QString where = tr("at %1").arg(secondsText(m->x(std::max<int64_t>(pe, 0), XAxisMode::Time)));
    if (m_mode == XAxisMode::EventIndex)
        where = tr("at event %1").arg(countText(pe));
    const Phase phase = m->phaseAt(pe);
    if (m_document->attributed() && phase != Phase::Other)
        where += QStringLiteral(" · ") + phaseText(phase);
    return tr("Peak %1\n%2").arg(bytesText(m->replay->peakRequested.bytes), where);
}

void CategoryTimelineView::applyTheme()
{
    m_theme = PlotTheme::current();
    m_theme.applyTo(m_plot);
    m_plot->yAxis->setTickLabelFont(m_theme.font);
    QCPAxis* laneX = m_lanes->axis(QCPAxis::atBottom);
    laneX->setBasePen(Qt::NoPen);
    m_lanes->axis(QCPAxis::atLeft)->setBasePen(Qt::NoPen);
    m_lanes->axis(QCPAxis::atLeft)->setTickPen(Qt::NoPen);
    m_lanes->axis(QCPAxis::atLeft)->setTickLabelFont(m_theme.smallFont);
    m_lanes->axis(QCPAxis::atLeft)->setTickLabelColor(m_theme.muted);
    m_laneBands->setTextColor(m_theme.dark ? QColor(235, 235, 235) : QColor(30, 30, 30));
    m_laneBands->setFont(m_theme.smallFont);
    m_iterationLines->setTextColor(m_theme.muted);
    m_iterationLines->setFont(m_theme.smallFont);
    m_plotter->applyTheme(m_theme);

    QColor cursor = m_theme.accent;
    m_cursor->setPen(QPen(cursor, 1.5));
    m_peakLine->setPen(QPen(m_theme.peak, 1, Qt::DashLine));
    m_peakMarker->setPen(QPen(m_theme.peak, 2));
    m_peakMarker->setBrush(m_theme.background);
    m_peakLabel->setColor(m_theme.peak);
    m_peakLabel->setFont(m_theme.boldFont);
    m_peakLabel->setBrush(m_theme.labelBackground);
    m_peakLabel->setPen(QPen(m_theme.peak, 1));
    for (QCPItemTracer* t : m_iterationMarkers) {
        t->setPen(QPen(m_theme.foreground, 1.5));
        t->setBrush(m_theme.background);
    }
    m_peakMarkers->setStyle(7, QPen(m_theme.foreground, 1.5), m_theme.background);
    for (QCPItemText* t : m_iterationLabels) {
        t->setColor(m_theme.foreground);
        t->setFont(m_theme.smallFont);
        t->setBrush(m_theme.labelBackground);
    }
    QColor fill = m_theme.accent;
    fill.setAlpha(40);
    m_rangeRect->setBrush(fill);
    m_rangeRect->setPen(QPen(m_theme.accent, 1));
    m_rangeLabel->setColor(m_theme.foreground);
    m_rangeLabel->setFont(m_theme.font);
    m_rangeLabel->setBrush(m_theme.labelBackground);
    m_rangeLabel->setPen(QPen(m_theme.accent, 1));
    m_pendingLabel->setColor(m_theme.muted);
    m_pendingLabel->setFont(m_theme.font);
    rebuildBands();
    m_replot->request();
}

void CategoryTimelineView::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::PaletteChange || event->type() == QEvent::ApplicationPaletteChange ||
        event->type() == QEvent::FontChange)
        applyTheme();
    QWidget::changeEvent(event);
}

QCPRange CategoryTimelineView::fullRange() const
{
    const DeviceModel* m = model();
    if (!m)
        return QCPRange(0, 1);
    const double lo = m->xMin(m_mode);
    const double hi = m->xMax(m_mode);
    const double pad = (hi - lo) * 0.01;
    return QCPRange(lo - pad, hi + pad);
}

void CategoryTimelineView::resetZoom()
{
    const QCPRange full = fullRange();
    setXRange(full.lower, full.upper);
}

void CategoryTimelineView::setXRange(double lower, double upper)
{
    m_plot->xAxis->setRange(lower, upper);
    m_replot->request();
}

std::pair<double, double> CategoryTimelineView::xRange() const
{
    const QCPRange r = m_plot->xAxis->range();
    return {r.lower, r.upper};
}

void CategoryTimelineView::zoomBy(double factor)
{
    const QCPRange r = m_plot->xAxis->range();
    const double c = r.center();
    setXRange(c - r.size() * factor / 2, c + r.size() * factor / 2);
}

void CategoryTimelineView::panBy(double fraction)
{
    const QCPRange r = m_plot->xAxis->range();
    setXRange(r.lower + r.size() * fraction, r.upper + r.size() * fraction);
}

void CategoryTimelineView::scrollToEvent(int64_t event)
{
    const DeviceModel* m = model();
    if (!m)
        return;
    const double x = m->x(std::max<int64_t>(event, 0), m_mode);
    const QCPRange r = m_plot->xAxis->range();
    if (x < r.lower || x > r.upper)
        setXRange(x - r.size() / 2, x + r.size() / 2);
}

void CategoryTimelineView::onRangeChanged(const QCPRange& range)
{
    if (m_clamping)
        return;
    const QCPRange full = fullRange();
    const double minSpan = m_mode == XAxisMode::EventIndex ? 8.0 : 20e-6;
    QCPRange r = range;
    if (r.size() > full.size())
        r = full;
    if (r.size() < minSpan) {
        const double c = r.center();
        r = QCPRange(c - minSpan / 2, c + minSpan / 2);
    }
    if (r.lower < full.lower)
        r = QCPRange(full.lower, full.lower + r.size());
    if (r.upper > full.upper)
        r = QCPRange(full.upper - r.size(), full.upper);
    if (r.lower != range.lower || r.upper != range.upper) {
        m_clamping = true;
        m_plot->xAxis->setRange(r);
        m_clamping = false;
    }
    m_lanes->axis(QCPAxis::atBottom)->setRange(r);
    emit xRangeChanged(r.lower, r.upper);
}

void CategoryTimelineView::onAfterLayout()
{
    const QCPRange r = m_plot->xAxis->range();
    if (r.lower != m_lastLower || r.upper != m_lastUpper || m_main->width() != m_lastWidth) {
        m_plotter->refresh();
        m_lastLower = r.lower;
        m_lastUpper = r.upper;
        m_lastWidth = m_main->width();
    }
    placeLabels();
    updateRangeItems();
}

std::vector<QRectF> CategoryTimelineView::labelObstacles() const
{
    std::vector<QRectF> out;
    for (QCPItemText* t : {m_peakLabel, m_rangeLabel})
        if (t && t->visible())
            out.push_back(QRectF(t->topLeft->pixelPosition(), t->bottomRight->pixelPosition()).normalized());
    for (QCPItemText* t : m_iterationLabels)
        if (t->visible())
            out.push_back(QRectF(t->topLeft->pixelPosition(), t->bottomRight->pixelPosition()).normalized());
    for (QCPItemTracer* t : m_iterationMarkers) // the iterations' peak circles
        if (t->visible()) {
            const QPointF c = t->position->pixelPosition();
            out.push_back(QRectF(c.x() - t->size(), c.y() - t->size(), 2 * t->size(), 2 * t->size()));
        }
    if (m_peakLine && m_peakLine->visible()) { // the peak's dashed line, a few pixels wide
        const double x = m_peakLine->point1->pixelPosition().x();
        out.push_back(QRectF(x - 3, m_main->rect().top(), 6, m_main->rect().height()));
    }
    return out;
}

QRectF CategoryTimelineView::peakLabelRect() const
{
    if (!m_peakLabel->visible())
        return {};
    const QFontMetrics bold(m_theme.boldFont);
    const QRect area = m_main->rect();
    const QPointF anchor = m_peakMarker->position->pixelPosition();
    const bool right = anchor.x() > area.left() + area.width() * 0.62;
    const QStringList lines = m_peakLabel->text().split(QLatin1Char('\n'));
    int w = 0;
    for (const QString& l : lines)
        w = std::max(w, bold.horizontalAdvance(l));
    const double h = lines.size() * bold.height() + 6;
    // Above the marker, or below it where above would leave the chart (a peak at the top).
    const bool below = anchor.y() - 8 - h < area.top();
    return QRectF(right ? anchor.x() - 10 - w - 12 : anchor.x() + 10, below ? anchor.y() + 8 : anchor.y() - 8 - h, w + 12, h);
}

void CategoryTimelineView::placeLabels()
{
    if (!m_peakLabel->visible())
        return;
    const QFontMetrics bold(m_theme.boldFont);
    const QFontMetrics small(m_theme.smallFont);
    const QRect area = m_main->rect();
    const double px = m_peakMarker->position->pixelPosition().x();
    const bool right = px > area.left() + area.width() * 0.62;
    const QStringList lines = m_peakLabel->text().split(QLatin1Char('\n'));
    const bool below = m_peakMarker->position->pixelPosition().y() - 8 - (lines.size() * bold.height() + 6) < area.top();
    m_peakLabel->setPositionAlignment((right ? Qt::AlignRight : Qt::AlignLeft) | (below ? Qt::AlignTop : Qt::AlignBottom));
    m_peakLabel->position->setCoords(right ? -10 : 10, below ? 8 : -8);
    int w = 0;
    for (const QString& l : lines)
        w = std::max(w, bold.horizontalAdvance(l));
    std::vector<QRectF> taken{peakLabelRect()};
    for (size_t i = 0; i < m_iterationLabels.size(); ++i) {
        QCPItemText* t = m_iterationLabels[i];
        const QPointF p = t->position->parentAnchor() ? m_iterationMarkers[i]->position->pixelPosition() : QPointF();
        const int tw = small.horizontalAdvance(t->text()) + 8;
        const QRectF rect(p.x() - tw / 2.0, p.y() - 8 - small.height() - 2, tw, small.height() + 2);
        bool free = area.contains(rect.toRect());
        for (const QRectF& o : taken)
            free = free && !o.intersects(rect);
        t->setVisible(free);
        if (free)
            taken.push_back(rect);
    }
}

void CategoryTimelineView::setCursorEvent(int64_t event)
{
    const DeviceModel* m = model();
    m_cursorEvent = event;
    if (!m || m->eventCount() == 0) {
        m_cursor->setVisible(false);
        return;
    }
    const double x = m->x(std::max<int64_t>(event, 0), m_mode);
    m_cursor->point1->setCoords(x, 0);
    m_cursor->point2->setCoords(x, 1);
    m_cursor->setVisible(event != peakEvent(*m->replay));
    m_replot->request();
}

void CategoryTimelineView::selectRange(int64_t firstEvent, int64_t lastEvent)
{
    const DeviceModel* m = model();
    if (!m || m->eventCount() == 0)
        return;
    m_range = summarizeRange(*m->replay, *m->events, std::min(firstEvent, lastEvent), std::max(firstEvent, lastEvent),
                             &m->requested);
    const RangeSummary& s = *m_range;
    const QString span = m_mode == XAxisMode::Time ? tr("%1 – %2").arg(secondsText(m->x(s.firstEvent, XAxisMode::Time)),
                                                                       secondsText(m->x(s.lastEvent, XAxisMode::Time)))
                                                   : tr("events %1 – %2").arg(countText(s.firstEvent), countText(s.lastEvent));
    m_rangeLabel->setText(
        tr("Range %1\nPeak %2 at %3\n+%4 allocated (%5)   −%6 freed (%7)")
            .arg(span, bytesText(s.peakBytes),
                 m_mode == XAxisMode::Time ? secondsText(m->x(s.peakEvent, XAxisMode::Time))
                                           : tr("event %1").arg(countText(s.peakEvent)))
            .arg(bytesText(s.allocatedBytes), countText(s.allocCount), bytesText(s.freedBytes), countText(s.freeCount)));
    m_rangeRect->setVisible(true);
    m_rangeLabel->setVisible(true);
    updateRangeItems();
    m_replot->request();
    emit rangeSelected(s.firstEvent, s.lastEvent);
}

void CategoryTimelineView::clearRangeSelection()
{
    const bool had = m_range.has_value();
    m_range.reset();
    m_rangeRect->setVisible(false);
    m_rangeLabel->setVisible(false);
    m_replot->request();
    if (had)
        emit rangeCleared();
}

void CategoryTimelineView::updateRangeItems()
{
    const DeviceModel* m = model();
    if (!m_range || !m)
        return;
    double x0 = m->x(m_range->firstEvent, m_mode);
    double x1 = m->x(m_range->lastEvent, m_mode);
    m_rangeRect->topLeft->setCoords(x0, 0);
    m_rangeRect->bottomRight->setCoords(x1, 1);
    const QRect area = m_main->rect();
    const double p0 = std::clamp<double>(m_plot->xAxis->coordToPixel(x0), area.left(), area.right());
    const double p1 = std::clamp<double>(m_plot->xAxis->coordToPixel(x1), area.left(), area.right());
    const QFontMetrics fm(m_theme.font);
    int w = 0;
    for (const QString& l : m_rangeLabel->text().split(QLatin1Char('\n')))
        w = std::max(w, fm.horizontalAdvance(l));
    // Inside the range at the top, unless that covers the peak's label: then beside it, or under it.
    const double bw = w + 12;
    const double bh = m_rangeLabel->text().count(QLatin1Char('\n')) * fm.height() + fm.height() + 8;
    const QRectF peak = peakLabelRect();
    const double top = area.top() + 6;
    const std::array<double, 4> lefts{p0 + 6, p1 - 6 - bw, peak.left() - 6 - bw, peak.right() + 6};
    double left = std::max<double>(std::min<double>(p0 + 6, area.right() - bw - 6), area.left() + 6);
    double y = top;
    bool placed = false;
    for (double l : lefts) {
        const QRectF r(l, top, bw, bh);
        if (r.left() >= area.left() && r.right() <= area.right() && (peak.isEmpty() || !r.intersects(peak))) {
            left = l;
            placed = true;
            break;
        }
    }
    if (!placed && !peak.isEmpty())
        y = peak.bottom() + 24;
    m_rangeLabel->setPositionAlignment(Qt::AlignLeft | Qt::AlignTop);
    m_rangeLabel->position->setCoords(left, y);
}

void CategoryTimelineView::onMousePress(QMouseEvent* event)
{
    m_pressPos = event->pos();
    m_pressed = true;
    m_selecting = (event->modifiers() & Qt::ShiftModifier) || event->button() == Qt::RightButton;
    m_plot->setSelectionRectMode(m_selecting && m_main->rect().contains(event->pos()) ? QCP::srmCustom : QCP::srmNone);
    QToolTip::hideText();
}

void CategoryTimelineView::onSelectionAccepted(const QRect& rect)
{
    QMetaObject::invokeMethod(
        this, [this] { m_plot->setSelectionRectMode(QCP::srmNone); }, Qt::QueuedConnection);
    const DeviceModel* m = model();
    if (!m || rect.width() < 3)
        return;
    const double x0 = m_plot->xAxis->pixelToCoord(rect.left());
    const double x1 = m_plot->xAxis->pixelToCoord(rect.right());
    const int64_t first = m->firstEventAtOrAfter(std::min(x0, x1), m_mode);
    const int64_t last = m->eventAtX(std::max(x0, x1), m_mode);
    if (last >= first)
        selectRange(first, last);
}

void CategoryTimelineView::onMouseRelease(QMouseEvent* event)
{
    const bool click = m_pressed && !m_selecting && (event->pos() - m_pressPos).manhattanLength() < 4;
    m_pressed = false;
    // A selection ends after this signal (QCustomPlot emits it first): leave its mode on until then.
    if (!m_selecting)
        m_plot->setSelectionRectMode(QCP::srmNone);
    m_selecting = false;
    const DeviceModel* m = model();
    if (!click || !m || event->button() != Qt::LeftButton)
        return;
    if (m_main->rect().contains(event->pos())) {
        const int64_t e = m->eventAtX(m_plot->xAxis->pixelToCoord(event->pos().x()), m_mode);
        setCursorEvent(e);
        emit eventClicked(e);
    } else if (const BandLayer::Band* b = m_laneBands->bandAt(event->pos()); b && b->firstEvent >= 0) {
        selectRange(b->firstEvent, b->lastEvent);
    }
}

void CategoryTimelineView::onMouseMove(QMouseEvent* event)
{
    const DeviceModel* m = model();
    if (!m || event->buttons() != Qt::NoButton)
        return;
    if (m_main->rect().contains(event->pos())) {
        const int64_t e = m->eventAtX(m_plot->xAxis->pixelToCoord(event->pos().x()), m_mode);
        QToolTip::showText(event->globalPosition().toPoint(), hoverText(e), m_plot);
    } else if (const BandLayer::Band* b = m_laneBands->bandAt(event->pos())) {
        QToolTip::showText(event->globalPosition().toPoint(), bandTooltip(*b), m_plot);
    } else {
        QToolTip::hideText();
    }
}

QString CategoryTimelineView::hoverText(int64_t event) const
{
    const DeviceModel* m = model();
    if (!m)
        return {};
    const int64_t requested = m->requestedAfter(event);
    QString head = QStringLiteral("<b>%1</b> · event %2")
                       .arg(secondsText(m->x(std::max<int64_t>(event, 0), XAxisMode::Time)), countText(event));
    if (m_document->attributed()) {
        const Phase phase = m->phaseAt(event);
        if (phase != Phase::Other)
            head += QStringLiteral(" · ") + phaseText(phase);
        const int it = m->iterationAt(event);
        if (it >= 0)
            head += tr(" · iteration %1").arg(it + 1);
    }
    if (event == peakEvent(*m->replay))
        head += tr(" · <b>global peak</b>");
    if (!m_document->attributed())
        head += tr("<br><i>Categorising…</i>");
    QString rows;
    rows += QStringLiteral("<tr><td>Requested</td><td align=right><b>%1</b></td><td></td></tr>").arg(bytesText(requested));
    rows += QStringLiteral("<tr><td>Reserved</td><td align=right>%1</td><td></td></tr>").arg(bytesText(m->reservedAfter(event)));
    for (const PoolUsage& pool : m->pools().pools) {
        const int64_t reserved = pool.reservedAfter(event);
        if (reserved == 0 && pool.usedAfter(event) == 0)
            continue;
        rows += tr("<tr><td>&nbsp;&nbsp;%1</td><td align=right>%2</td><td align=right>%3 held</td></tr>")
                    .arg(TimelinePlotter::poolLabel(pool).toHtmlEscaped(), bytesText(reserved),
                         bytesText(std::max<int64_t>(0, pool.heldAfter(event))));
    }
    for (auto it = TimelinePlotter::kStackOrder.rbegin(); it != TimelinePlotter::kStackOrder.rend(); ++it) {
        const Category c = *it;
        if (!m->categoryPresent[static_cast<size_t>(c)])
            continue;
        const int64_t b = m->categoryBytes(c, event);
        const QString name = m_document->attributed() || c != Category::Other ? categoryText(c) : tr("Not attributed");
        rows += QStringLiteral("<tr><td>%1 %2</td><td align=right>%3</td><td align=right>%4</td></tr>")
                    .arg(colorSwatchHtml(categoryQColor(c)), name, bytesText(b),
                         requested > 0 ? percentText(static_cast<double>(b) / static_cast<double>(requested)) : QString());
    }
    return head + QStringLiteral("<table cellspacing=0 cellpadding=1>") + rows + QStringLiteral("</table>");
}

} // namespace memscope
