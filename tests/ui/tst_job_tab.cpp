// The GUI of a distributed job: the rank table model (checked by QAbstractItemModelTester),
// the small multiples, a folder opened as one job in the main window, a rank opened from it,
// and the device a multi-device file with an OOM opens on.
#include "job/rank_set.h"
#include "ui/pages/job_tab.h"
#include "ui/loader.h"
#include "ui/main_window.h"
#include "ui/plot/rank_multiples_view.h"
#include "ui/models/rank_table_model.h"
#include "ui/pages/snapshot_tab.h"

#include <QAbstractItemModelTester>
#include <QFile>
#include <QFontMetrics>
#include <QHeaderView>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSettings>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <qcustomplot.h>

using namespace memscope;

namespace {

const QString kRanks = QStringLiteral(MEMSCOPE_TESTDATA_DIR "/ranks");

int64_t counter(int rank, const char* key)
{
    QFile f(kRanks + QStringLiteral("/ddp_rank%1.stats.json").arg(rank));
    if (!f.open(QIODevice::ReadOnly))
        return -1;
    const QJsonObject o = QJsonDocument::fromJson(f.readAll()).object();
    return std::string_view(key) == "max_reserved"
               ? o.value(QStringLiteral("max_reserved")).toInteger()
               : o.value(QStringLiteral("memory_stats")).toObject().value(QLatin1String(key)).toInteger();
}

std::shared_ptr<const RankSet> ddpJob()
{
    static const auto set = RankSet::open(std::vector<std::string>{kRanks.toStdString()});
    return set;
}

} // namespace

class TestJobTab : public QObject {
    Q_OBJECT
    QTemporaryDir m_settings;

private slots:
    void initTestCase()
    {
        QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, m_settings.path());
        QCoreApplication::setOrganizationName(QStringLiteral("memscope-tests"));
        QCoreApplication::setApplicationName(QStringLiteral("memscope"));
    }

    void rankTableModel()
    {
        RankTableModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(model.rowCount(), 0);
        model.setRankSet(ddpJob());
        QCOMPARE(model.rowCount(), 2);
        QCOMPARE(model.columnCount(), int(RankTableModel::ColumnCount));
        for (int r = 0; r < 2; ++r) {
            QCOMPARE(model.data(model.index(r, RankTableModel::Rank), RankTableModel::SortRole).toInt(), r);
            QCOMPARE(model.data(model.index(r, RankTableModel::Peak), RankTableModel::SortRole).toLongLong(),
                     counter(r, "requested_bytes.all.peak"));
            QCOMPARE(model.data(model.index(r, RankTableModel::Reserved), RankTableModel::SortRole).toLongLong(),
                     counter(r, "max_reserved"));
            QVERIFY(!model.data(model.index(r, RankTableModel::PeakPhase), Qt::DisplayRole).toString().isEmpty());
            QVERIFY(model.data(model.index(r, RankTableModel::Communication), RankTableModel::SortRole).toLongLong() > 0);
            QCOMPARE(model.data(model.index(r, RankTableModel::Oom), RankTableModel::SortRole).toInt(), 0);
        }
        const double mean = ddpJob()->meanPeak();
        QCOMPARE(model.data(model.index(1, RankTableModel::AboveMean), RankTableModel::SortRole).toDouble(),
                 (counter(1, "requested_bytes.all.peak") - mean) / mean);
        model.setRankSet(nullptr);
        QCOMPARE(model.rowCount(), 0);
    }

    void jobTab()
    {
        JobTab tab(ddpJob(), QStringLiteral("ranks"));
        tab.resize(1200, 800);
        tab.show();
        QVERIFY(QTest::qWaitForWindowExposed(&tab));
        QCOMPARE(tab.selectedRank(), int(ddpJob()->focusRank()));
        RankMultiplesView* m = tab.multiples();
        QCOMPARE(m->shownRanks().size(), size_t(2));
        for (size_t k = 0; k < 2; ++k) {
            QVERIFY(m->pointCount(k) > 10);
            QVERIFY(m->pointCount(k) <= m->width()); // at most one column a pixel
        }
        // The plots share one y range reaching the highest peak.
        auto* rect = qobject_cast<QCPAxisRect*>(m->plot()->plotLayout()->elementAt(0));
        QVERIFY(rect);
        const double top = rect->axis(QCPAxis::atLeft)->range().upper;
        QVERIFY(top >= std::max(counter(0, "requested_bytes.all.peak"), counter(1, "requested_bytes.all.peak")));
        // By iteration, each rank's curve starts before iteration 0 ends and spans its steps.
        m->setAlignment(RankMultiplesView::Alignment::Iteration);
        rect = qobject_cast<QCPAxisRect*>(m->plot()->plotLayout()->elementAt(0)); // the plots were made anew
        QVERIFY(rect);
        const QCPRange x = rect->axis(QCPAxis::atBottom)->range();
        QVERIFY(x.lower < 1.0);
        QVERIFY(x.upper >= double(ddpJob()->ranks()[0].summary.iterationStartUs.size()) - 1);
        // MEMSCOPE_JOB_SCREENSHOT=FILE.png keeps a picture of the tab (by iteration) to look at.
        if (qEnvironmentVariableIsSet("MEMSCOPE_JOB_SCREENSHOT")) {
            QTest::qWait(50);
            tab.grab().save(qEnvironmentVariable("MEMSCOPE_JOB_SCREENSHOT"));
        }
        // Activating a rank asks for its snapshot.
        QSignalSpy open(&tab, &JobTab::openRank);
        emit tab.table()->activated(tab.table()->model()->index(0, 0));
        QCOMPARE(open.size(), 1);
        QVERIFY(open.front().front().toString().endsWith(QStringLiteral("ddp_rank0.pickle")));
    }

    // A folder opens as one job; a rank opened from it gets its own snapshot tab on its device.
    // Issue 29: "Communication" was cut in the rank table at 1000 px. At 1000 and 1600 px
    // every column is at least as wide as its header's text and its cells' text.
    void rankTableHeadersFit_data()
    {
        QTest::addColumn<int>("width");
        QTest::newRow("1000 px") << 1000;
        QTest::newRow("1600 px") << 1600;
    }
    void rankTableHeadersFit()
    {
        QFETCH(int, width);
        JobTab tab(ddpJob(), QStringLiteral("ranks"));
        tab.resize(width, 640);
        tab.show();
        QVERIFY(QTest::qWaitForWindowExposed(&tab));
        QTableView* t = tab.table();
        const QFontMetrics fm(t->horizontalHeader()->font());
        for (int c = 0; c < t->model()->columnCount(); ++c) {
            if (t->isColumnHidden(c))
                continue;
            const QString header = t->model()->headerData(c, Qt::Horizontal).toString();
            QVERIFY2(t->columnWidth(c) >= fm.horizontalAdvance(header) + 8,
                     qPrintable(QStringLiteral("%1: %2 px").arg(header).arg(t->columnWidth(c))));
            for (int r = 0; r < t->model()->rowCount(); ++r) {
                const QString cell = t->model()->index(r, c).data().toString();
                QVERIFY2(t->columnWidth(c) >= QFontMetrics(t->font()).horizontalAdvance(cell),
                         qPrintable(QStringLiteral("%1 row %2: %3").arg(header).arg(r).arg(cell)));
            }
        }
    }

    void mainWindowOpensFolderAsJob()
    {
        MainWindow w;
        w.resize(1400, 900);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(MainWindow::isJob({kRanks}));
        QVERIFY(MainWindow::isJob({kRanks + QStringLiteral("/ddp_rank0.pickle"), kRanks + QStringLiteral("/ddp_rank1.pickle")}));
        QVERIFY(!MainWindow::isJob({kRanks + QStringLiteral("/ddp_rank0.pickle")}));
        w.openFiles({kRanks});
        QTRY_VERIFY_WITH_TIMEOUT(w.tabCount() == 1 && w.jobTab(0), 60000);
        JobTab* job = w.jobTab(0);
        QCOMPARE(job->rankSet().size(), size_t(2));
        QCOMPARE(job->selectedRank(), int(job->rankSet().focusRank()));
        emit job->openRank(kRanks + QStringLiteral("/ddp_rank1.pickle"));
        QTRY_VERIFY_WITH_TIMEOUT(w.tabCount() == 2 && w.tab(1), 60000);
        QCOMPARE(w.tab(1)->document().devices[w.tab(1)->deviceIndex()].device, 1);
        w.tabs()->setCurrentIndex(0);
        w.tabs()->tabCloseRequested(0);
    }

    // The regression: a file whose OOM is on device 1 opened on device 0.
    void snapshotTabOpensOnOomDevice_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<int>("device");
        QTest::newRow("oom on device 1") << "two_gpus_oom1.pickle" << 1;
        QTest::newRow("oom on device 0, the lower peak") << "two_gpus_oom0.pickle" << 0;
    }
    void snapshotTabOpensOnOomDevice()
    {
        QFETCH(QString, file);
        QFETCH(int, device);
        MainWindow w;
        w.resize(1400, 900);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        w.openFile(QStringLiteral(MEMSCOPE_TESTDATA_DIR "/multi/") + file);
        QTRY_VERIFY_WITH_TIMEOUT(w.tabCount() == 1 && w.tab(0), 60000);
        const SnapshotTab* t = w.tab(0);
        QCOMPARE(t->document().devices[t->deviceIndex()].device, device);
    }
};

QTEST_MAIN(TestJobTab)
#include "tst_job_tab.moc"
