// memscope_ui_tool flame OUTDIR FILE...: the flame graph tab of each file (issue 29) at the
// window's shot size (MEMSCOPE_SHOT_SIZE, as `screenshots`): at the peak with every frame, zoomed
// into the heaviest user frame with the allocations filtered to it (your frames + op), over the
// iteration holding the peak (bytes × lifetime), and the breakdown following that range.
#include "ui/main_window.h"
#include "ui/pages/flame_panel.h"
#include "ui/pages/flame_view.h"
#include "ui/pages/peak_panel.h"
#include "ui/pages/snapshot_tab.h"
#include "ui/plot/category_timeline_view.h"
#include "query/point_report.h"
#include "query/stack_tree.h"

#include <QApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QSettings>
#include <QTemporaryDir>
#include <QTest>

#include <cstdio>

using namespace memscope;

namespace {

void settleFor(int ms = 200)
{
    QElapsedTimer t;
    t.start();
    while (t.elapsed() < ms) {
        QApplication::processEvents(QEventLoop::AllEvents, 20);
        QTest::qWait(10);
    }
}

QSize size()
{
    const QStringList wh = qEnvironmentVariable("MEMSCOPE_SHOT_SIZE").split(QLatin1Char('x'));
    if (wh.size() == 2 && wh[0].toInt() > 0 && wh[1].toInt() > 0)
        return {wh[0].toInt(), wh[1].toInt()};
    return {1600, 1000};
}

} // namespace

int flameShots(const QString& outDir, const QStringList& files)
{
    QDir().mkpath(outDir);
    QTemporaryDir settingsDir;
    QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, settingsDir.path());
    MainWindow w;
    w.resize(size());
    w.show();
    settleFor(300);
    int n = 0;
    for (const QString& f : files) {
        w.openFile(f);
        QElapsedTimer t;
        t.start();
        ++n;
        while ((w.tabCount() < n || !w.currentTab() || !w.currentTab()->document().diagnosed()) && t.elapsed() < 60000)
            settleFor(50);
        SnapshotTab* tab = w.currentTab();
        if (!tab) {
            std::fprintf(stderr, "could not load %s\n", qPrintable(f));
            return 1;
        }
        const QString base = outDir + QLatin1Char('/') + QFileInfo(f).completeBaseName();
        tab->showDetail(SnapshotTab::DetailTab::Flame);
        FlamePanel* flame = tab->flame();
        flame->setWhen(FlamePanel::When::Peak);
        settleFor();
        w.grab().save(base + QStringLiteral("_flame.png"));

        // Your frames + op, zoomed into the first user frame that splits the memory.
        flame->setUserFramesOnly(true);
        settleFor();
        const auto tree = flame->tree();
        // down the heaviest path to the first frame that splits, then its heaviest callee
        int32_t node = tree->root().children.empty() ? 0 : tree->root().children.front();
        while (tree->node(node).children.size() == 1)
            node = tree->node(node).children.front();
        if (!tree->node(node).children.empty())
            node = tree->node(node).children.front();
        if (node > 0) {
            flame->view()->setZoomNode(node);
            tab->setFrameFilter(node);
        }
        settleFor();
        w.grab().save(base + QStringLiteral("_flame_zoom.png"));
        tab->clearFrameFilter();
        flame->setUserFramesOnly(false);

        // Over the iteration holding the peak.
        const DeviceModel& m = tab->deviceModel();
        const int64_t pe = peakEvent(*m.replay);
        int64_t first = m.eventCount() / 3, last = m.eventCount() / 2;
        for (const Iteration& it : m.attribution->iterations)
            if (it.firstEvent <= pe && pe <= it.lastEvent) {
                first = it.firstEvent;
                last = it.lastEvent;
            }
        tab->timeline()->selectRange(first, last);
        settleFor();
        w.grab().save(base + QStringLiteral("_flame_range.png"));
        tab->showDetail(SnapshotTab::DetailTab::Breakdown);
        settleFor();
        w.grab().save(base + QStringLiteral("_range_breakdown.png"));
        tab->timeline()->clearRangeSelection();
    }
    return 0;
}
