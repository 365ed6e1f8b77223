// The peak panel's item models against QAbstractItemModelTester (its invariants checked on
// every reset and query, failures reported as test failures) on real snapshots.
#include "query/module_breakdown.h"
#include "query/point_report.h"
#include "snapshot/stack_labels.h"
#include "ui/document/document.h"
#include "ui/models/call_site_model.h"
#include "ui/models/active_allocation_model.h"
#include "ui/models/module_breakdown_model.h"
#include "ui/models/plan_table_model.h"
#include "ui/style/text_format.h"

#include <QAbstractItemModelTester>
#include <QSortFilterProxyModel>
#include <QTest>

using namespace memscope;

class TstUiModels : public QObject {
    Q_OBJECT

private:
    std::shared_ptr<const Document> load(const QString& name)
    {
        return analyzeFile((QStringLiteral(MEMSCOPE_SAMPLES_DIR "/") + name).toStdString());
    }

    // Every column's display and sort value of every row, as a view sorting it would ask.
    static void readAll(const QAbstractItemModel& model)
    {
        for (int c = 0; c < model.columnCount(); ++c) {
            QVERIFY(model.headerData(c, Qt::Horizontal, Qt::DisplayRole).toString().size() > 0);
            for (int r = 0; r < model.rowCount(); ++r)
                for (int role : {int(Qt::DisplayRole), int(Qt::UserRole), int(Qt::ToolTipRole), int(Qt::DecorationRole)})
                    (void)model.data(model.index(r, c), role);
        }
    }

private slots:
    void activeAllocations_data()
    {
        QTest::addColumn<QString>("sample");
        QTest::newRow("linear3") << QStringLiteral("linear3.pickle");
        QTest::newRow("llm_bs16") << QStringLiteral("llm_bs16.pickle");
        QTest::newRow("oom") << QStringLiteral("oom.pickle");
    }
    void activeAllocations()
    {
        QFETCH(QString, sample);
        const auto doc = load(sample);
        const DeviceModel& m = doc->devices[0];
        const PointReport report = buildPointReport(*doc->attribution(), 0, peakEvent(*m.replay));
        QVERIFY(!report.live.empty());

        ActiveAllocationModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(model.rowCount(), 0);
        model.setReport(doc.get(), &m, &report);
        QCOMPARE(model.rowCount(), static_cast<int>(report.live.size()));
        QCOMPARE(model.columnCount(), int(ActiveAllocationModel::ColumnCount));
        readAll(model);

        // The live set at the peak adds up to the requested bytes there.
        qlonglong sum = 0;
        for (int r = 0; r < model.rowCount(); ++r)
            sum += model.data(model.index(r, ActiveAllocationModel::Size), ActiveAllocationModel::SortRole).toLongLong();
        QCOMPARE(sum, static_cast<qlonglong>(report.requested));

        // Sorted by size through a proxy as the peak panel does: largest first.
        QSortFilterProxyModel proxy;
        QAbstractItemModelTester proxyTester(&proxy, QAbstractItemModelTester::FailureReportingMode::QtTest);
        proxy.setSourceModel(&model);
        proxy.setSortRole(ActiveAllocationModel::SortRole);
        proxy.sort(ActiveAllocationModel::Size, Qt::DescendingOrder);
        QCOMPARE(proxy.data(proxy.index(0, ActiveAllocationModel::Size), ActiveAllocationModel::SortRole).toLongLong(),
                 static_cast<qlonglong>(report.live.front().size));

        // Op and Module: the stack's, the module shortened for the cell and whole to sort by.
        const FrameClassifier& frames = *doc->frames();
        for (int r = 0; r < model.rowCount(); ++r) {
            const StackId stack = report.live[static_cast<size_t>(r)].stack;
            QCOMPARE(model.data(model.index(r, ActiveAllocationModel::Op), Qt::DisplayRole).toString(),
                     QString::fromStdString(frames.opText(stack)));
            QCOMPARE(model.data(model.index(r, ActiveAllocationModel::Module), Qt::DisplayRole).toString(),
                     moduleCellText(frames.moduleText(stack)));
            QCOMPARE(model.data(model.index(r, ActiveAllocationModel::Module), ActiveAllocationModel::SortRole).toString(),
                     QString::fromStdString(frames.moduleText(stack)));
        }
        QVERIFY(!model.headerData(ActiveAllocationModel::Module, Qt::Horizontal, Qt::ToolTipRole).toString().isEmpty());

        model.setReport(nullptr, nullptr, nullptr);
        QCOMPARE(model.rowCount(), 0);
    }

    void callSites_data() { activeAllocations_data(); }
    void callSites()
    {
        QFETCH(QString, sample);
        const auto doc = load(sample);
        const PointReport report = buildPointReport(*doc->attribution(), 0, peakEvent(*doc->devices[0].replay));
        QVERIFY(!report.callSites.empty());

        CallSiteModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setReport(doc.get(), &report);
        QCOMPARE(model.rowCount(), static_cast<int>(report.callSites.size()));
        QCOMPARE(model.columnCount(), int(CallSiteModel::ColumnCount));
        readAll(model);

        // Call sites group the live set: their counts and bytes add up to it.
        qlonglong bytes = 0, count = 0;
        for (int r = 0; r < model.rowCount(); ++r) {
            bytes += model.data(model.index(r, CallSiteModel::Bytes), CallSiteModel::SortRole).toLongLong();
            count += model.data(model.index(r, CallSiteModel::Count), CallSiteModel::SortRole).toLongLong();
            QCOMPARE(model.data(model.index(r, 0), CallSiteModel::StackRole).toLongLong(),
                     static_cast<qlonglong>(report.callSites[static_cast<size_t>(r)].stack.value));
        }
        QCOMPARE(bytes, static_cast<qlonglong>(report.requested));
        QCOMPARE(count, static_cast<qlonglong>(report.live.size()));

        // The sites of one user frame made inside a module's forward are told apart by their op
        // and module: no two such rows read the same in the Top user frame, Op and Module
        // columns. (Outside any module they may: the parameters moved by model.to() differ only
        // in nn.Module's recursion frames.)
        QSet<QString> seen;
        int inModule = 0;
        for (int r = 0; r < model.rowCount(); ++r) {
            const QString module = model.data(model.index(r, CallSiteModel::Module), CallSiteModel::SortRole).toString();
            if (module.isEmpty())
                continue;
            ++inModule;
            const QString key = model.data(model.index(r, CallSiteModel::TopFrame), Qt::DisplayRole).toString() + u'|' +
                                model.data(model.index(r, CallSiteModel::Op), Qt::DisplayRole).toString() + u'|' + module;
            QVERIFY2(!seen.contains(key), qPrintable(key));
            seen.insert(key);
        }
        if (sample == QStringLiteral("llm_bs16.pickle"))
            QVERIFY(inModule >= 15);

        model.setReport(nullptr, nullptr);
        QCOMPARE(model.rowCount(), 0);
    }

    // The Modules tab's model: a row per module path prefix at the depth, then the total, which
    // is the peak's requested bytes; every depth under the tester.
    void moduleBreakdown_data() { activeAllocations_data(); }
    void moduleBreakdown()
    {
        QFETCH(QString, sample);
        const auto doc = load(sample);
        const PointReport report = buildPointReport(*doc->attribution(), 0, peakEvent(*doc->devices[0].replay));
        ModuleBreakdownModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(model.rowCount(), 0);
        const size_t maxDepth = memscope::moduleBreakdown(report, *doc->frames(), 1).maxDepth;
        for (size_t depth = 1; depth <= std::max<size_t>(maxDepth, 1); ++depth) {
            model.setBreakdown(memscope::moduleBreakdown(report, *doc->frames(), depth), true);
            QCOMPARE(model.columnCount(), int(ModuleBreakdownModel::ColumnCount));
            QCOMPARE(model.rowCount(), static_cast<int>(model.breakdown().rows.size()) + 1);
            readAll(model);
            qlonglong bytes = 0;
            for (int r = 0; r + 1 < model.rowCount(); ++r)
                bytes += model.data(model.index(r, ModuleBreakdownModel::Bytes), ModuleBreakdownModel::ValueRole).toLongLong();
            QCOMPARE(bytes, static_cast<qlonglong>(report.requested));
            const int total = model.rowCount() - 1;
            QCOMPARE(model.data(model.index(total, ModuleBreakdownModel::Bytes), ModuleBreakdownModel::ValueRole).toLongLong(),
                     static_cast<qlonglong>(report.requested));
            QCOMPARE(model.data(model.index(total, ModuleBreakdownModel::Share), ModuleBreakdownModel::ValueRole).toDouble(),
                     1.0);
        }
        model.clear();
        QCOMPARE(model.rowCount(), 0);
    }

    // The plan's largest batches count recorded batches where the recording's batch was not
    // named, and say so in the cell and its tooltip (as the CLI's "3x the recorded batch").
    void planBatchesSayTheirUnit_data()
    {
        QTest::addColumn<bool>("recordedBatches");
        QTest::addColumn<QString>("cell");
        QTest::newRow("named batch") << false << QStringLiteral("24 (21 safe)");
        QTest::newRow("recorded batches") << true << QStringLiteral("3× (2× safe)");
    }
    void planBatchesSayTheirUnit()
    {
        QFETCH(bool, recordedBatches);
        QFETCH(QString, cell);
        PlanTableModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        auto rows = std::make_shared<std::vector<PlanRow>>(2);
        (*rows)[0].fits = true;
        (*rows)[0].maxBatch = recordedBatches ? 3 : 24;
        (*rows)[0].safeBatch = recordedBatches ? 2 : 21;
        (*rows)[1].fits = false;
        model.setRows(rows, recordedBatches);
        QCOMPARE(model.index(0, PlanTableModel::MaxBatch).data().toString(), cell);
        QCOMPARE(model.index(0, PlanTableModel::MaxBatch)
                     .data(Qt::ToolTipRole)
                     .toString()
                     .contains(QStringLiteral("In recorded batches")),
                 recordedBatches);
        QCOMPARE(model.index(1, PlanTableModel::MaxBatch).data().toString(), QStringLiteral("–"));
    }
};

QTEST_MAIN(TstUiModels)
#include "tst_ui_models.moc"
