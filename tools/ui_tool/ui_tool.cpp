// memscope_ui_tool: screenshots of the views and the pan/zoom frame time.
//
//   memscope_ui_tool screenshots OUTDIR FILE...   (run under Xvfb: xvfb-run -a -s "-screen 0 1600x1000x24")
//                                            FILE may be compare=A,B (the comparison view) or
//                                            job=A,B (the job view of those ranks);
//                                            MEMSCOPE_SHOT_SIZE=WxH, QT_SCALE_FACTOR=2 for 2x
//   memscope_ui_tool compare OUTDIR A B   (Xvfb: the comparison tab, its table at the call sites)
//   memscope_ui_tool frametime FILE [WIDTH HEIGHT]  (offscreen is fine)
//   memscope_ui_tool firstpaint FILE [WIDTH HEIGHT]  (offscreen: results ready -> tab painted)
//   memscope_ui_tool appopen FILE [WIDTH HEIGHT]  (the window's staged open, then frame times)
//   memscope_ui_tool fields OUTDIR FILE...   (Xvfb: the timeline, allocator and one allocation's
//                                            details of recordings with pools, metadata, compile context)
//   memscope_ui_tool lodbench FILE [COPIES]  (the phase lane's per-pixel LOD, coarse levels against band by band,
//                                            on the lane repeated COPIES times end to end)
//   memscope_ui_tool icon OUT.png | crop IN X Y W H OUT
//   memscope_ui_tool flame OUTDIR FILE...   (Xvfb: the flame graph tab, flame_shots.cpp)

#include "ui/plot/allocation_bands_layer.h"
#include "ui/document/band_lod.h"
#include "ui/document/band_set.h"
#include "ui/pages/allocation_timeline_view.h"
#include "ui/pages/allocator_state_view.h"
#include "ui/plot/category_timeline_view.h"
#include "ui/pages/diagnostics_panel.h"
#include "query/point_report.h"
#include "ui/loader.h"
#include "ui/live/attach_dialog.h"
#include "ui/live/live_session.h"
#include "ui/live/live_tab.h"
#include "ui/main_window.h"
#include "ui/compare/comparison_view.h"
#include "ui/models/active_allocation_model.h"
#include "ui/pages/peak_panel.h"
#include "ui/pages/segment_map_widget.h"
#include "ui/pages/snapshot_tab.h"
#include "ui/pages/what_if_panel.h"

#include <QApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QHeaderView>
#include <QLineEdit>
#include <QPainter>
#include <QPainterPath>
#include <QScreen>
#include <QSettings>
#include <QSignalSpy>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <qcustomplot.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <numeric>

using namespace memscope;

namespace {

void settle(int ms = 150)
{
    QElapsedTimer t;
    t.start();
    while (t.elapsed() < ms) {
        QApplication::processEvents(QEventLoop::AllEvents, 20);
        QTest::qWait(10);
    }
}

bool waitLoaded(MainWindow& w, int tabs)
{
    QElapsedTimer t;
    t.start();
    while (w.tabCount() < tabs && t.elapsed() < 60000)
        QTest::qWait(20);
    settle();
    return w.tabCount() >= tabs;
}

// The window's size for screenshots: MEMSCOPE_SHOT_SIZE=WxH (1000x700 is the smallest the
// window is made for), 1600x1000 by default.
QSize shotSize()
{
    const QStringList wh = qEnvironmentVariable("MEMSCOPE_SHOT_SIZE").split(QLatin1Char('x'));
    if (wh.size() == 2 && wh[0].toInt() > 0 && wh[1].toInt() > 0)
        return {wh[0].toInt(), wh[1].toInt()};
    return {1600, 1000};
}

int screenshots(const QString& outDir, const QStringList& files)
{
    QDir().mkpath(outDir);
    QTemporaryDir settingsDir;
    QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, settingsDir.path());
    MainWindow w;
    w.resize(shotSize());
    w.show();
    settle(300);
    w.grab().save(outDir + QStringLiteral("/welcome.png"));
    int n = 0;
    for (const QString& f : files) {
        // compare=A,B: the comparison view; job=A,B: the job view of those ranks.
        for (const QString& kind : {QStringLiteral("compare="), QStringLiteral("job=")})
            if (f.startsWith(kind)) {
                const QStringList paths = f.mid(kind.size()).split(QLatin1Char(','));
                if (kind == QStringLiteral("job="))
                    w.openJob(paths);
                else
                    w.compareFiles(paths);
                if (!waitLoaded(w, ++n)) {
                    std::fprintf(stderr, "could not open %s: %s\n", qPrintable(f), qPrintable(w.errorText()));
                    return 1;
                }
                settle(600);
                const QString name = kind.chopped(1) + QLatin1Char('_') + QFileInfo(paths.value(0)).completeBaseName();
                w.grab().save(outDir + QLatin1Char('/') + name + QStringLiteral(".png"));
            }
        if (f.contains(QLatin1Char('=')))
            continue;
        w.openFile(f);
        if (!waitLoaded(w, ++n)) {
            std::fprintf(stderr, "could not load %s: %s\n", qPrintable(f), qPrintable(w.errorText()));
            return 1;
        }
        const QString base = outDir + QLatin1Char('/') + QFileInfo(f).completeBaseName();
        SnapshotTab* tab = w.currentTab();
        std::printf("%s: window %dx%d, smallest %dx%d\n", qPrintable(QFileInfo(f).fileName()), w.width(), w.height(),
                    w.minimumSizeHint().width(), w.minimumSizeHint().height());
        // Breakdown at the peak with the largest call site's stack.
        tab->detailTabs()->setCurrentIndex(0);
        PeakPanel* peak = tab->peakPanel();
        QTableView* live = peak->activeTable();
        // the largest with a user frame, one made in a module's forward first
        int row = -1;
        for (int i = 0; i < live->model()->rowCount() && row < 0; ++i)
            if (!live->model()->index(i, ActiveAllocationModel::Module).data().toString().isEmpty())
                row = i;
        for (int i = 0; i < live->model()->rowCount() && row < 0; ++i)
            if (!live->model()->index(i, ActiveAllocationModel::TopFrame).data().toString().startsWith(QLatin1Char('(')))
                row = i;
        row = std::max(row, 0);
        live->setCurrentIndex(live->model()->index(row, 0));
        settle();
        w.grab().save(base + QStringLiteral("_timeline_breakdown.png"));
        // Call sites.
        qobject_cast<QTabWidget*>(peak->callSiteTable()->parentWidget()->parentWidget())->setCurrentIndex(1);
        peak->callSiteTable()->setCurrentIndex(peak->callSiteTable()->model()->index(0, 0));
        settle();
        w.grab().save(base + QStringLiteral("_call_sites.png"));
        // The peak's bytes by module path.
        peak->tabs()->setCurrentIndex(2);
        peak->moduleTable()->setCurrentIndex(peak->moduleTable()->model()->index(0, 0));
        settle();
        w.grab().save(base + QStringLiteral("_modules.png"));
        peak->tabs()->setCurrentIndex(0);
        // Allocation timeline with a search and a selected band.
        tab->detailTabs()->setCurrentIndex(1);
        settle();
        AllocationTimelineView* alloc = tab->allocations();
        alloc->setSearchText(QStringLiteral("train.py"));
        const DeviceModel& m = tab->deviceModel();
        const PointReport r = buildPointReport(*tab->document().attribution(), tab->deviceIndex(), peakEvent(*m.replay));
        AllocationId pick;
        for (const ActiveAllocation& l : r.live)
            if (l.stack.valid() && !pick.valid())
                pick = l.id;
        for (const ActiveAllocation& l : r.live)
            if (l.stack.valid() && l.category == Category::Activation) {
                pick = l.id;
                break;
            }
        alloc->selectAllocation(pick);
        settle();
        w.grab().save(base + QStringLiteral("_allocations.png"));
        // Allocator state at the peak.
        tab->detailTabs()->setCurrentIndex(2);
        for (const SegmentState& seg : tab->allocator()->state().segments)
            if (!seg.blocks.empty() && m.replay->allocation(seg.blocks.front().id).stack.valid()) {
                emit tab->allocator()->map()->allocationClicked(seg.blocks.front().id);
                break;
            }
        settle();
        w.grab().save(base + QStringLiteral("_allocator.png"));
        // Diagnostics with the first finding selected, then the estimator.
        tab->showDetail(SnapshotTab::DetailTab::Diagnostics);
        tab->diagnostics()->selectFinding(0);
        settle();
        w.grab().save(base + QStringLiteral("_diagnostics.png"));
        tab->showDetail(SnapshotTab::DetailTab::Estimator);
        settle();
        w.grab().save(base + QStringLiteral("_estimator.png"));
        tab->showDetail(SnapshotTab::DetailTab::WhatIf);
        settle();
        w.grab().save(base + QStringLiteral("_whatif.png"));
        // A selected range on the timeline (the iteration holding the peak) in event-index mode.
        tab->detailTabs()->setCurrentIndex(0);
        const auto& its = m.attribution->iterations;
        int64_t first = m.eventCount() / 3, last = m.eventCount() / 2;
        for (const Iteration& it : its)
            if (it.firstEvent <= r.event && r.event <= it.lastEvent) {
                first = it.firstEvent;
                last = it.lastEvent;
            }
        tab->timeline()->selectRange(first, last);
        settle();
        w.grab().save(base + QStringLiteral("_range.png"));
        tab->timeline()->clearRangeSelection();
        // The timeline alone, as a chart image.
        tab->timeline()->plot()->savePng(base + QStringLiteral("_timeline_chart.png"), 1500, 520, 1.0);
    }
    return 0;
}

// What newer recordings carry, per file: the timeline (private pool bands, the metadata lane),
// the allocator state at the peak by address with a pool block selected, and the allocation
// that says the most (compile context or FX frames, else user_metadata, else a pool) with its
// details and stack.
int fieldShots(const QString& outDir, const QStringList& files)
{
    QDir().mkpath(outDir);
    QTemporaryDir settingsDir;
    QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, settingsDir.path());
    MainWindow w;
    w.resize(1600, 1000);
    w.show();
    settle(300);
    int n = 0;
    for (const QString& f : files) {
        w.openFile(f);
        if (!waitLoaded(w, ++n)) {
            std::fprintf(stderr, "could not load %s: %s\n", qPrintable(f), qPrintable(w.errorText()));
            return 1;
        }
        const QString base = outDir + QLatin1Char('/') + QFileInfo(f).completeBaseName();
        SnapshotTab* tab = w.currentTab();
        const DeviceModel& m = tab->deviceModel();
        const Snapshot& s = tab->document().snapshot();
        // By event: these short runs spend most of their time before the first step.
        tab->setXAxisMode(XAxisMode::EventIndex);
        tab->detailTabs()->setCurrentIndex(0);
        settle();
        w.grab().save(base + QStringLiteral("_fields_timeline.png"));

        // The allocation that says the most.
        auto score = [&](const Allocation& a, AllocationId id) {
            int v = 0;
            if (m.pools().poolOf(id))
                v += 1;
            if (!a.allocEvent.valid())
                return v;
            const size_t row = static_cast<size_t>(a.allocEvent.value);
            if (!s.str(m.events->userMetadata[row]).empty())
                v += 2;
            const std::string_view cc = s.str(m.events->compileContext[row]);
            if (!cc.empty() && cc != "N/A")
                v += 4;
            for (FrameId fr : s.stacks.frames(a.stack))
                if (s.frames.frame(fr).fxNodeName.valid() && !s.str(s.frames.frame(fr).fxNodeName).empty()) {
                    v += 8;
                    break;
                }
            if (a.stack.valid())
                v += 1;
            return v;
        };
        AllocationId best;
        int bestScore = -1;
        uint64_t bestSize = 0;
        for (size_t i = 0; i < m.replay->allocations.size(); ++i) {
            const Allocation& a = m.replay->allocations[i];
            const AllocationId id{static_cast<int32_t>(i)};
            const int v = score(a, id);
            if (v > bestScore || (v == bestScore && a.size > bestSize)) {
                best = id;
                bestScore = v;
                bestSize = a.size;
            }
        }
        tab->detailTabs()->setCurrentIndex(1);
        settle();
        tab->allocations()->selectAllocation(best);
        settle();
        w.grab().save(base + QStringLiteral("_fields_allocation.png"));

        tab->detailTabs()->setCurrentIndex(2);
        settle();
        for (const SegmentState& seg : tab->allocator()->state().segments)
            if (!seg.segment->pool.isDefault() && !seg.blocks.empty()) {
                emit tab->allocator()->map()->allocationClicked(seg.blocks.front().id);
                break;
            }
        settle();
        w.grab().save(base + QStringLiteral("_fields_allocator.png"));
        tab->detailTabs()->setCurrentIndex(0);
    }
    return 0;
}

int frametimeOf(const std::shared_ptr<const Document>& doc, const QString& file, int width, int height)
{
    CategoryTimelineView view;
    view.resize(width, height);
    view.setDocument(doc, 0);
    view.show();
    settle(100);
    QCustomPlot* plot = view.plot();
    auto measure = [&](const char* what, auto step, int frames) {
        std::vector<double> ms;
        int points = 0;
        view.resetZoom();
        plot->replot(QCustomPlot::rpImmediateRefresh);
        for (int i = 0; i < frames; ++i) {
            QElapsedTimer t;
            t.start();
            step(i);
            plot->replot(QCustomPlot::rpImmediateRefresh);
            ms.push_back(static_cast<double>(t.nsecsElapsed()) / 1e6);
            points = std::max(points, view.pointsHanded());
        }
        std::sort(ms.begin(), ms.end());
        const double mean = std::accumulate(ms.begin(), ms.end(), 0.0) / static_cast<double>(ms.size());
        std::printf("%-28s frames %3d  mean %6.2f ms  median %6.2f ms  p95 %6.2f ms  max %6.2f ms  (max points/graph %d)\n", what,
                    frames, mean, ms[ms.size() / 2], ms[ms.size() * 95 / 100], ms.back(), points);
    };
    std::printf("%s: %lld events, view %dx%d\n", qPrintable(QFileInfo(file).fileName()),
                static_cast<long long>(doc->devices[0].eventCount()), width, height);
    view.resetZoom();
    plot->replot(QCustomPlot::rpImmediateRefresh);
    std::printf("axis rect %dx%d, points/graph %d\n", view.mainRect()->width(), view.mainRect()->height(), view.pointsHanded());
    if (qEnvironmentVariableIsSet("MEMSCOPE_PROBE")) {
        for (int k = 0; k < 3; ++k) {
            QElapsedTimer t;
            t.start();
            plot->replot(QCustomPlot::rpImmediateRefresh);
            std::printf("static replot %.2f ms\n", static_cast<double>(t.nsecsElapsed()) / 1e6);
        }
        for (auto [name, aa] :
             {std::pair<const char*, QCP::AntialiasedElements>{"no AA fills", QCP::aeFills},
              std::pair<const char*, QCP::AntialiasedElements>{"no AA plottables+fills", QCP::aeFills | QCP::aePlottables}}) {
            plot->setNotAntialiasedElements(aa);
            QElapsedTimer t;
            t.start();
            plot->replot(QCustomPlot::rpImmediateRefresh);
            std::printf("%-28s %.2f ms\n", name, static_cast<double>(t.nsecsElapsed()) / 1e6);
            plot->setNotAntialiasedElements(QCP::aeNone);
        }
        auto timeIt = [&](const char* name) {
            double best = 1e9;
            for (int k = 0; k < 3; ++k) {
                QElapsedTimer t;
                t.start();
                plot->replot(QCustomPlot::rpImmediateRefresh);
                best = std::min(best, static_cast<double>(t.nsecsElapsed()) / 1e6);
            }
            std::printf("%-28s best of 3 %.2f ms\n", name, best);
        };
        timeIt("baseline");
        std::vector<QCPGraph*> fills;
        for (int i = 0; i < plot->graphCount(); ++i)
            fills.push_back(plot->graph(i)->channelFillGraph());
        for (int i = 0; i < plot->graphCount(); ++i)
            plot->graph(i)->setChannelFillGraph(nullptr);
        timeIt("fill to zero, not channel");
        for (int i = 0; i < plot->graphCount(); ++i)
            plot->graph(i)->setChannelFillGraph(fills[static_cast<size_t>(i)]);
        for (int i = 0; i < plot->graphCount(); ++i)
            plot->graph(i)->setLineStyle(QCPGraph::lsLine);
        timeIt("lsLine");
        for (int i = 0; i < plot->graphCount(); ++i)
            plot->graph(i)->setLineStyle(QCPGraph::lsStepLeft);
        std::vector<QBrush> brushes;
        for (int i = 0; i < plot->graphCount(); ++i) {
            brushes.push_back(plot->graph(i)->brush());
            plot->graph(i)->setBrush(QBrush(plot->graph(i)->brush().color()));
        }
        timeIt("opaque brushes?");
        // Put them back: the frame times measured after the probe are the real view's.
        for (int i = 0; i < plot->graphCount(); ++i)
            plot->graph(i)->setBrush(brushes[static_cast<size_t>(i)]);
        for (int i = 0; i < plot->graphCount(); ++i) {
            QCPGraph* g = plot->graph(i);
            const bool was = g->visible();
            g->setVisible(false);
            QElapsedTimer t;
            t.start();
            plot->replot(QCustomPlot::rpImmediateRefresh);
            std::printf("without graph %-20s %.2f ms (%d points)\n", qPrintable(g->name()),
                        static_cast<double>(t.nsecsElapsed()) / 1e6, g->dataCount());
            g->setVisible(was);
        }
        for (int i = 0; i < plot->layerCount(); ++i) {
            QCPLayer* l = plot->layer(i);
            const bool was = l->visible();
            l->setVisible(false);
            QElapsedTimer t;
            t.start();
            plot->replot(QCustomPlot::rpImmediateRefresh);
            std::printf("without layer %-10s %.2f ms\n", qPrintable(l->name()), static_cast<double>(t.nsecsElapsed()) / 1e6);
            l->setVisible(was);
        }
    }
    // Zoom and pan around the middle event, where the trace is dense (many_small spends its
    // first 3.3 s building the model with few events).
    const DeviceModel& m = doc->devices[0];
    const double centre = m.x(m.eventCount() / 2, XAxisMode::Time);
    const double span = m.xMax(XAxisMode::Time);
    measure(
        "category: zoom in (wheel)",
        [&](int i) {
        const double w = span * std::pow(0.85, i + 1);
        view.setXRange(centre - w / 2, centre + w / 2);
        },
        40);
    measure(
        "category: pan (drag)",
        [&](int i) {
        const double w = span * 0.1;
        const double c = centre + w * 0.02 * (i % 40 < 20 ? i % 20 : 20 - i % 20);
        view.setXRange(c - w / 2, c + w / 2);
        },
        120);
    measure(
        "category: zoomed out pan", [&](int i) { view.panBy(i % 2 ? 0.001 : -0.001); }, 60);

    AllocationTimelineView alloc;
    alloc.resize(width, height);
    alloc.setDocument(doc, 0);
    alloc.show();
    settle(100);
    QCustomPlot* ap = alloc.plot();
    std::vector<double> ms;
    double renderMs = 0;
    const QCPRange full = ap->xAxis->range();
    for (int i = 0; i < 60; ++i) {
        QElapsedTimer t;
        t.start();
        const double w = i < 30 ? full.size() * std::pow(0.9, i) : full.size() * 0.05;
        const double c = i < 30 ? centre : centre + (i - 30) * 0.002 * full.size();
        ap->xAxis->setRange(c - w / 2, c + w / 2);
        ap->replot(QCustomPlot::rpImmediateRefresh);
        ms.push_back(static_cast<double>(t.nsecsElapsed()) / 1e6);
        renderMs += alloc.bands()->lastRenderMs();
    }
    std::sort(ms.begin(), ms.end());
    std::printf("%-28s frames %3d  mean %6.2f ms  median %6.2f ms  p95 %6.2f ms  max %6.2f ms  (band image %.2f ms a frame)\n",
                "allocations: zoom+pan", 60, std::accumulate(ms.begin(), ms.end(), 0.0) / 60.0, ms[30], ms[57], ms.back(),
                renderMs / 60.0);
    return 0;
}

int frametime(const QString& file, int width, int height)
{
    return frametimeOf(analyzeFile(file.toStdString()), file, width, height);
}

// The window as a user gets it: MainWindow opens FILE through its Loader (the staged load),
// and the times from choosing the file are taken at each stage: the curves' tab painted
// (grab of the whole window right after curvesReady was handled), categories, and done;
// then the frame times on the loaded document (the same measures as frametime). Run it under
// /usr/bin/time for the process's peak memory.
int appopen(const QString& file, int width, int height)
{
    MainWindow window;
    window.resize(width, height);
    window.show();
    settle(100);
    QElapsedTimer t;
    double curvesPaint = -1, attributedAt = -1, loadedAt = -1;
    std::shared_ptr<const Document> loaded;
    QString failure;
    // Queued after MainWindow's own handler (connected first), so the tab exists.
    QObject::connect(window.loader(), &Loader::curvesReady, &window, [&] {
        QApplication::processEvents();
        const QPixmap painted = window.grab();
        if (!painted.isNull() && curvesPaint < 0)
            curvesPaint = static_cast<double>(t.nsecsElapsed()) / 1e9;
    });
    QObject::connect(window.loader(), &Loader::attributed, &window,
                     [&] { attributedAt = static_cast<double>(t.nsecsElapsed()) / 1e9; });
    QObject::connect(window.loader(), &Loader::snapshotLoaded, &window, [&](const QString&, std::shared_ptr<const Document> d) {
        QApplication::processEvents();
        (void)window.grab();
        loadedAt = static_cast<double>(t.nsecsElapsed()) / 1e9;
        loaded = std::move(d);
    });
    QObject::connect(window.loader(), &Loader::loadFailed, &window,
                     [&](const QString&, const QString& message) { failure = message; });
    t.start();
    window.openFile(file);
    while (!loaded && failure.isEmpty())
        QApplication::processEvents(QEventLoop::WaitForMoreEvents, 50);
    if (!failure.isEmpty()) {
        std::fprintf(stderr, "%s\n", qPrintable(failure));
        return 1;
    }
    std::printf("{\"file\": \"%s\", \"events\": %lld, \"curves_painted_s\": %.3f, \"attributed_s\": %.3f, "
                "\"loaded_painted_s\": %.3f, \"window\": \"%dx%d\"}\n",
                qPrintable(QFileInfo(file).fileName()), static_cast<long long>(loaded->devices[0].eventCount()), curvesPaint,
                attributedAt, loadedAt, width, height);
    std::fflush(stdout);
    return frametimeOf(loaded, file, width, 600);
}

// From results ready (analyzeFile returned, as the loader thread hands them over) to the
// first complete paint of the snapshot's tab: the tab is built, shown, its queued replots
// run, and every widget in it is painted (grab). The first tab of the process is measured,
// so one-off costs (fonts, styles) are included.
int firstpaint(const QString& file, int width, int height)
{
    QElapsedTimer total;
    total.start();
    const auto doc = analyzeFile(file.toStdString());
    const double analyzeMs = static_cast<double>(total.nsecsElapsed()) / 1e6;
    QElapsedTimer t;
    t.start();
    auto tab = std::make_unique<SnapshotTab>(doc);
    tab->resize(width, height);
    tab->show();
    QApplication::processEvents();
    const QPixmap painted = tab->grab();
    const double paintMs = static_cast<double>(t.nsecsElapsed()) / 1e6;
    std::printf("{\"file\": \"%s\", \"events\": %lld, \"analyze_s\": %.3f, \"first_paint_s\": %.3f, \"view\": \"%dx%d\", "
                "\"painted\": %s}\n",
                qPrintable(QFileInfo(file).fileName()), static_cast<long long>(doc->devices[0].eventCount()), analyzeMs / 1e3,
                paintMs / 1e3, width, height, painted.isNull() ? "false" : "true");
    return painted.isNull() ? 1 : 0;
}

// The application icon: stacked memory areas under a peak marker, drawn once and committed
// as resources/memscope.png.
int icon(const QString& path)
{
    const int size = 256;
    QImage img(size, size, QImage::Format_ARGB32_Premultiplied);
    img.fill(Qt::transparent);
    QPainter p(&img);
    p.setRenderHint(QPainter::Antialiasing);
    QPainterPath frame;
    frame.addRoundedRect(QRectF(8, 8, size - 16, size - 16), 44, 44);
    p.fillPath(frame, QColor(28, 34, 48));
    p.setClipPath(frame);
    const std::vector<std::pair<QColor, std::vector<double>>> layers{
        {QColor(0x00, 0x72, 0xB2), {0.18, 0.18, 0.18, 0.18, 0.18, 0.18, 0.18}},
        {QColor(0xE6, 0x9F, 0x00), {0.0, 0.0, 0.10, 0.10, 0.10, 0.10, 0.10}},
        {QColor(0x00, 0x9E, 0x73), {0.05, 0.20, 0.15, 0.42, 0.18, 0.30, 0.05}},
        {QColor(0x56, 0xB4, 0xE9), {0.02, 0.06, 0.05, 0.08, 0.05, 0.06, 0.02}},
    };
    const double left = 30, right = size - 30, bottom = size - 34, height = 150;
    std::vector<double> base(7, 0.0);
    for (const auto& [color, values] : layers) {
        QPainterPath area;
        std::vector<QPointF> top, low;
        for (size_t i = 0; i < values.size(); ++i) {
            const double x = left + (right - left) * static_cast<double>(i) / 6.0;
            low.emplace_back(x, bottom - base[i] * height / 0.7);
            base[i] += values[i];
            top.emplace_back(x, bottom - base[i] * height / 0.7);
        }
        area.moveTo(low.front());
        for (const QPointF& pt : top)
            area.lineTo(pt);
        for (auto it = low.rbegin(); it != low.rend(); ++it)
            area.lineTo(*it);
        area.closeSubpath();
        p.fillPath(area, color);
    }
    const double peakX = left + (right - left) * 3.0 / 6.0;
    const double peakY = bottom - base[3] * height / 0.7;
    p.setPen(QPen(QColor(255, 90, 90), 6, Qt::SolidLine, Qt::RoundCap));
    p.drawLine(QPointF(peakX, peakY - 14), QPointF(peakX, 40));
    p.setBrush(QColor(28, 34, 48));
    p.drawEllipse(QPointF(peakX, peakY - 4), 11, 11);
    p.end();
    return img.save(path) ? 0 : 1;
}

} // namespace

// The phase lane's LOD alone, zoomed out (the view of "category: zoomed out pan", 1507
// columns): BandLod::columns (coarse levels) against columnsByBand, median of 200 calls each,
// alternating; the lane repeated COPIES times end to end stands in for a longer trace.
int lodbench(const QString& file, int copies)
{
    const auto doc = analyzeFile(file.toStdString());
    const DeviceModel& m = doc->devices[0];
    const BandSet& set = *m.laneBands[static_cast<size_t>(XAxisMode::Time)];
    const double span = m.xMax(XAxisMode::Time) - m.xMin(XAxisMode::Time);
    std::vector<BandLod::Input> in;
    for (int k = 0; k < copies; ++k)
        for (size_t i = set.rowBegin(0); i < set.rowEnd(0); ++i)
            in.push_back({set.bands()[i].x0 + k * span, set.bands()[i].x1 + k * span, set.bands()[i].style});
    QElapsedTimer build;
    build.start();
    const BandLod lod(in);
    const double buildMs = static_cast<double>(build.nsecsElapsed()) / 1e6;
    const double lower = m.xMin(XAxisMode::Time) - 0.001 * span * copies, upper = lower + span * copies * 1.002;
    const int columns = 1507;
    std::vector<double> coarse, byBand;
    size_t differ = 0;
    for (int r = 0; r < 200; ++r) {
        const double shift = (r % 2 ? 0.001 : -0.001) * span * copies;
        QElapsedTimer t;
        t.start();
        const std::vector<int64_t> a = lod.columns(lower + shift, upper + shift, columns);
        coarse.push_back(static_cast<double>(t.nsecsElapsed()) / 1e6);
        t.restart();
        const std::vector<int64_t> b = BandLod::columnsByBand(in, lod.maxX1(), lower + shift, upper + shift, columns);
        byBand.push_back(static_cast<double>(t.nsecsElapsed()) / 1e6);
        for (size_t c = 0; c < a.size(); ++c)
            differ += (a[c] < 0 ? -1 : static_cast<int64_t>(in[static_cast<size_t>(a[c])].key)) !=
                      (b[c] < 0 ? -1 : static_cast<int64_t>(in[static_cast<size_t>(b[c])].key));
    }
    std::sort(coarse.begin(), coarse.end());
    std::sort(byBand.begin(), byBand.end());
    std::printf(
        "%s x%d: %zu phase bands, %d columns, levels built in %.2f ms; coarse median %.3f ms, band by band median %.3f ms; "
        "columns of another colour: %zu\n",
        qPrintable(QFileInfo(file).fileName()), copies, in.size(), columns, buildMs, coarse[100], byBand[100], differ);
    return 0;
}

// The live tab as a user gets it: the main window attached to SOCKET (a `memscope
// replay-serve FILE --rate R` or an agent), each update logged to STATS (MEMSCOPE_LIVE_STATS
// is set here), until the stream ends and the last full analysis is shown; a screenshot of the
// window at the end. Prints what the targets ask: update cost p50/p99, updates a
// second and the longest gap while events arrived, the largest lag, dropped, events shown
// against received, and resident memory at the end.
int live(const QString& socket, const QString& stats, const QString& shot)
{
    QFile::remove(stats);
    qputenv("MEMSCOPE_LIVE_STATS", QFile::encodeName(stats));
    MainWindow window;
    window.resize(shotSize());
    window.show();
    LiveTab* tab = attachLive(&window, socket, {}, window.runner());
    if (!tab)
        return 1;
    tab->setAskBeforeClosing(false);
    QElapsedTimer clock;
    clock.start();
    LiveSession* s = tab->session();
    // Streaming, then until the views and the last full analysis caught up (or 30 min).
    while (clock.elapsed() < 30 * 60 * 1000) {
        QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
        if (s->state() == LiveState::Streaming || s->state() == LiveState::Idle)
            continue;
        const auto v = s->view();
        const auto d = s->document();
        int64_t analysed = 0;
        if (d)
            for (const DeviceTrace& trace : d->analysis->snapshot->devices)
                analysed += static_cast<int64_t>(trace.events.count());
        if (v && d && v->events >= static_cast<int64_t>(s->stats().events) && analysed == v->events)
            break;
    }
    QTest::qWait(300);
    if (!shot.isEmpty())
        window.grab().save(shot);
    QFile f(stats);
    if (!f.open(QIODevice::ReadOnly))
        return 1;
    std::vector<double> ms, t;
    std::vector<int64_t> events, lag, rss;
    int64_t dropped = 0;
    for (const QByteArray& line : f.readAll().split('\n')) {
        const QJsonObject o = QJsonDocument::fromJson(line).object();
        if (o.isEmpty())
            continue;
        ms.push_back(o.value(QStringLiteral("update_ms")).toDouble());
        t.push_back(o.value(QStringLiteral("t_s")).toDouble());
        events.push_back(static_cast<int64_t>(o.value(QStringLiteral("events")).toDouble()));
        lag.push_back(static_cast<int64_t>(o.value(QStringLiteral("lag_events")).toDouble()));
        rss.push_back(static_cast<int64_t>(o.value(QStringLiteral("rss_bytes")).toDouble()));
        dropped = static_cast<int64_t>(o.value(QStringLiteral("dropped")).toDouble());
    }
    if (ms.empty())
        return 1;
    // While events arrived: from the first update to the first that showed them all.
    size_t end = events.size() - 1;
    for (size_t i = 0; i < events.size(); ++i)
        if (events[i] == events.back()) {
            end = i;
            break;
        }
    double gap = 0;
    for (size_t i = 1; i <= end; ++i)
        gap = std::max(gap, t[i] - t[i - 1]);
    std::vector<double> sorted(ms.begin(), ms.begin() + static_cast<std::ptrdiff_t>(end + 1));
    std::sort(sorted.begin(), sorted.end());
    auto pct = [&](double q) { return sorted[std::min(sorted.size() - 1, static_cast<size_t>(q * (sorted.size() - 1) + 0.5))]; };
    const double span = end > 0 ? t[end] - t[0] : 0;
    std::printf("updates %zu over %.2f s while streaming (%.1f a second), longest gap %.0f ms; update_ms p50 %.1f, p99 %.1f, "
                "max %.1f; largest lag %lld events; dropped %lld; events shown %lld of %llu received; full analyses %d; "
                "RSS at the end %.0f MiB (largest %.0f MiB)\n",
                end + 1, span, span > 0 ? static_cast<double>(end) / span : 0.0, gap * 1000, pct(0.5), pct(0.99), sorted.back(),
                static_cast<long long>(*std::max_element(lag.begin(), lag.begin() + static_cast<std::ptrdiff_t>(end + 1))),
                static_cast<long long>(dropped), static_cast<long long>(events.back()),
                static_cast<unsigned long long>(s->stats().events), s->documentsDelivered(),
                static_cast<double>(rss.back()) / (1 << 20),
                static_cast<double>(*std::max_element(rss.begin(), rss.end())) / (1 << 20));
    return 0;
}

// The what-if panel on FILE: the recorded batch and sequence given, checkpointing of every
// block and pure bf16 chosen, the plan under a capacity filled (MEMSCOPE_SHOT_SIZE sets the
// window's size): OUT/<file>_whatif_plan.png. With SHARD ("fsdp2:4"): that sharding chosen
// instead of the changes, OUT/<file>_whatif_<kind>_<n>.png.
int whatIfShot(const QString& outDir, const QString& file, double batch, double seq, double capacityGiB,
               const QString& shard = QString())
{
    QDir().mkpath(outDir);
    QTemporaryDir settingsDir;
    QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, settingsDir.path());
    MainWindow w;
    w.resize(shotSize());
    w.show();
    settle(300);
    w.openFile(file);
    if (!waitLoaded(w, 1)) {
        std::fprintf(stderr, "could not load %s: %s\n", qPrintable(file), qPrintable(w.errorText()));
        return 1;
    }
    SnapshotTab* tab = w.currentTab();
    tab->showDetail(SnapshotTab::DetailTab::WhatIf);
    settle();
    if (auto* split = tab->findChild<QSplitter*>(QStringLiteral("tabSplit"))) {
        const int h = split->height();
        split->setSizes({h * 3 / 10, h - h * 3 / 10}); // the timeline smaller: the what-if is the subject
    }
    WhatIfPanel* panel = tab->whatIf();
    QSignalSpy read(panel, &WhatIfPanel::setupRead);
    if (!panel->setupReady() && !read.wait(120000))
        return 1;
    panel->setRecordedBatch(batch);
    panel->setRecordedSeq(seq);
    panel->setCapacityGiB(capacityGiB);
    ModelChanges c;
    if (shard.isEmpty()) {
        c.checkpoint = -1;
        c.precision = Precision::Bf16;
    } else {
        c.shard = shardingFromText(shard.toStdString());
        if (!c.shard)
            return 1;
    }
    panel->setChanges(c);
    QSignalSpy planned(panel, &WhatIfPanel::planned);
    panel->simulate();
    panel->makePlan();
    if (!planned.wait(600000))
        return 1;
    QElapsedTimer t;
    t.start();
    while (panel->busy() && t.elapsed() < 120000)
        QTest::qWait(20);
    settle(400);
    const QString out = outDir + QLatin1Char('/') + QFileInfo(file).completeBaseName().section(QLatin1Char('.'), 0, 0) +
                        (shard.isEmpty()
                             ? QStringLiteral("_whatif_plan.png")
                             : QStringLiteral("_whatif_") + QString(shard).replace(QLatin1Char(':'), QLatin1Char('_')) +
                                   QStringLiteral(".png"));
    w.grab().save(out);
    std::printf("%s: window %dx%d\n", qPrintable(out), w.width(), w.height());
    return 0;
}

int flameShots(const QString& outDir, const QStringList& files); // flame_shots.cpp

// The comparison tab of B against A, its table scrolled to the call sites (their op and module
// columns): OUTDIR/compare_A_B.png.
int compareShot(const QString& outDir, const QString& a, const QString& b)
{
    QDir().mkpath(outDir);
    QTemporaryDir settingsDir;
    QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, settingsDir.path());
    MainWindow w;
    w.resize(shotSize());
    w.show();
    w.compareFiles({a, b});
    QElapsedTimer t;
    t.start();
    while (!w.comparisonTab(0) && t.elapsed() < 120000)
        QTest::qWait(20);
    if (!w.comparisonTab(0)) {
        std::fprintf(stderr, "could not compare %s and %s: %s\n", qPrintable(a), qPrintable(b), qPrintable(w.errorText()));
        return 1;
    }
    settle(300);
    auto* table = w.comparisonTab(0)->findChild<QTableView*>();
    for (int r = 0; table && r < table->model()->rowCount(); ++r)
        if (table->model()->index(r, 0).data().toString().startsWith(QStringLiteral("Call site"))) {
            table->scrollTo(table->model()->index(r, 0), QAbstractItemView::PositionAtTop);
            table->setCurrentIndex(table->model()->index(r, 0));
            break;
        }
    settle();
    w.grab().save(outDir + QStringLiteral("/compare_") + QFileInfo(a).completeBaseName() + QLatin1Char('_') +
                  QFileInfo(b).completeBaseName() + QStringLiteral(".png"));
    return 0;
}

int main(int argc, char** argv)
{
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("memscope"));
    QApplication::setOrganizationName(QStringLiteral("memscope-ui-tool"));
    QApplication::setApplicationVersion(QStringLiteral("tool"));
    const QStringList args = app.arguments();
    if (args.size() >= 4 && args[1] == QStringLiteral("screenshots"))
        return screenshots(args[2], args.mid(3));
    if (args.size() >= 7 && args[1] == QStringLiteral("whatif")) // whatif OUTDIR FILE BATCH SEQ CAPACITY_GIB [SHARD]
        return whatIfShot(args[2], args[3], args[4].toDouble(), args[5].toDouble(), args[6].toDouble(),
                          args.size() >= 8 ? args[7] : QString());
    if (args.size() >= 4 && args[1] == QStringLiteral("flame"))
        return flameShots(args[2], args.mid(3));
    if (args.size() >= 5 && args[1] == QStringLiteral("compare"))
        return compareShot(args[2], args[3], args[4]);
    if (args.size() >= 4 && args[1] == QStringLiteral("fields"))
        return fieldShots(args[2], args.mid(3));
    if (args.size() >= 8 && args[1] == QStringLiteral("crop")) // crop IN X Y W H OUT: for looking at details
        return QImage(args[2]).copy(args[3].toInt(), args[4].toInt(), args[5].toInt(), args[6].toInt()).save(args[7]) ? 0 : 1;
    if (args.size() >= 3 && args[1] == QStringLiteral("icon"))
        return icon(args[2]);
    if (args.size() >= 3 && args[1] == QStringLiteral("firstpaint"))
        return firstpaint(args[2], args.size() > 3 ? args[3].toInt() : 1600, args.size() > 4 ? args[4].toInt() : 1000);
    if (args.size() >= 3 && args[1] == QStringLiteral("appopen"))
        return appopen(args[2], args.size() > 3 ? args[3].toInt() : 1600, args.size() > 4 ? args[4].toInt() : 1000);
    if (args.size() >= 3 && args[1] == QStringLiteral("lodbench"))
        return lodbench(args[2], args.size() > 3 ? std::max(1, args[3].toInt()) : 1);
    if (args.size() >= 4 && args[1] == QStringLiteral("live"))
        return live(args[2], args[3], args.size() > 4 ? args[4] : QString());
    if (args.size() >= 3 && args[1] == QStringLiteral("frametime"))
        return frametime(args[2], args.size() > 3 ? args[3].toInt() : 1600, args.size() > 4 ? args[4].toInt() : 600);
    std::fprintf(
        stderr,
        "usage: memscope_ui_tool screenshots OUTDIR FILE... | compare OUTDIR A B | compare OUTDIR A B | frametime FILE [W H] | firstpaint FILE [W H] | appopen FILE [W H] | "
        "live SOCKET STATS.jsonl [SHOT.png]\n");
    return 2;
}
