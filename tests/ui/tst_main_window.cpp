#include "ui/plot/allocation_bands_layer.h"
#include "ui/pages/allocation_timeline_view.h"
#include "ui/pages/allocator_state_view.h"
#include "attribute/attributor.h"
#include "ui/plot/category_areas_layer.h"
#include "ui/plot/category_timeline_view.h"
#include "diagnose/diagnoser.h"
#include "diagnose/estimator.h"
#include "diagnose/training_measurement.h"
#include "ui/pages/diagnostics_panel.h"
#include "ui/pages/estimator_panel.h"
#include "snapshot/frame_classifier.h"
#include "query/point_report.h"
#include "io/summary_writer.h"
#include "ui/loader.h"
#include "ui/main_window.h"
#include "ui/pages/peak_panel.h"
#include "ui/style/plot_theme.h"
#include "replay/replay.h"
#include "ui/pages/segment_map_widget.h"
#include "snapshot/snapshot_reader.h"
#include "ui/pages/snapshot_tab.h"
#include "ui/pages/stack_view.h"
#include "ui/plot/timeline_plotter.h"

#include <QLabel>
#include <QFileInfo>
#include <QDir>
#include <QToolButton>
#include <QFileDialog>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QProcess>
#include <QSettings>
#include <QSignalSpy>
#include <QStatusBar>
#include <QSplitter>
#include <QTabWidget>
#include <QTimer>
#include <QTableView>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTreeWidget>
#include <QTreeWidgetItemIterator>
#include <QFontMetrics>
#include <QHeaderView>
#include <QUrl>
#include <qcustomplot.h>

#include <numeric>

using namespace memscope;

namespace {

QString sample(const char* name) { return QStringLiteral(MEMSCOPE_SAMPLES_DIR "/%1.pickle").arg(QLatin1String(name)); }

QString bytes(int64_t b) { return QString::fromStdString(formatBytes(b)); }

// The core's diagnosis of the file, computed here without the GUI's document.
struct CoreDiagnosis {
    std::shared_ptr<const Attribution> attribution;
    std::unique_ptr<FrameClassifier> frames;
    std::shared_ptr<const DiagnosisResult> result;
};
CoreDiagnosis diagnoseFile(const QString& file)
{
    CoreDiagnosis c;
    c.attribution = attribute(replaySnapshot(readSnapshotFile(file.toStdString())));
    c.frames = std::make_unique<FrameClassifier>(*c.attribution->replay->snapshot);
    c.result = diagnose(*c.attribution, *c.frames);
    return c;
}

QAction* menuAction(MainWindow& w, const QKeySequence& key)
{
    for (QAction* a : w.menuBar()->findChildren<QAction*>())
        if (a->shortcut() == key)
            return a;
    return nullptr;
}

} // namespace

// Real snapshots loaded into the window: every view shows the core's numbers.
class TestMainWindow : public QObject {
    Q_OBJECT
    QTemporaryDir m_settings;
    QTemporaryDir m_generated;

    // The window at the size the tests' pixel checks assume, shown and exposed.
    static bool showWindow(MainWindow& w)
    {
        w.resize(1600, 1000);
        w.show();
        return QTest::qWaitForWindowExposed(&w);
    }

    static bool open(MainWindow& w, const QString& file, int expectedTabs)
    {
        w.openFile(file);
        QSignalSpy idle(w.loader(), &Loader::idle);
        if (w.loader()->isBusy() && !idle.wait(60000))
            return false;
        QTest::qWait(20);
        return w.tabCount() == expectedTabs;
    }

private slots:
    void initTestCase()
    {
        QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, m_settings.path());
        QCoreApplication::setOrganizationName(QStringLiteral("memscope-tests"));
        QCoreApplication::setApplicationName(QStringLiteral("memscope"));
        QCoreApplication::setApplicationVersion(QStringLiteral("0.0-test"));
    }

    // An odd detail the reader took as unknown (a torch.compile frame line of 2^64-1) opens the
    // file and says so in the status bar; a file with nothing odd says only that it opened.
    void oddDetailsInTheStatusBar_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("expected");
        QTest::newRow("compile line") << QStringLiteral(MEMSCOPE_TESTDATA_DIR "/formats/compile_line.pickle")
                                      << QStringLiteral("shown as unknown");
        QTest::newRow("nothing odd") << sample("release") << QString();
    }
    void oddDetailsInTheStatusBar()
    {
        QFETCH(QString, file);
        QFETCH(QString, expected);
        MainWindow w;
        QVERIFY(showWindow(w));
        QVERIFY2(open(w, file, 1), qPrintable(w.errorText()));
        const QString message = w.statusBar()->currentMessage();
        QVERIFY2(message.startsWith(QStringLiteral("Opened ")), qPrintable(message));
        if (expected.isEmpty())
            QVERIFY2(!message.contains(QLatin1Char(';')), qPrintable(message));
        else
            QVERIFY2(message.contains(expected), qPrintable(message));
    }

    void viewsShowTheCoresNumbers_data()
    {
        QTest::addColumn<QString>("file");
        for (const char* name : {"llm_bs16", "llm_bs2_cpp", "many_small", "oom", "release", "libtorch_mlp", "loss_leak"})
            QTest::newRow(name) << sample(name);
    }
    void viewsShowTheCoresNumbers()
    {
        QFETCH(QString, file);
        MainWindow w;
        QVERIFY(showWindow(w));
        QVERIFY2(open(w, file, 1), qPrintable(w.errorText()));
        SnapshotTab* tab = w.currentTab();
        QVERIFY(tab);
        QVERIFY(w.windowTitle().contains(QFileInfo(file).fileName()));
        const Document& doc = tab->document();
        const DeviceModel& m = tab->deviceModel();
        const DeviceReplay& d = *m.replay;
        const DeviceAttribution& a = *m.attribution;
        const int64_t pe = peakEvent(d);
        QCOMPARE(tab->selectedEvent(), pe);

        // Category timeline: the peak label, the drawn curves, the hover text.
        CategoryTimelineView* tl = tab->timeline();
        tl->plot()->replot(QCustomPlot::rpImmediateRefresh);
        QVERIFY(tl->peakLabelText().contains(bytes(d.peakRequested.bytes)));
        QCPGraph* requested = tl->plotter()->requestedGraph();
        QCPGraph* reserved = tl->plotter()->reservedGraph();
        QVERIFY(requested && reserved);
        auto maxOf = [](QCPGraph* g) {
            double mx = 0;
            for (auto it = g->data()->constBegin(); it != g->data()->constEnd(); ++it)
                mx = std::max(mx, it->value);
            return mx;
        };
        // Per-pixel sampling keeps the peaks exactly, and hands over at most 3 points a pixel.
        QCOMPARE(static_cast<int64_t>(maxOf(requested)), d.peakRequested.bytes);
        QCOMPARE(static_cast<int64_t>(maxOf(reserved)), d.peakReserved.bytes);
        QVERIFY(requested->dataCount() <= 3 * tl->mainRect()->width() + 4);
        QVERIFY(tl->pointsHanded() <= 3 * tl->mainRect()->width() + 4);
        // The stacked areas: one column per pixel, the tallest one is the peak, and each
        // column stacks the categories of its event (they add up to the requested total).
        const auto& columns = tl->plotter()->areas()->columns();
        QCOMPARE(static_cast<int>(columns.size()), tl->mainRect()->width());
        int64_t tallest = 0;
        for (int64_t e : columns)
            if (e >= -1)
                tallest = std::max(tallest, d.requestedAfter(e));
        QCOMPARE(tallest, d.peakRequested.bytes);
        // Every legend entry is a category present in the trace, plus the two lines.
        int categoriesPresent = 0;
        for (Category c : kAllCategories)
            categoriesPresent += m.categoryPresent[static_cast<size_t>(c)];
        QCOMPARE(tl->plot()->legend->itemCount(), categoriesPresent + 2);
        const QString hover = tl->hoverText(pe);
        QVERIFY(hover.contains(bytes(d.peakRequested.bytes)));
        QVERIFY(hover.contains(bytes(d.reservedAfter(pe))));
        for (Category c : kAllCategories)
            if (a.peakByCategory[static_cast<size_t>(c)] > 0)
                QVERIFY2(hover.contains(bytes(a.peakByCategory[static_cast<size_t>(c)])), qPrintable(hover));

        // Peak panel: totals, categories, live allocations, call sites.
        PeakPanel* peak = tab->peakPanel();
        const PointReport& r = peak->report();
        QCOMPARE(r.event, pe);
        QCOMPARE(r.requested, d.peakRequested.bytes);
        QVERIFY(r.globalPeak);
        QVERIFY(peak->headerText().contains(bytes(d.peakRequested.bytes)));
        for (size_t c = 0; c < kCategoryCount; ++c)
            QCOMPARE(r.byCategory[c], a.peakByCategory[c]);
        const auto live = d.activeAfter(pe);
        QCOMPARE(static_cast<size_t>(peak->activeTable()->model()->rowCount()), live.size());
        int64_t liveSum = 0;
        for (const ActiveAllocation& l : r.live)
            liveSum += l.size;
        QCOMPARE(liveSum, d.peakRequested.bytes);
        int64_t siteSum = 0;
        for (const CallSite& s : r.callSites)
            siteSum += s.bytes;
        QCOMPARE(siteSum, d.peakRequested.bytes);
        QCOMPARE(peak->callSiteTable()->model()->rowCount(), static_cast<int>(r.callSites.size()));
        // The breakdown table shows each category's bytes as the core formats them.
        QTableWidget* bt = peak->breakdownTable();
        int64_t tableSum = 0;
        for (int row = 0; row + 1 < bt->rowCount(); ++row) {
            const auto c = static_cast<Category>(bt->item(row, 0)->data(Qt::UserRole).toInt());
            QCOMPARE(bt->item(row, 1)->text(), bytes(a.peakByCategory[static_cast<size_t>(c)]));
            tableSum += bt->item(row, 1)->data(Qt::UserRole).toLongLong();
        }
        QCOMPARE(tableSum, d.peakRequested.bytes);
        QCOMPARE(bt->item(bt->rowCount() - 1, 1)->text(), bytes(d.peakRequested.bytes));
        // Sorting the live table by size puts the largest allocation first.
        peak->activeTable()->sortByColumn(0, Qt::DescendingOrder);
        QCOMPARE(peak->activeTable()->model()->index(0, 0).data().toString(), bytes(r.live.front().size));
        peak->activeTable()->sortByColumn(0, Qt::AscendingOrder);
        QCOMPARE(peak->activeTable()->model()->index(0, 0).data().toString(), bytes(r.live.back().size));
        // Selecting a row shows its stack: the user's frames first, the library folded.
        peak->activeTable()->sortByColumn(0, Qt::DescendingOrder);
        peak->activeTable()->setCurrentIndex(peak->activeTable()->model()->index(0, 0));
        StackView* stack = peak->stackView();
        const ActiveAllocation& top = r.live.front();
        if (top.stack.valid()) {
            const auto frames = doc.snapshot().stacks.frames(top.stack);
            QCOMPARE(stack->userFrameCount() + stack->libraryFrameCount(), static_cast<int>(frames.size()));
            QTreeWidgetItem* first = stack->tree()->topLevelItem(0);
            QVERIFY(first->text(0).startsWith(QStringLiteral("Your code")) ||
                    first->text(0).startsWith(QStringLiteral("No frames of your own")));
            QVERIFY(first->isExpanded());
            if (stack->libraryFrameCount() > 0) {
                QTreeWidgetItem* lib = stack->tree()->topLevelItem(1);
                QVERIFY(lib->text(0).startsWith(QStringLiteral("Library frames")));
                QVERIFY(!lib->isExpanded());
                QCOMPARE(lib->childCount(), stack->libraryFrameCount());
            }
        }

        // Allocator state at the peak: segments add up to reserved, blocks to requested.
        AllocatorStateView* alloc = tab->allocator();
        const AllocatorState& st = alloc->state();
        QCOMPARE(st.event, pe);
        QCOMPARE(static_cast<int64_t>(st.reserved), d.reservedAfter(pe));
        QCOMPARE(static_cast<int64_t>(st.requested + st.unplacedBytes), d.peakRequested.bytes);
        QCOMPARE(st.unplacedCount, int64_t{0});
        QCOMPARE(st.free.bytes + st.inUse, st.reserved);
        QVERIFY(st.requested <= st.inUse);
        QVERIFY(st.inUse - st.requested <= kAllocatorBlockRounding * static_cast<uint64_t>(st.activeCount));
        QVERIFY(alloc->summaryText().contains(bytes(d.reservedAfter(pe))));
        QVERIFY(alloc->summaryText().contains(bytes(d.peakRequested.bytes)));

        // Allocation timeline: bands drawn, every band hit is an allocation live at its column.
        tab->detailTabs()->setCurrentIndex(1);
        AllocationTimelineView* at = tab->allocations();
        at->plot()->replot(QCustomPlot::rpImmediateRefresh);
        AllocationBandsLayer* bands = at->bands();
        QVERIFY(!bands->image().isNull());
        const QRect area = at->plot()->axisRect()->rect();
        // Its total line: at most a point a pixel, reaching the peak.
        QCPGraph* total = at->plot()->graph(0);
        QVERIFY(total->dataCount() <= area.width() + 2);
        double totalTop = 0;
        for (auto it = total->data()->constBegin(); it != total->data()->constEnd(); ++it)
            totalTop = std::max(totalTop, it->value);
        QCOMPARE(static_cast<int64_t>(totalTop), d.peakRequested.bytes);
        int hits = 0;
        int shaded = 0;
        for (int x = area.left() + 2; x < area.right(); x += std::max(1, area.width() / 40))
            for (int y = area.top() + 2; y < area.bottom(); y += std::max(1, area.height() / 48)) {
                const AllocationId id = bands->allocationAt(QPointF(x, y));
                if (!id.valid())
                    continue;
                ++hits;
                QVERIFY(d.allocation(id).activeAfter(bands->eventAtPixel(x)));
                // Inside a band (the same allocation 2 px above and below), the pixel is a
                // shade of its category's colour: the same hue.
                if (bands->allocationAt(QPointF(x, y - 2)) != id || bands->allocationAt(QPointF(x, y + 2)) != id)
                    continue;
                const QColor px = bands->image().pixelColor(x - area.left(), y - area.top());
                const QColor base = categoryQColor(a.category(id));
                if (base.hsvSaturation() > 40 && px.hsvSaturation() > 40) {
                    const int dh = std::abs(px.hsvHue() - base.hsvHue());
                    QVERIFY2(
                        std::min(dh, 360 - dh) <= 4,
                        qPrintable(QStringLiteral("pixel %1,%2: %3, category %4").arg(x).arg(y).arg(px.name(), base.name())));
                    ++shaded;
                }
            }
        QVERIFY(hits > 0);
        if (QTest::currentDataTag() == QLatin1String("llm_bs16"))
            QVERIFY2(shaded > 20, qPrintable(QString::number(shaded))); // most of its bands are wide and coloured
        // Each column of the image is as tall as the requested bytes of its event (the
        // columns' live sets are carried from column to column; this checks them).
        const QImage& img = bands->image();
        const double rowsPerByte = img.height() / at->plot()->yAxis->range().size();
        int checked = 0;
        for (int col = 0; col < img.width(); col += 3) {
            const int64_t e = bands->eventAtPixel(area.left() + col + 0.5);
            if (e < -1)
                continue;
            int painted = 0;
            for (int y = 0; y < img.height(); ++y)
                painted += qAlpha(img.pixel(col, y)) > 0;
            QVERIFY2(std::abs(painted - static_cast<double>(d.requestedAfter(e)) * rowsPerByte) <= 2.0,
                     qPrintable(QStringLiteral("column %1 event %2: %3 rows").arg(col).arg(e).arg(painted)));
            ++checked;
        }
        QVERIFY(checked > 100);
        // Zoomed into the busiest stretch too, where columns follow each other event by event.
        {
            const int64_t mid = m.eventCount() / 2;
            const double w = std::max(m.x(std::min(mid + 400, m.eventCount() - 1), XAxisMode::Time) -
                                          m.x(std::max<int64_t>(mid - 400, 0), XAxisMode::Time),
                                      1e-4);
            at->setXRange(m.x(mid, XAxisMode::Time) - w / 2, m.x(mid, XAxisMode::Time) + w / 2);
            at->plot()->replot(QCustomPlot::rpImmediateRefresh);
            const QImage& zoomed = bands->image();
            for (int col = 0; col < zoomed.width(); col += 7) {
                const int64_t e = bands->eventAtPixel(area.left() + col + 0.5);
                if (e < -1)
                    continue;
                int painted = 0;
                for (int y = 0; y < zoomed.height(); ++y)
                    painted += qAlpha(zoomed.pixel(col, y)) > 0;
                QVERIFY2(std::abs(painted - static_cast<double>(d.requestedAfter(e)) * rowsPerByte) <= 2.0,
                         qPrintable(QStringLiteral("zoomed column %1 event %2: %3 rows").arg(col).arg(e).arg(painted)));
            }
            const auto [lo, hi] = tab->timeline()->xRange();
            at->setXRange(lo, hi);
            at->plot()->replot(QCustomPlot::rpImmediateRefresh);
        }
        // Clicking the band at the peak column's bottom selects the oldest live allocation there.
        const double peakX = at->plot()->xAxis->coordToPixel(m.x(std::max<int64_t>(pe, 0), XAxisMode::Time));
        const int64_t colEvent = bands->eventAtPixel(peakX);
        QVERIFY(colEvent >= -1);
        const auto colLive = d.activeAfter(colEvent);
        if (!colLive.empty() && d.allocation(colLive.front()).size * 1.0 / d.peakRequested.bytes > 0.02) {
            QTest::mouseClick(at->plot(), Qt::LeftButton, {}, QPoint(static_cast<int>(peakX), area.bottom() - 1));
            QCOMPARE(at->selectedAllocation(), colLive.front());
            QVERIFY(at->detailsText().contains(bytes(static_cast<int64_t>(d.allocation(colLive.front()).size))));
        }
        // Search by frame text and by address.
        const FrameClassifier& fc = *doc.frames();
        int64_t expected = 0;
        for (const Allocation& al : d.allocations) {
            bool hit = false;
            if (al.stack.valid())
                for (FrameId f : doc.snapshot().stacks.frames(al.stack))
                    hit = hit ||
                          doc.snapshot().str(doc.snapshot().frames.frame(f).filename).find("train.py") !=
                              std::string_view::npos ||
                          doc.snapshot().str(doc.snapshot().frames.frame(f).name).find("train.py") != std::string_view::npos;
            expected += hit;
        }
        (void)fc;
        at->setSearchText(QStringLiteral("train.py"));
        QCOMPARE(at->matchCount(), expected);
        const Allocation& first = d.allocations.at(d.allocations.size() / 2);
        at->setSearchText(QStringLiteral("0x") + QString::number(first.addr, 16));
        QVERIFY(at->matchCount() >= 1);
        at->setSearchText(QString());
        QCOMPARE(at->matchCount(), int64_t{0});

        // Clicking another time moves every view there.
        const int64_t other = m.eventCount() / 3;
        tab->setSelectedEvent(other);
        QCOMPARE(peak->report().event, other);
        QCOMPARE(peak->report().requested, d.requestedAfter(other));
        QVERIFY(!peak->report().globalPeak);
        QCOMPARE(alloc->state().event, other);
        QCOMPARE(static_cast<int64_t>(alloc->state().reserved), d.reservedAfter(other));
        tab->goToPeak();
        QCOMPARE(peak->report().event, pe);
    }

    // A view in a detail tab that is not shown does not render (at 10M events the allocations
    // timeline costs a frame's budget); it catches up, with the current range, when shown.
    void hiddenViewsWaitUntilShown()
    {
        MainWindow w;
        QVERIFY(showWindow(w));
        QVERIFY(open(w, sample("llm_bs16"), 1));
        SnapshotTab* tab = w.currentTab();
        tab->detailTabs()->setCurrentIndex(0);
        QTest::qWait(20);
        AllocationTimelineView* at = tab->allocations();
        QVERIFY(!at->isVisible());
        const qint64 before = at->bands()->image().cacheKey();
        const auto [lo, hi] = tab->timeline()->xRange();
        tab->timeline()->setXRange(lo + (hi - lo) * 0.25, lo + (hi - lo) * 0.5);
        QTest::qWait(50);
        QCOMPARE(at->plot()->xAxis->range().lower, lo + (hi - lo) * 0.25); // synced, not drawn
        QCOMPARE(at->bands()->image().cacheKey(), before);
        tab->detailTabs()->setCurrentIndex(1);
        QVERIFY(at->isVisible());
        QVERIFY(at->bands()->image().cacheKey() != before); // drawn before its first paint
        const QImage shown = at->bands()->image();
        QVERIFY(!shown.isNull());
        at->plot()->replot(QCustomPlot::rpImmediateRefresh);
        QCOMPARE(at->bands()->image(), shown); // and for the range it shows
    }

    // Clicking the chart selects the time under the mouse; Shift+drag selects a range.
    void timelineMouse()
    {
        MainWindow w;
        QVERIFY(showWindow(w));
        QVERIFY(open(w, sample("llm_bs16"), 1));
        SnapshotTab* tab = w.currentTab();
        CategoryTimelineView* tl = tab->timeline();
        QCustomPlot* plot = tl->plot();
        plot->replot(QCustomPlot::rpImmediateRefresh);
        const QRect area = tl->mainRect()->rect();
        QVERIFY(area.height() > 250);
        const QPoint p(area.left() + area.width() / 4, area.center().y());
        QTest::mouseClick(plot, Qt::LeftButton, {}, p);
        const int64_t e = tab->deviceModel().eventAtX(plot->xAxis->pixelToCoord(p.x()), XAxisMode::Time);
        QCOMPARE(tab->selectedEvent(), e);
        QCOMPARE(tab->peakPanel()->report().event, e);

        const QPoint a(area.left() + area.width() / 2, area.center().y());
        const QPoint b(area.left() + area.width() * 3 / 4, area.center().y());
        QTest::mousePress(plot, Qt::LeftButton, Qt::ShiftModifier, a);
        QMouseEvent move(QEvent::MouseMove, QPointF(b), plot->mapToGlobal(QPointF(b)), Qt::NoButton, Qt::LeftButton,
                         Qt::ShiftModifier);
        QCoreApplication::sendEvent(plot, &move);
        QTest::mouseRelease(plot, Qt::LeftButton, Qt::ShiftModifier, b);
        const auto range = tl->rangeSummary();
        QVERIFY(range.has_value());
        const DeviceModel& m = tab->deviceModel();
        const RangeSummary expect = summarizeRange(*m.replay, *m.events, range->firstEvent,
                                                   range->lastEvent); // a scan, no pyramid
        int64_t mx = 0;
        for (int64_t i = range->firstEvent; i <= range->lastEvent; ++i)
            mx = std::max(mx, m.requestedAfter(i));
        QCOMPARE(range->peakBytes, mx);
        QCOMPARE(range->allocatedBytes, expect.allocatedBytes);
        QCOMPARE(range->freedBytes, expect.freedBytes);
        QCOMPARE(range->peakEvent, expect.peakEvent); // the pyramid's answer is the scan's, ties included
        QVERIFY(range->firstEvent > 0 && range->lastEvent > range->firstEvent);

        // Wheel zoom narrows the range; the allocation timeline follows; double-click resets.
        const auto before = tl->xRange();
        QWheelEvent wheel(QPointF(area.center()), plot->mapToGlobal(QPointF(area.center())), QPoint(), QPoint(0, 120),
                          Qt::NoButton, Qt::NoModifier, Qt::NoScrollPhase, false);
        QCoreApplication::sendEvent(plot, &wheel);
        const auto zoomed = tl->xRange();
        QVERIFY(zoomed.second - zoomed.first < before.second - before.first);
        const QCPRange ar = tab->allocations()->plot()->xAxis->range();
        QCOMPARE(ar.lower, zoomed.first);
        QCOMPARE(ar.upper, zoomed.second);
        QTest::mouseDClick(plot, Qt::LeftButton, {}, area.center());
        const auto reset = tl->xRange();
        QCOMPARE(reset.first, before.first);
        QCOMPARE(reset.second, before.second);
        QVERIFY(!tl->rangeSummary().has_value());

        // The event-index axis shows the same peak.
        tab->setXAxisMode(XAxisMode::EventIndex);
        plot->replot(QCustomPlot::rpImmediateRefresh);
        QVERIFY(tl->peakLabelText().contains(QStringLiteral("event")));
        QCOMPARE(plot->xAxis->range().upper > static_cast<double>(m.eventCount() - 2), true);
    }

    // A file large enough that its stages are apart (300k events: ~0.2 s replayed, ~0.6 s categorised),
    // made once by the generator.
    QString stagedFile()
    {
        const QString generator = QStringLiteral(MEMSCOPE_GEN_SNAPSHOT);
        const QString file = m_generated.filePath(QStringLiteral("gen_300k.pickle"));
        if (!QFileInfo::exists(file)) {
            QProcess gen;
            gen.start(generator, {QStringLiteral("--events"), QStringLiteral("300000"), QStringLiteral("--out"), file});
            if (!gen.waitForFinished(120000) || gen.exitCode() != 0)
                return {};
        }
        return file;
    }

    // The window fills in by stage: the tab opens on the curves (requested and reserved drawn,
    // no category areas, phase lanes or findings; "Categorising…" in their place), then the
    // same tab gets the categories and the findings and keeps the zoom and the selected time.
    void windowFillsInByStage()
    {
        const QString file = stagedFile();
        QVERIFY2(!file.isEmpty(), "tools/memscope_gen_snapshot could not write the 300k-event file");
        const QString shots = qEnvironmentVariable("MEMSCOPE_STAGE_SHOTS"); // a folder: grab the window at each stage
        MainWindow w;
        QVERIFY(showWindow(w));
        QStringList order;
        SnapshotTab* curvesTab = nullptr;
        int requestedPoints = 0, reservedPoints = 0, graphsAtCurves = -1;
        bool categoryPresent = true;
        QString pending, peakHeader, loadLabel;
        std::pair<double, double> zoom;
        // Connected after the window's own slots, so each runs once the window has taken the stage.
        connect(w.loader(), &Loader::curvesReady, this, [&](const QString&, std::shared_ptr<const Document> d) {
            order << QStringLiteral("curves");
            QVERIFY(!d->attributed());
            curvesTab = w.currentTab();
            QVERIFY(curvesTab);
            CategoryTimelineView* tl = curvesTab->timeline();
            tl->plot()->replot(QCustomPlot::rpImmediateRefresh); // lays out, so the plotter samples the curves
            requestedPoints = tl->plotter()->requestedGraph()->data()->size();
            reservedPoints = tl->plotter()->reservedGraph()->data()->size();
            graphsAtCurves = tl->plot()->graphCount();
            categoryPresent = false;
            for (bool present : tl->model()->categoryPresent)
                categoryPresent = categoryPresent || present;
            pending = tl->pendingText();
            for (const auto& band : tl->laneBands()->bands()) // annotations are known; phases are not yet
                QVERIFY(band.row != 0);
            peakHeader = curvesTab->peakPanel()->headerText();
            QCOMPARE(curvesTab->diagnostics()->findingCount(), 0);
            // The user zooms in while the categories are computed: the zoom is kept.
            tl->zoomBy(0.5);
            zoom = tl->xRange();
            curvesTab->setSelectedEvent(1000);
            if (!shots.isEmpty()) {
                tl->plot()->replot(QCustomPlot::rpImmediateRefresh);
                w.grab().save(shots + QStringLiteral("/stage_curves.png"));
            }
        });
        connect(w.loader(), &Loader::attributed, this, [&] { order << QStringLiteral("attributed"); });
        connect(w.loader(), &Loader::snapshotLoaded, this, [&] { order << QStringLiteral("loaded"); });
        connect(w.loader(), &Loader::progressChanged, this, [&](const QString&, double, const QString& stage) {
            if (stage == QStringLiteral("attributing") && loadLabel.isEmpty())
                for (const QLabel* l : w.statusBar()->findChildren<QLabel*>())
                    if (l->isVisible() && l->text().contains(QFileInfo(file).fileName()))
                        loadLabel = l->text();
        });
        QSignalSpy idle(w.loader(), &Loader::idle);
        w.openFile(file);
        QVERIFY(idle.wait(120000));
        QCOMPARE(order, (QStringList{QStringLiteral("curves"), QStringLiteral("attributed"), QStringLiteral("loaded")}));
        // At the curves: both lines drawn, no category areas (only the two line graphs), no lanes.
        QVERIFY(requestedPoints > 0);
        QVERIFY(reservedPoints > 0);
        QCOMPARE(graphsAtCurves, 2);
        QVERIFY(!categoryPresent);
        QCOMPARE(pending, QStringLiteral("Categorising…"));
        QVERIFY2(peakHeader.contains(QStringLiteral("Categorising")), qPrintable(peakHeader));
        QCOMPARE(loadLabel, QStringLiteral("Attributing gen_300k.pickle…")); // the status bar names the stage

        // At the end: the same tab, with category areas, phase lanes and the core's findings.
        QCOMPARE(w.tabCount(), 1);
        SnapshotTab* t = w.tab(0);
        QCOMPARE(t, curvesTab);
        QVERIFY(t->document().diagnosed());
        CategoryTimelineView* tl = t->timeline();
        tl->plot()->replot(QCustomPlot::rpImmediateRefresh);
        QVERIFY(tl->plot()->graphCount() > 2);
        QVERIFY(tl->pendingText().isEmpty());
        QVERIFY(std::any_of(tl->laneBands()->bands().begin(), tl->laneBands()->bands().end(),
                            [](const auto& band) { return band.row == 0; })); // the phases
        QVERIFY(tl->plotter()->requestedGraph()->data()->size() > 0);
        size_t findings = 0;
        for (const Diagnostic& d : t->document().diagnosis()->items)
            findings += d.deviceIndex == t->deviceIndex();
        QCOMPARE(static_cast<size_t>(t->diagnostics()->findingCount()), findings);
        QVERIFY(findings > 0);
        QVERIFY(!t->peakPanel()->headerText().contains(QStringLiteral("Categorising")));
        QVERIFY(t->peakPanel()->report().live.size() > 0);
        // What the user did at the curves stage survived.
        QCOMPARE(tl->xRange(), zoom);
        QCOMPARE(t->selectedEvent(), int64_t{1000});
        QCOMPARE(t->peakPanel()->report().event, int64_t{1000});
        QCOMPARE(t->peakPanel()->report().requested, t->deviceModel().requestedAfter(1000));
        if (!shots.isEmpty()) {
            QTest::qWait(50);
            tl->plot()->replot(QCustomPlot::rpImmediateRefresh);
            w.grab().save(shots + QStringLiteral("/stage_done.png"));
        }
    }

    // Closing the tab of a file still being categorised cancels its load and leaves no tab; a
    // file opened while another loads still loads after it.
    void closingAStagedTabCancels()
    {
        const QString file = stagedFile();
        QVERIFY2(!file.isEmpty(), "tools/memscope_gen_snapshot could not write the 300k-event file");
        QSettings().remove(QStringLiteral("recentFiles"));
        MainWindow w;
        QVERIFY(showWindow(w));
        QSignalSpy cancelled(w.loader(), &Loader::loadCancelled);
        QSignalSpy loaded(w.loader(), &Loader::snapshotLoaded);
        connect(w.loader(), &Loader::curvesReady, this, [&](const QString& path) {
            if (path == file)
                w.tabs()->tabCloseRequested(w.tabs()->currentIndex());
        });
        QSignalSpy idle(w.loader(), &Loader::idle);
        w.openFile(file);
        w.openFile(sample("release")); // queued behind it
        QVERIFY(idle.wait(120000));
        QCOMPARE(cancelled.count() + loaded.count(), 2); // the first cancelled (or, if it had already finished, dropped)
        QCOMPARE(w.tabCount(), 1);
        QCOMPARE(w.tab(0)->path(), sample("release"));
        QVERIFY(w.tab(0)->document().diagnosed());
        QVERIFY(!w.recentFiles().contains(QFileInfo(file).absoluteFilePath()));
    }

    // A bad file shows its error and leaves the open tabs working.
    void badFileLeavesTabsWorking_data()
    {
        QTest::addColumn<QString>("bad");
        QTest::newRow("GLOBAL os.system") << QStringLiteral(MEMSCOPE_TESTDATA_DIR "/evil_global_os_system.pickle");
        QTest::newRow("STACK_GLOBAL") << QStringLiteral(MEMSCOPE_TESTDATA_DIR "/evil_stack_global.pickle");
        QTest::newRow("truncated") << QStringLiteral(MEMSCOPE_TESTDATA_DIR "/release_truncated.pickle");
        QTest::newRow("not a snapshot") << QStringLiteral(MEMSCOPE_TESTDATA_DIR "/not_a_snapshot.pickle");
    }
    void badFileLeavesTabsWorking()
    {
        QFETCH(QString, bad);
        MainWindow w;
        w.resize(1400, 900);
        w.show();
        QVERIFY(open(w, sample("llm_bs2_cpp"), 1));
        QVERIFY(open(w, sample("release"), 2));
        w.tabs()->setCurrentIndex(0);
        SnapshotTab* first = w.tab(0);
        const int64_t before = first->peakPanel()->report().requested;
        QVERIFY(!w.isErrorVisible());

        QVERIFY(open(w, bad, 2));
        QVERIFY(w.isErrorVisible());
        QVERIFY2(w.errorText().contains(QFileInfo(bad).fileName()), qPrintable(w.errorText()));
        QCOMPARE(w.tabCount(), 2);
        QCOMPARE(w.tab(0), first);
        QCOMPARE(w.tabs()->currentIndex(), 0);
        QCOMPARE(first->peakPanel()->report().requested, before);
        // Still working: a new time, a new file.
        first->setSelectedEvent(100);
        QCOMPARE(first->peakPanel()->report().requested, first->deviceModel().requestedAfter(100));
        QVERIFY(open(w, sample("oom"), 3));
        QCOMPARE(w.tab(2)->deviceModel().replay->oomEvents.size(), size_t{1});
    }

    void dropSeveralFilesOpensTabs()
    {
        MainWindow w;
        w.show();
        auto* mime = new QMimeData;
        mime->setUrls(
            {QUrl::fromLocalFile(sample("release")), QUrl::fromLocalFile(sample("oom")), QUrl::fromLocalFile(sample("linear3"))});
        QDragEnterEvent enter(QPoint(10, 10), Qt::CopyAction, mime, Qt::LeftButton, Qt::NoModifier);
        QCoreApplication::sendEvent(&w, &enter);
        QVERIFY(enter.isAccepted());
        QDropEvent drop(QPointF(10, 10), Qt::CopyAction, mime, Qt::LeftButton, Qt::NoModifier);
        QCoreApplication::sendEvent(&w, &drop);
        QSignalSpy idle(w.loader(), &Loader::idle);
        QVERIFY(idle.wait(30000));
        QCOMPARE(w.tabCount(), 3);
        QCOMPARE(w.tab(0)->path(), sample("release"));
        QCOMPARE(w.tab(2)->path(), sample("linear3"));
        // Recent files, newest first; opening an open file switches to its tab.
        QCOMPARE(w.recentFiles().value(0), QFileInfo(sample("linear3")).absoluteFilePath());
        w.openFile(sample("release"));
        QCOMPARE(w.tabs()->currentIndex(), 0);
        QCOMPARE(w.tabCount(), 3);
        // Closing every tab returns to the welcome page.
        while (w.tabCount())
            w.tabs()->tabCloseRequested(0);
        QCOMPARE(w.tabCount(), 0);
        delete mime;
    }

    // Issue 29: the export dialog starts in the last export folder and can make a new one
    // (its New Folder button), into which the report is written.
    void exportDialogMakesAFolder()
    {
        MainWindow w;
        w.show();
        QVERIFY(open(w, sample("llm_bs2_cpp"), 1));
        QTemporaryDir base;
        QSettings().setValue(QStringLiteral("exportDir"), base.path());
        const QString made = QDir(base.path()).filePath(QStringLiteral("New Folder"));
        bool seen = false;
        QTimer::singleShot(0, &w, [&] {
            auto* d = qobject_cast<QFileDialog*>(QApplication::activeModalWidget());
            if (!d)
                return;
            seen = d->directory().absolutePath() == QDir(base.path()).absolutePath() && !d->testOption(QFileDialog::ReadOnly);
            auto* button = d->findChild<QToolButton*>(QStringLiteral("newFolderButton"));
            if (!button || !button->isEnabled()) {
                seen = false;
                d->reject();
                return;
            }
            button->click();
            QTest::qWait(100);
            d->selectFile(made);
            QMetaObject::invokeMethod(d, "accept");
        });
        menuAction(w, QKeySequence(Qt::CTRL | Qt::Key_E))->trigger();
        QVERIFY(seen);
        QVERIFY(QFileInfo(made).isDir());
        QVERIFY(QFileInfo::exists(QDir(made).filePath(QStringLiteral("report.json"))));
        QCOMPARE(QSettings().value(QStringLiteral("exportDir")).toString(), made);
    }

    void exportFromTheWindow()
    {
        MainWindow w;
        w.show();
        QVERIFY(open(w, sample("llm_bs2_cpp"), 1));
        QTemporaryDir out;
        QString message;
        QVERIFY2(w.exportReport(out.path(), &message), qPrintable(message));
        for (const char* f : {"peak_report.png", "peak_report.csv", "timeline.csv", "report.json"})
            QVERIFY2(QFileInfo::exists(out.filePath(QLatin1String(f))), f);
    }

    void diagnosticsInTheWindow_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<bool>("growth");
        QTest::newRow("loss_leak") << sample("loss_leak") << true;
        QTest::newRow("llm_bs16") << sample("llm_bs16") << false;
    }
    void diagnosticsInTheWindow()
    {
        QFETCH(QString, file);
        QFETCH(bool, growth);
        MainWindow w;
        QVERIFY(showWindow(w));
        QVERIFY2(open(w, file, 1), qPrintable(w.errorText()));
        SnapshotTab* tab = w.currentTab();
        DiagnosticsPanel* panel = tab->diagnostics();
        QCOMPARE(tab->detailTabs()->indexOf(panel), static_cast<int>(SnapshotTab::DetailTab::Diagnostics));
        QAction* show = menuAction(w, QKeySequence(Qt::CTRL | Qt::Key_4));
        QVERIFY(show && show->isEnabled());
        show->trigger();
        QCOMPARE(tab->detailTabs()->currentWidget(), panel);

        const CoreDiagnosis core = diagnoseFile(file);
        std::vector<const Diagnostic*> expected;
        for (const Diagnostic& d : core.result->items)
            if (d.deviceIndex == tab->deviceIndex())
                expected.push_back(&d);
        QCOMPARE(panel->findingCount(), static_cast<int>(expected.size()));
        QCOMPARE(panel->list()->topLevelItemCount(), panel->findingCount());
        int growthRow = -1;
        for (int i = 0; i < panel->findingCount(); ++i) {
            QCOMPARE(panel->finding(i)->kind, expected[static_cast<size_t>(i)]->kind);
            QCOMPARE(panel->list()->topLevelItem(i)->text(2), QString::fromStdString(expected[static_cast<size_t>(i)]->message));
            if (panel->finding(i)->kind == DiagnosticKind::Growth && growthRow < 0)
                growthRow = i;
        }
        QCOMPARE(growthRow >= 0, growth);
        if (!growth) {
            // A healthy training run: nothing above "info".
            for (int i = 0; i < panel->findingCount(); ++i)
                QCOMPARE(panel->finding(i)->severity, Severity::Info);
            return;
        }
        // Growth comes first, with the core's rate.
        QCOMPARE(growthRow, 0);
        const Diagnostic* g = core.result->first(DiagnosticKind::Growth, tab->deviceIndex());
        QCOMPARE(panel->list()->topLevelItem(0)->text(4), bytes(g->bytesPerIteration));
        QVERIFY(g->severity != Severity::Info);
        QCOMPARE(panel->list()->topLevelItem(0)->text(0), QString::fromLatin1(severityName(g->severity).data()));

        // Evidence: an allocation goes to the allocations timeline, selected, at a time it is live.
        QTreeWidgetItem* site = panel->evidence()->topLevelItem(0);
        QVERIFY(site && site->childCount() > 0);
        emit panel->evidence()->itemActivated(site->child(0), 0);
        const AllocationId id = tab->allocations()->selectedAllocation();
        QVERIFY(id.valid());
        QCOMPARE(id, g->allocations.front());
        QCOMPARE(tab->detailTabs()->currentWidget(), tab->allocations());
        QVERIFY(tab->deviceModel().replay->allocation(id).activeAfter(tab->selectedEvent()));
        QCOMPARE(tab->peakPanel()->report().event, tab->selectedEvent());
        QCOMPARE(tab->timeline()->cursorEvent(), tab->selectedEvent());
        // A call site highlights every allocation it made.
        show->trigger();
        emit panel->evidence()->itemActivated(site, 0);
        QCOMPARE(tab->detailTabs()->currentWidget(), tab->allocations());
        int64_t fromSite = 0;
        for (const Allocation& a : tab->deviceModel().replay->allocations)
            fromSite += a.stack == g->sites.front().stack;
        QCOMPARE(tab->allocations()->matchCount(), fromSite);
        QVERIFY(fromSite >= g->sites.front().count);
    }

    void estimatorInTheWindow()
    {
        MainWindow w;
        QVERIFY(showWindow(w));
        QVERIFY(open(w, sample("llm_bs16"), 1));
        SnapshotTab* tab = w.currentTab();
        QAction* show = menuAction(w, QKeySequence(Qt::CTRL | Qt::Key_5));
        QVERIFY(show);
        show->trigger();
        EstimatorPanel* panel = tab->estimator();
        QCOMPARE(tab->detailTabs()->currentWidget(), panel);

        const CoreDiagnosis core = diagnoseFile(sample("llm_bs16"));
        const TrainingMeasurement m = measureTraining(core.attribution->replay->devices[0], core.attribution->devices[0]);
        const EstimateReport expected = buildEstimateReport(m, inputsFromMeasurement(m));
        QTableWidget* table = panel->table();
        QCOMPARE(table->rowCount(), static_cast<int>(expected.rows.size()) + 1);
        for (size_t i = 0; i < expected.rows.size(); ++i) {
            const EstimateRow& row = expected.rows[i];
            const int r = static_cast<int>(i);
            QCOMPARE(table->verticalHeaderItem(r)->text(), QString::fromStdString(row.label).section(QStringLiteral(" ("), 0, 0));
            QCOMPARE(table->verticalHeaderItem(r)->toolTip(), QString::fromStdString(row.label));
            QCOMPARE(table->item(r, 0)->text(), row.measured >= 0 ? bytes(row.measured) : QStringLiteral("–"));
            QCOMPARE(table->item(r, 1)->text(), bytes(row.predicted));
        }
        QCOMPARE(table->item(0, 0)->text(), bytes(m.parameters));
        QCOMPARE(panel->report().measured.peak, core.attribution->replay->devices[0].peakRequested.bytes);
        QCOMPARE(table->item(table->rowCount() - 1, 1)->text(), QStringLiteral("forward/backward"));
        // Issue 29: without the recorded batch, A is per recorded step, not "per token".
        QStringList labels;
        for (QLabel* l : panel->findChildren<QLabel*>())
            labels << l->text();
        QVERIFY2(labels.contains(QStringLiteral("Activations / step A")), qPrintable(labels.join(QLatin1Char('|'))));
        QVERIFY(!labels.contains(QStringLiteral("Activations / token A")));
    }

    // Splitters and the detail tab survive closing the window and opening a new one.
    void layoutRestoredAfterRestart()
    {
        QList<int> sizes, inner;
        {
            MainWindow w;
            w.resize(1400, 900);
            w.show();
            QVERIFY(QTest::qWaitForWindowExposed(&w));
            QVERIFY(open(w, sample("linear3"), 1));
            SnapshotTab* tab = w.currentTab();
            auto* split = tab->findChild<QSplitter*>(QStringLiteral("tabSplit"));
            auto* diag = tab->findChild<QSplitter*>(QStringLiteral("diagnosticsSplit"));
            QVERIFY(split && diag);
            tab->showDetail(SnapshotTab::DetailTab::Diagnostics);
            split->setSizes({300, 550});
            diag->setSizes({900, 300});
            QTest::qWait(20);
            sizes = split->sizes();
            inner = diag->sizes();
            w.close();
        }
        MainWindow w;
        QCOMPARE(w.size(), QSize(1400, 900));
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(open(w, sample("linear3"), 1));
        SnapshotTab* tab = w.currentTab();
        QCOMPARE(tab->detailTabs()->currentWidget(), tab->diagnostics());
        QTest::qWait(20);
        QCOMPARE(tab->findChild<QSplitter*>(QStringLiteral("tabSplit"))->sizes(), sizes);
        QCOMPARE(tab->findChild<QSplitter*>(QStringLiteral("diagnosticsSplit"))->sizes(), inner);
    }

    // A dark system palette turns the charts and the error banner dark, and back.
    void followsThePalette()
    {
        MainWindow w;
        w.show();
        QVERIFY(open(w, sample("linear3"), 1));
        QCPAxis* axis = w.currentTab()->timeline()->mainRect()->axis(QCPAxis::atLeft);
        auto* banner = w.findChild<QFrame*>(QStringLiteral("errorBanner"));
        QVERIFY(banner);
        const QPalette light = QApplication::palette();
        QPalette dark = light;
        dark.setColor(QPalette::Window, QColor(30, 30, 30));
        dark.setColor(QPalette::Base, QColor(20, 20, 20));
        dark.setColor(QPalette::WindowText, QColor(230, 230, 230));
        dark.setColor(QPalette::Text, QColor(230, 230, 230));
        QApplication::setPalette(dark);
        QCoreApplication::processEvents();
        QVERIFY(axis->tickLabelColor().lightness() > 160);
        QVERIFY(banner->palette().color(QPalette::Window).lightness() < 100);
        QApplication::setPalette(light);
        QCoreApplication::processEvents();
        QVERIFY(axis->tickLabelColor().lightness() < 100);
        QVERIFY(banner->palette().color(QPalette::Window).lightness() > 160);
    }

    // Help > About names the version.
    void aboutShowsVersion()
    {
        MainWindow w;
        w.show();
        QAction* about = nullptr;
        for (QAction* a : w.menuBar()->findChildren<QAction*>())
            if (a->text() == QStringLiteral("&About memscope"))
                about = a;
        QVERIFY(about);
        QCOMPARE(modalText(w, about).contains(QStringLiteral("memscope 0.0-test")), true);
    }

    // F1 is Help > Keyboard Shortcuts: every menu shortcut is listed, the what-if among them
    // (View > What-If, Ctrl+6); the welcome page shows no chart hints, a chart does.
    void helpListsShortcuts()
    {
        MainWindow w;
        w.show();
        auto* hint = w.statusBar()->findChild<QLabel*>(QStringLiteral("chartHint"));
        QVERIFY(hint);
        QVERIFY(!hint->isVisibleTo(&w));
        QAction* help = menuAction(w, QKeySequence(QKeySequence::HelpContents));
        QVERIFY(help);
        QVERIFY(help->text().contains(QStringLiteral("Keyboard")));
        QAction* whatIf = menuAction(w, QKeySequence(Qt::CTRL | Qt::Key_6));
        QVERIFY(whatIf);
        const QString text = modalText(w, help);
        for (QAction* a : w.menuBar()->findChildren<QAction*>())
            if (!a->shortcut().isEmpty())
                QVERIFY2(text.contains(a->shortcut().toString(QKeySequence::NativeText).toHtmlEscaped()), qPrintable(a->text()));
        QVERIFY(text.contains(QStringLiteral("What-If")));
        QVERIFY(open(w, sample("linear3"), 1));
        QVERIFY(hint->isVisibleTo(&w) || !w.statusBar()->currentMessage().isEmpty());
        w.statusBar()->clearMessage();
        QVERIFY(hint->isVisibleTo(&w));
        QVERIFY(hint->text().contains(QStringLiteral("Shift+drag")));
    }

    // With a snapshot open the window can be made 1000x700 (it could not go below 1062 px:
    // the info line's full text set the minimum).
    void fitsIn1000x700()
    {
        MainWindow w;
        w.resize(1000, 700);
        w.show();
        QVERIFY(open(w, sample("llm_bs16"), 1));
        QCoreApplication::processEvents();
        QVERIFY2(w.minimumSizeHint().width() <= 1000 && w.minimumSizeHint().height() <= 700,
                 qPrintable(QStringLiteral("%1x%2").arg(w.minimumSizeHint().width()).arg(w.minimumSizeHint().height())));
    }

    // Issue 29's clipped text at 1000x700, on real recordings: the stack panel's frames and
    // locations elide in the middle (the full text a tooltip), its two columns fit the pane
    // and its title wraps inside it; the call-site table's stack header fits its column.
    void stackPanelAndHeadersFit_data()
    {
        QTest::addColumn<QString>("file");
        QTest::newRow("llm_bs16") << sample("llm_bs16");
        QTest::newRow("ddp_rank0") << QStringLiteral(MEMSCOPE_TESTDATA_DIR "/ranks/ddp_rank0.pickle");
    }
    void stackPanelAndHeadersFit()
    {
        QFETCH(QString, file);
        MainWindow w;
        w.resize(1000, 700);
        w.show();
        QVERIFY(open(w, file, 1));
        w.currentTab()->detailTabs()->setCurrentIndex(0); // the breakdown (an earlier test may have left another open)
        PeakPanel* peak = w.currentTab()->peakPanel();
        QTableView* sites = peak->callSiteTable();
        qobject_cast<QTabWidget*>(sites->parentWidget()->parentWidget())->setCurrentWidget(sites);
        sites->setCurrentIndex(sites->model()->index(0, 0));
        QTest::qWait(50);
        StackView* stack = peak->stackView();
        QTreeWidget* tree = stack->tree();
        QCOMPARE(tree->textElideMode(), Qt::ElideMiddle);
        QVERIFY2(
            tree->viewport()->width() > 0 && tree->columnWidth(0) <= std::max(40, tree->viewport()->width() * 3 / 5),
            qPrintable(QStringLiteral("function column %1 of %2 px").arg(tree->columnWidth(0)).arg(tree->viewport()->width())));
        QVERIFY(tree->header()->sectionsMovable() || tree->header()->sectionResizeMode(0) == QHeaderView::Interactive);
        int frames = 0;
        for (QTreeWidgetItemIterator it(tree); *it; ++it)
            if ((*it)->parent()) {
                QCOMPARE((*it)->toolTip(0), (*it)->text(0));
                QVERIFY((*it)->text(1).isEmpty() || !(*it)->toolTip(1).isEmpty());
                ++frames;
            }
        QVERIFY(frames > 0);
        auto* title = stack->findChild<QLabel*>();
        QVERIFY(title && title->wordWrap());
        QVERIFY2(title->geometry().right() <= stack->width(),
                 qPrintable(QStringLiteral("title to %1 of %2 px").arg(title->geometry().right()).arg(stack->width())));
        int column = -1; // the stack column: its header's tooltip has the full wording
        for (int c = 0; c < sites->model()->columnCount(); ++c)
            if (sites->model()
                    ->headerData(c, Qt::Horizontal, Qt::ToolTipRole)
                    .toString()
                    .contains(QStringLiteral("innermost first")))
                column = c;
        QVERIFY(column >= 0);
        const QString header = sites->model()->headerData(column, Qt::Horizontal).toString();
        QVERIFY2(sites->columnWidth(column) >= QFontMetrics(sites->horizontalHeader()->font()).horizontalAdvance(header),
                 qPrintable(QStringLiteral("%1: column %2 of %3 px wide, the header needs %4")
                                .arg(header)
                                .arg(column)
                                .arg(sites->columnWidth(column))
                                .arg(QFontMetrics(sites->horizontalHeader()->font()).horizontalAdvance(header))));
        QVERIFY(sites->model()
                    ->headerData(column, Qt::Horizontal, Qt::ToolTipRole)
                    .toString()
                    .contains(QStringLiteral("innermost first")));
    }

private:
    static QString modalText(MainWindow& w, QAction* action)
    {
        QString text;
        QTimer::singleShot(0, &w, [&] {
            if (auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget())) {
                text = box->text();
                box->accept();
            }
        });
        action->trigger();
        return text;
    }
};

QTEST_MAIN(TestMainWindow)
#include "tst_main_window.moc"
