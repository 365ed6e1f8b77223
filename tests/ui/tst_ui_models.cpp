// The peak panel's item models against QAbstractItemModelTester (its invariants checked on
// every reset and query, failures reported as test failures) on real snapshots.
#include "query/point_report.h"
#include "ui/document/document.h"
#include "ui/models/call_site_model.h"
#include "ui/models/active_allocation_model.h"

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

        model.setReport(nullptr, nullptr);
        QCOMPARE(model.rowCount(), 0);
    }
};

QTEST_MAIN(TstUiModels)
#include "tst_ui_models.moc"
