// The flame graph (issue 29, item 1) and the range selection that drives the panels (item 3):
// FlameModel under QAbstractItemModelTester with its sums against the breakdown; in a snapshot
// tab, a flame frame clicked filters the allocations table and the allocations timeline and
// "filter: … ×" clears it; a range set programmatically fills the breakdown, the allocations,
// the call sites and the flame graph with the core's range queries, and clearing it goes back.
#include "query/point_report.h"
#include "query/range_report.h"
#include "query/stack_tree.h"
#include "ui/document/document.h"
#include "ui/models/flame_model.h"
#include "ui/pages/allocation_timeline_view.h"
#include "ui/pages/flame_panel.h"
#include "ui/pages/flame_view.h"
#include "ui/pages/peak_panel.h"
#include "ui/pages/snapshot_tab.h"
#include "ui/plot/category_timeline_view.h"

#include <QAbstractItemModelTester>
#include <QLabel>
#include <qcustomplot.h>
#include <QSortFilterProxyModel>
#include <QTabWidget>
#include <QTableView>
#include <QTest>
#include <QToolButton>

#include <map>

using namespace memscope;

namespace {

std::shared_ptr<const Document> load(const QString& name)
{
    static std::map<QString, std::shared_ptr<const Document>> cache;
    auto& d = cache[name];
    if (!d)
        d = analyzeFile((QStringLiteral(MEMSCOPE_SAMPLES_DIR "/") + name).toStdString());
    return d;
}

double weightOf(const QAbstractItemModel& m, const QModelIndex& i)
{
    return m.data(m.index(i.row(), FlameModel::Weight, i.parent()), FlameModel::SortRole).toDouble();
}

// Walks the model: every row's weight is at least its children's sum; returns the rows seen.
int walk(const FlameModel& m, const QModelIndex& parent)
{
    int rows = 0;
    for (int r = 0; r < m.rowCount(parent); ++r) {
        const QModelIndex i = m.index(r, 0, parent);
        ++rows;
        for (int c = 0; c < m.columnCount(); ++c)
            for (int role : {int(Qt::DisplayRole), int(Qt::ToolTipRole), FlameModel::SortRole})
                (void)m.data(m.index(r, c, parent), role);
        double children = 0;
        for (int k = 0; k < m.rowCount(i); ++k)
            children += weightOf(m, m.index(k, 0, i));
        const int node = i.data(FlameModel::NodeRole).toInt();
        const double self = m.tree()->node(node).selfWeight;
        if (std::abs(children + self - weightOf(m, i)) > 1e-6 * std::max(1.0, weightOf(m, i)))
            return -1;
        const int below = walk(m, i);
        if (below < 0)
            return -1;
        rows += below;
    }
    return rows;
}

QLabel* flameBreadcrumb(FlamePanel* panel)
{
    for (QLabel* l : panel->findChildren<QLabel*>())
        if (l->text().startsWith(QStringLiteral("<a href=\"0\">all</a>")))
            return l;
    return nullptr;
}

int64_t allocationsUnder(const DeviceReplay& d, const std::vector<uint8_t>& mask, const std::vector<AllocationId>& ids)
{
    int64_t n = 0;
    for (AllocationId id : ids) {
        const Allocation& a = d.allocation(id);
        n += mask[a.stack.valid() ? static_cast<size_t>(a.stack.value) : mask.size() - 1] != 0;
    }
    return n;
}

} // namespace

class TstFlameGraph : public QObject {
    Q_OBJECT

private slots:
    void model_data()
    {
        QTest::addColumn<QString>("sample");
        QTest::addColumn<bool>("userFrames");
        QTest::addColumn<double>("at"); // < 0: the peak
        for (const char* s : {"llm_bs16.pickle", "libtorch_mlp.pickle", "oom.pickle"})
            for (bool user : {false, true}) {
                QTest::addRow("%s %s peak", s, user ? "user+op" : "all") << QString::fromLatin1(s) << user << -1.0;
                QTest::addRow("%s %s 0.6", s, user ? "user+op" : "all") << QString::fromLatin1(s) << user << 0.6;
            }
    }
    void model()
    {
        QFETCH(QString, sample);
        QFETCH(bool, userFrames);
        QFETCH(double, at);
        const auto doc = load(sample);
        const DeviceReplay& d = *doc->devices[0].replay;
        const int64_t event = at < 0 ? peakEvent(d) : static_cast<int64_t>(at * static_cast<double>(d.eventCount));
        const PointReport report = buildPointReport(*doc->attribution(), 0, event);
        FlameModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(model.rowCount(), 0);
        auto tree = stackTreeAt(*doc->analysis->replay, 0, *doc->frames(), event,
                                userFrames ? StackTreeFrames::UserAndOp : StackTreeFrames::All);
        model.setTree(tree, doc->frames());
        QCOMPARE(model.rowCount(), 1);
        const QModelIndex root = model.index(0, 0);
        QCOMPARE(static_cast<int64_t>(weightOf(model, root)), report.requested); // the breakdown's total
        QCOMPARE(model.data(model.index(0, FlameModel::Count), FlameModel::SortRole).toLongLong(),
                 static_cast<qlonglong>(report.live.size()));
        QCOMPARE(walk(model, {}), static_cast<int>(tree->nodes.size()));
        for (int c = 0; c < model.columnCount(); ++c)
            QVERIFY(!model.headerData(c, Qt::Horizontal, Qt::DisplayRole).toString().isEmpty());
        // a node's index round-trips
        const int32_t deep = static_cast<int32_t>(tree->nodes.size() - 1);
        QCOMPARE(model.indexOfNode(deep).data(FlameModel::NodeRole).toInt(), deep);
        QCOMPARE(model.parent(model.indexOfNode(deep)), model.indexOfNode(tree->node(deep).parent));

        QSortFilterProxyModel proxy;
        QAbstractItemModelTester proxyTester(&proxy, QAbstractItemModelTester::FailureReportingMode::QtTest);
        proxy.setSourceModel(&model);
        proxy.setSortRole(FlameModel::SortRole);
        proxy.sort(FlameModel::FrameColumn);
        model.setTree(nullptr, nullptr);
        QCOMPARE(model.rowCount(), 0);
    }

    // Clicking a frame of the icicle zooms into it and filters the allocations table and the
    // allocations timeline to the stacks under it; the filter button clears both.
    void frameFilter()
    {
        const auto doc = load(QStringLiteral("llm_bs16.pickle"));
        SnapshotTab tab(doc);
        tab.resize(1400, 900);
        tab.show();
        tab.showDetail(SnapshotTab::DetailTab::Flame);
        QVERIFY(QTest::qWaitForWindowExposed(&tab));
        FlamePanel* flame = tab.flame();
        const auto tree = flame->tree();
        QVERIFY(tree);
        const DeviceReplay& d = *tab.deviceModel().replay;
        QCOMPARE(tree->root().bytes, tab.peakPanel()->report().requested);
        const int64_t allLive = static_cast<int64_t>(tab.peakPanel()->report().live.size());
        QCOMPARE(tab.peakPanel()->activeTable()->model()->rowCount(), static_cast<int>(allLive));

        // A node a few frames down whose allocations are some but not all of the live ones.
        int32_t node = 0;
        while (!tree->node(node).children.empty() && (node == 0 || tree->node(node).count == tree->root().count))
            node = tree->node(node).children.front();
        QVERIFY(node > 0);
        QVERIFY(tree->node(node).count < tree->root().count);
        // to make it drawable, zoom to its parent first
        flame->view()->setZoomNode(tree->node(node).parent);
        QCoreApplication::processEvents();
        const QRectF r = flame->view()->nodeRect(node);
        QVERIFY2(!r.isEmpty(), "the node is drawn");
        QTest::mouseClick(flame->view(), Qt::LeftButton, {}, r.center().toPoint());
        QCOMPARE(flame->view()->zoomNode(), node);
        QVERIFY(flame->breadcrumbText().contains(flame->nodeText(node).toHtmlEscaped()));

        const std::vector<uint8_t> mask = stacksUnder(*tree, node, *doc->frames());
        const auto live = d.activeAfter(peakEvent(d));
        QCOMPARE(tab.frameFilterText(), flame->nodeText(node));
        QVERIFY(tab.frameFilterButton()->isVisible());
        QVERIFY(tab.frameFilterButton()->text().startsWith(QStringLiteral("filter: ")));
        QVERIFY(tab.frameFilterButton()->text().endsWith(QStringLiteral("×")));
        QCOMPARE(static_cast<int64_t>(tab.peakPanel()->report().live.size()), allocationsUnder(d, mask, live));
        QCOMPARE(static_cast<int64_t>(tab.peakPanel()->report().live.size()), tree->node(node).count);
        QCOMPARE(tab.peakPanel()->activeTable()->model()->rowCount(), static_cast<int>(tree->node(node).count));
        std::vector<AllocationId> every;
        for (size_t i = 0; i < d.allocations.size(); ++i)
            every.push_back(AllocationId{static_cast<int32_t>(i)});
        QCOMPARE(tab.allocations()->matchCount(), allocationsUnder(d, mask, every));
        QVERIFY(tab.allocations()->matchCount() > 0);
        // the category timeline draws the filter's bytes: at the peak, the node's
        tab.setXAxisMode(XAxisMode::EventIndex);
        QCPGraph* curve = tab.frameFilterGraph();
        QVERIFY(curve);
        auto it = curve->data()->findEnd(static_cast<double>(peakEvent(d)), false);
        QVERIFY(it != curve->data()->constBegin());
        --it; // the last change at or before the peak
        QCOMPARE(static_cast<int64_t>(it->value), tree->node(node).bytes);
        double highest = 0;
        for (auto p = curve->data()->constBegin(); p != curve->data()->constEnd(); ++p)
            highest = std::max(highest, p->value);
        QVERIFY(highest <= static_cast<double>(d.peakRequested.bytes));

        // the × clears
        QTest::mouseClick(tab.frameFilterButton(), Qt::LeftButton);
        QVERIFY(!tab.frameFilterButton()->isVisible());
        QVERIFY(tab.frameFilterText().isEmpty());
        QCOMPARE(static_cast<int64_t>(tab.peakPanel()->report().live.size()), allLive);
        QCOMPARE(tab.allocations()->matchCount(), int64_t{0});
        QCOMPARE(flame->view()->zoomNode(), 0);
        QVERIFY(!tab.frameFilterGraph());

        // clicking the top row of a zoomed view goes up one level and filters to it
        flame->view()->setZoomNode(node);
        QCoreApplication::processEvents();
        QTest::mouseClick(flame->view(), Qt::LeftButton, {}, flame->view()->nodeRect(node).center().toPoint());
        QCOMPARE(flame->view()->zoomNode(), tree->node(node).parent);
        // and the breadcrumb's "all" clears
        emit flameBreadcrumb(flame)->linkActivated(QStringLiteral("0"));
        QCOMPARE(flame->view()->zoomNode(), 0);
        QVERIFY(tab.frameFilterText().isEmpty());
    }

    // A range set programmatically: the breakdown, its allocations and call sites, and the
    // flame graph show what the core's range queries say; clearing goes back to the point.
    void rangeDrivesPanels_data()
    {
        QTest::addColumn<QString>("sample");
        QTest::addColumn<double>("from");
        QTest::addColumn<double>("to");
        QTest::newRow("llm_bs16 middle") << QStringLiteral("llm_bs16.pickle") << 0.3 << 0.55;
        QTest::newRow("llm_bs16 whole") << QStringLiteral("llm_bs16.pickle") << 0.0 << 1.0;
        QTest::newRow("loss_leak end") << QStringLiteral("loss_leak.pickle") << 0.8 << 1.0;
    }
    void rangeDrivesPanels()
    {
        QFETCH(QString, sample);
        QFETCH(double, from);
        QFETCH(double, to);
        const auto doc = load(sample);
        SnapshotTab tab(doc);
        tab.resize(1400, 900);
        tab.show();
        QVERIFY(QTest::qWaitForWindowExposed(&tab));
        const DeviceReplay& d = *tab.deviceModel().replay;
        const int64_t first = static_cast<int64_t>(from * static_cast<double>(d.eventCount - 1));
        const int64_t last = static_cast<int64_t>(to * static_cast<double>(d.eventCount - 1));
        const int64_t point = tab.selectedEvent();

        tab.timeline()->selectRange(first, last);
        QVERIFY(tab.hasRange());
        const RangeReport expected = buildRangeReport(*doc->attribution(), 0, first, last);
        const PointReport& shown = tab.peakPanel()->report();
        QCOMPARE(shown.requested, expected.active.requested);
        QCOMPARE(shown.byCategory, expected.active.byCategory);
        QCOMPARE(shown.countByCategory, expected.active.countByCategory);
        QCOMPARE(shown.live.size(), expected.active.live.size());
        QCOMPARE(shown.callSites.size(), expected.active.callSites.size());
        QCOMPARE(tab.peakPanel()->activeTable()->model()->rowCount(), static_cast<int>(expected.active.live.size()));
        QCOMPARE(tab.peakPanel()->callSiteTable()->model()->rowCount(), static_cast<int>(expected.active.callSites.size()));
        QVERIFY(tab.peakPanel()->headerText().contains(QStringLiteral("Active during the range")));
        QVERIFY(tab.peakPanel()->headerText().contains(QStringLiteral("bytes × lifetime")));
        QCOMPARE(tab.detailTabs()->tabText(0), QStringLiteral("Breakdown of the range"));

        tab.showDetail(SnapshotTab::DetailTab::Flame);
        QCOMPARE(tab.flame()->when(), FlamePanel::When::Range);
        const auto tree = tab.flame()->tree();
        const auto core = stackTreeOverRange(*doc->analysis->replay, 0, *doc->frames(), first, last);
        QCOMPARE(tree->weight, StackTreeWeight::ByteSeconds);
        QCOMPARE(tree->root().weight, core->root().weight);
        QCOMPARE(tree->root().bytes, expected.active.requested);
        QVERIFY(std::abs(tree->root().weight - expected.byteSeconds) <= 1e-9 * std::max(1.0, expected.byteSeconds));
        QVERIFY(tab.flame()->summaryText().contains(QStringLiteral("bytes × lifetime")));

        // cleared: back to the selected time
        tab.timeline()->clearRangeSelection();
        QVERIFY(!tab.hasRange());
        const PointReport back = buildPointReport(*doc->attribution(), 0, point);
        QCOMPARE(tab.peakPanel()->report().requested, back.requested);
        QCOMPARE(tab.peakPanel()->report().live.size(), back.live.size());
        QVERIFY(!tab.peakPanel()->headerText().contains(QStringLiteral("Active during the range")));
        QCOMPARE(tab.detailTabs()->tabText(0), QStringLiteral("Breakdown at selected time"));
        QCOMPARE(tab.flame()->when(), FlamePanel::When::SelectedTime);
        QCOMPARE(tab.flame()->tree()->root().bytes, back.requested);

        // choosing a time (a click, the peak, a finding) clears a range too
        tab.setRange(first, last);
        QVERIFY(tab.timeline()->rangeSummary().has_value());
        QCOMPARE(tab.flame()->when(), FlamePanel::When::Range);
        QCOMPARE(tab.peakPanel()->report().requested, expected.active.requested);
        tab.goToPeak();
        QVERIFY(!tab.hasRange());
        QVERIFY(!tab.timeline()->rangeSummary().has_value());
        QCOMPARE(tab.peakPanel()->report().requested, d.requestedAfter(peakEvent(d)));
        QCOMPARE(tab.flame()->when(), FlamePanel::When::SelectedTime);
        QCOMPARE(tab.flame()->tree()->root().bytes, d.requestedAfter(peakEvent(d)));
    }
};

QTEST_MAIN(TstFlameGraph)
#include "tst_flame_graph.moc"
