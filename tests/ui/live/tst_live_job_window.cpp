#include "support/rank_agent.h"

#include "analysis/analysis.h"
#include "job/rank_set.h"
#include "ui/live/live_job_window.h"
#include "ui/models/rank_table_model.h"
#include "ui/pages/job_tab.h"

#include <QApplication>
#include <QBrush>
#include <QColor>
#include <QFileInfo>
#include <QProcess>
#include <QProcessEnvironment>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>

#include <csignal>
#include <unistd.h>

using namespace memscope;

// The rank-set view attached live to every rank of a job (issue 17): two `--replay` agents
// told their rank and job through torchrun's variables; the window's rank table fills in as
// they stream, each rank's peak equal to its file's own replay, and a killed rank is shown
// dead while the other finishes.
class TestLiveJobWindow : public QObject {
    Q_OBJECT

    QString m_python;
    QTemporaryDir m_tmp;

    static QString rankFile(int rank) { return QStringLiteral(MEMSCOPE_TESTDATA_DIR "/ranks/ddp_rank%1.pickle").arg(rank); }
    QString directory() const { return m_tmp.path() + QStringLiteral("/memscope-%1").arg(::getuid()); }

    std::unique_ptr<QProcess> startRank(const QString& job, int rank, const QString& speed)
    {
        return test::startReplayRank(m_python, test::agentEnvironment(QStringLiteral(MEMSCOPE_AGENT_DIR), m_tmp.path()),
                                     rankFile(rank), job, rank, speed);
    }

    static QString cell(const LiveJobWindow& w, int row, int column)
    {
        const RankTableModel* m = w.jobTab()->model();
        return m->data(m->index(row, column), Qt::DisplayRole).toString();
    }

private slots:
    void initTestCase()
    {
        m_python = QStandardPaths::findExecutable(QStringLiteral("python3"));
        QVERIFY2(!m_python.isEmpty(), "python3 runs the agent (scripts/install-deps.sh installs it)");
    }

    void rankTableFillsAsRanksStream()
    {
        auto r0 = startRank(QStringLiteral("ui1"), 0, QStringLiteral("1"));
        auto r1 = startRank(QStringLiteral("ui1"), 1, QStringLiteral("1"));
        QVERIFY(r0 && r1);
        LiveJobWindow w(QStringLiteral("ui1"), directory(), 5000);
        QTRY_COMPARE_WITH_TIMEOUT(w.rankSet().size(), size_t(2), 30000);
        QVERIFY(!w.jobTab()->table()->isColumnHidden(RankTableModel::Live));
        QTRY_VERIFY_WITH_TIMEOUT(w.session().complete(), 60000);
        // The last summaries are of the whole recordings; the view was updated as they grew.
        QTRY_VERIFY_WITH_TIMEOUT(w.rankSet().ranks()[0].summary.events == 11369 && w.rankSet().ranks()[1].summary.events == 11369,
                                 30000);
        QVERIFY(w.updates() >= 3);
        QTRY_VERIFY_WITH_TIMEOUT(cell(w, 0, RankTableModel::Live) == QLatin1String("ended") &&
                                     cell(w, 1, RankTableModel::Live) == QLatin1String("ended"),
                                 10000);
        for (int r = 0; r < 2; ++r) {
            const RankEntry& e = w.rankSet().ranks()[static_cast<size_t>(r)];
            QCOMPARE(e.summary.rank, r);
            QCOMPARE(QString::fromStdString(e.live), QStringLiteral("ended"));
            QCOMPARE(cell(w, r, RankTableModel::Live), QStringLiteral("ended"));
            AnalysisOptions o;
            o.until = AnalysisStage::Attributed;
            const auto file = analyze(AnalysisSource::file(rankFile(r).toStdString()), o);
            QCOMPARE(e.summary.peakRequested, file->replay->devices[file->focusDevice()].peakRequested.bytes);
            QCOMPARE(e.summary.peakReserved, file->replay->devices[file->focusDevice()].peakReserved.bytes);
        }
        QVERIFY2(w.statusText().contains(QLatin1String("2 of 2 ranks")), qPrintable(w.statusText()));
        QTemporaryDir out;
        QString error;
        QVERIFY2(w.saveAll(out.path(), &error), qPrintable(error));
        QVERIFY(QFileInfo::exists(out.filePath(QStringLiteral("rank0.pickle"))));
        QVERIFY(QFileInfo::exists(out.filePath(QStringLiteral("rank1.pickle"))));
        r0->waitForFinished(30000);
        r1->waitForFinished(30000);
    }

    void killedRankShownDeadOtherFinishes()
    {
        auto r0 = startRank(QStringLiteral("ui2"), 0, QStringLiteral("0.15"));
        auto r1 = startRank(QStringLiteral("ui2"), 1, QStringLiteral("0.15"));
        QVERIFY(r0 && r1);
        LiveJobWindow w(QStringLiteral("ui2"), directory(), 5000);
        QTRY_VERIFY_WITH_TIMEOUT(w.rankSet().size() == 2 && w.rankSet().ranks()[1].summary.events > 500, 30000);
        ::kill(static_cast<pid_t>(r1->processId()), SIGKILL);
        QTRY_VERIFY_WITH_TIMEOUT(cell(w, 1, RankTableModel::Live).startsWith(QLatin1String("dead")), 10000);
        QCOMPARE(cell(w, 0, RankTableModel::Live), QStringLiteral("streaming"));
        const RankTableModel* m = w.jobTab()->model();
        QCOMPARE(m->data(m->index(1, RankTableModel::Live), Qt::ForegroundRole).value<QBrush>().color(),
                 QColor(0xc6, 0x28, 0x28));
        QTRY_VERIFY_WITH_TIMEOUT(cell(w, 0, RankTableModel::Live) == QLatin1String("ended"), 60000);
        QVERIFY(cell(w, 1, RankTableModel::Live).startsWith(QLatin1String("dead")));
        // The dead rank's recording so far stays in the table.
        QTRY_VERIFY_WITH_TIMEOUT(w.rankSet().ranks()[1].ok() && w.rankSet().ranks()[1].summary.events > 500, 10000);
        r0->waitForFinished(30000);
        r1->waitForFinished();
    }
};

QTEST_MAIN(TestLiveJobWindow)
#include "tst_live_job_window.moc"
