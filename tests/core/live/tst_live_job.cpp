#include "support/rank_agent.h"
#include "support/snapshot_compare.h"

#include "analysis/analysis.h"
#include "live/agent_directory.h"
#include "live/job_live_session.h"
#include "live/live_client.h"
#include "live/live_recording.h"
#include "snapshot/snapshot_reader.h"

#include <QElapsedTimer>
#include <QFileInfo>
#include <QProcess>
#include <QProcessEnvironment>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>

#include <csignal>
#include <unistd.h>

using namespace memscope;

// Live attach to every rank of a torchrun job (issue 17), on the CPU: one `--replay` agent
// per rank file of tests/data/ranks/, each told its rank and job through torchrun's
// environment variables, so each listens on job-<job>-rank-<r>.sock in a private
// directory made for the test; discovered together, attached together (JobLiveSession),
// recorded together (`memscope record --attach-job`, `--all-ranks -- LAUNCHER`).
// A stand-in for torchrun: starts two ranks with torchrun's variables, each serving its file.
static const char* const kLauncher = R"PY(
import os, subprocess, sys
import memscope_agent
assert memscope_agent.running() is None and os.environ["MEMSCOPE_AGENT"] == "ranks"
ps = [subprocess.Popen([sys.executable, "-c", "import memscope_agent; memscope_agent.running().source.done.wait(60)"],
                       env=dict(os.environ, RANK=str(r), LOCAL_RANK=str(r), WORLD_SIZE="2",
                                MEMSCOPE_AGENT_REPLAY=sys.argv[1 + r])) for r in (0, 1)]
sys.exit(max(p.wait() for p in ps))
)PY";

class TestLiveJob : public QObject {
    Q_OBJECT

    QString m_python;
    QTemporaryDir m_tmp; // TMPDIR of the agents: their directory is m_tmp/memscope-UID

    static QString rankFile(int rank) { return QStringLiteral(MEMSCOPE_TESTDATA_DIR "/ranks/ddp_rank%1.pickle").arg(rank); }
    std::string directory() const { return (m_tmp.path() + QStringLiteral("/memscope-%1").arg(::getuid())).toStdString(); }

    QProcessEnvironment env() const { return test::agentEnvironment(QStringLiteral(MEMSCOPE_AGENT_DIR), m_tmp.path()); }

    // A rank's agent serving its file at `speed` (0: as fast as it can).
    std::unique_ptr<QProcess> startRank(const QString& job, int rank, const QString& speed)
    {
        return test::startReplayRank(m_python, env(), rankFile(rank), job, rank, speed);
    }

    // A rank file as the stream carries it: a stream names only the devices that have events,
    // so the file's empty trailing devices (ddp_rank0 lists device 1 with no event) are left out.
    static std::shared_ptr<const Snapshot> asStreamed(int rank)
    {
        std::shared_ptr<Snapshot> s = copySnapshot(*readSnapshotFile(rankFile(rank).toStdString()));
        while (!s->devices.empty() && s->devices.back().events.count() == 0)
            s->devices.pop_back();
        return s;
    }

    static int64_t peakRequested(const std::shared_ptr<const Snapshot>& s, const std::string& name)
    {
        AnalysisOptions o;
        o.until = AnalysisStage::Replayed;
        const auto a = analyze(AnalysisSource::recording(s, name), o);
        return a->replay->devices[a->focusDevice()].peakRequested.bytes;
    }

private slots:
    void initTestCase()
    {
        m_python = QStandardPaths::findExecutable(QStringLiteral("python3"));
        QVERIFY2(!m_python.isEmpty(), "python3 runs the agent (scripts/install-deps.sh installs it)");
        QVERIFY(m_tmp.isValid());
    }

    // Both ranks listed as one job, with their ranks and the world size.
    void ranksOfAJobAreDiscoveredTogether()
    {
        auto r0 = startRank(QStringLiteral("jobA"), 0, QStringLiteral("0"));
        auto r1 = startRank(QStringLiteral("jobA"), 1, QStringLiteral("0"));
        QVERIFY(r0 && r1);
        QTRY_COMPARE_WITH_TIMEOUT(listJobAgents("jobA", directory()).size(), size_t(2), 30000);
        const auto jobs = listJobs(directory());
        QCOMPARE(jobs.size(), size_t(1));
        QCOMPARE(jobs[0].first, std::string("jobA"));
        const auto& agents = jobs[0].second;
        for (int r = 0; r < 2; ++r) {
            QCOMPARE(agents[r].rank, r);
            QCOMPARE(agents[r].worldSize, 2);
            QCOMPARE(agents[r].pid, static_cast<int>((r ? r1 : r0)->processId()));
            QVERIFY(QString::fromStdString(agents[r].socketPath).endsWith(QStringLiteral("/job-jobA-rank-%1.sock").arg(r)));
        }
        QVERIFY(listJobAgents("jobB", directory()).empty());
        r0->kill();
        r1->kill();
        r0->waitForFinished();
        r1->waitForFinished();
    }

    // Attached together: every event arrives, each rank's recording equals its file and
    // its peak equals the file's own replay.
    void attachedTogetherEveryEventArrives()
    {
        auto r0 = startRank(QStringLiteral("jobB"), 0, QStringLiteral("1"));
        auto r1 = startRank(QStringLiteral("jobB"), 1, QStringLiteral("1"));
        QVERIFY(r0 && r1);
        JobLiveSession session({.job = "jobB", .directory = directory(), .recoveryDir = {}, .lagMs = 5000});
        QTRY_VERIFY_WITH_TIMEOUT((session.poll(), session.size() == 2), 30000);
        bool sawBothStreaming = false;
        QElapsedTimer clock;
        clock.start();
        while (!session.complete()) {
            QVERIFY2(clock.elapsed() < 60000, "the ranks should end within a minute");
            QVERIFY(session.size() == 2);
            session.poll();
            const auto st = session.status();
            sawBothStreaming |= st[0].state == RankLiveState::Streaming && st[1].state == RankLiveState::Streaming &&
                                st[0].stats.events > 0 && st[1].stats.events > 0;
            QThread::msleep(20);
        }
        QVERIFY(sawBothStreaming);
        QCOMPARE(session.worldSize(), 2);
        const auto st = session.status();
        for (int r = 0; r < 2; ++r) {
            QCOMPARE(st[r].rank, r);
            QCOMPARE(rankLiveStateName(st[r].state), std::string_view("ended"));
            QCOMPARE(session.client(r).hello().rank, r);
            QCOMPARE(session.client(r).hello().job, std::string("jobB"));
            const auto file = asStreamed(r);
            const auto got = session.client(r).snapshot();
            size_t fileEvents = 0;
            for (const auto& d : file->devices)
                fileEvents += d.events.count();
            QCOMPARE(st[r].stats.events, uint64_t(fileEvents));
            QCOMPARE(QString::fromStdString(test::compareSnapshots(*file, *got)), QString());
            QCOMPARE(peakRequested(got, "live"), peakRequested(file, "file"));
        }
        QVERIFY(r0->waitForFinished(30000));
        QVERIFY(r1->waitForFinished(30000));
    }

    // A rank killed mid-stream is shown dead while the other streams on and finishes; a
    // stopped one (SIGSTOP) is shown lagging while the other streams, and streams again.
    void deadAndLaggingRanksLeaveTheOthersStreaming()
    {
        auto r0 = startRank(QStringLiteral("jobC"), 0, QStringLiteral("0.15"));
        auto r1 = startRank(QStringLiteral("jobC"), 1, QStringLiteral("0.15"));
        QVERIFY(r0 && r1);
        JobLiveSession session({.job = "jobC", .directory = directory(), .recoveryDir = {}, .lagMs = 800});
        QTRY_VERIFY_WITH_TIMEOUT((session.poll(), session.size() == 2 && session.status()[1].stats.events > 500), 30000);

        ::kill(static_cast<pid_t>(r1->processId()), SIGSTOP);
        QTRY_VERIFY_WITH_TIMEOUT((session.poll(), session.status()[1].state == RankLiveState::Lagging), 10000);
        QVERIFY(session.status()[0].state == RankLiveState::Streaming);
        ::kill(static_cast<pid_t>(r1->processId()), SIGCONT);
        QTRY_VERIFY_WITH_TIMEOUT((session.poll(), session.status()[1].state == RankLiveState::Streaming), 10000);

        ::kill(static_cast<pid_t>(r1->processId()), SIGKILL);
        QTRY_VERIFY_WITH_TIMEOUT((session.poll(), session.status()[1].state == RankLiveState::Dead), 10000);
        const auto atDeath = session.status();
        QVERIFY2(!session.client(0).finished(), "rank 0 should still be streaming when rank 1 dies");
        QVERIFY(atDeath[1].stats.events < 11369);
        QVERIFY(!atDeath[1].detail.empty());
        QTRY_VERIFY_WITH_TIMEOUT((session.poll(), session.allFinished()), 60000);
        const auto st = session.status();
        QCOMPARE(rankLiveStateName(st[0].state), std::string_view("ended"));
        QCOMPARE(st[0].stats.events, uint64_t(11369));
        QCOMPARE(rankLiveStateName(st[1].state), std::string_view("dead"));
        QCOMPARE(st[1].stats.events, atDeath[1].stats.events); // what arrived stays
        r0->waitForFinished(30000);
        r1->waitForFinished();
    }

    // memscope record --attach-job JOB -o DIR: DIR/rank<R>.pickle per rank, equal to its file.
    void recordAttachJobWritesEveryRank()
    {
        const QString memscope = QStringLiteral(MEMSCOPE_APP);
        QVERIFY2(QFileInfo::exists(memscope), "the memscope binary is built before the tests");
        auto r0 = startRank(QStringLiteral("jobD"), 0, QStringLiteral("0"));
        auto r1 = startRank(QStringLiteral("jobD"), 1, QStringLiteral("0"));
        QVERIFY(r0 && r1);
        QTRY_COMPARE_WITH_TIMEOUT(listJobAgents("jobD", directory()).size(), size_t(2), 30000);
        QTemporaryDir out;
        QProcess rec;
        rec.setProcessEnvironment(env());
        rec.setProcessChannelMode(QProcess::MergedChannels);
        rec.start(memscope, {QStringLiteral("record"), QStringLiteral("--attach-job"), QStringLiteral("jobD"),
                             QStringLiteral("-o"), out.path()});
        QVERIFY(rec.waitForFinished(120000));
        const QString log = QString::fromUtf8(rec.readAll());
        QVERIFY2(rec.exitCode() == 0, qPrintable(log));
        QVERIFY2(log.contains(QLatin1String("2 of 2 ranks written")), qPrintable(log));
        for (int r = 0; r < 2; ++r) {
            const QString f = out.filePath(QStringLiteral("rank%1.pickle").arg(r));
            QCOMPARE(QString::fromStdString(test::compareSnapshots(*asStreamed(r), *readSnapshotFile(f.toStdString()))),
                     QString());
            QVERIFY(!QFileInfo::exists(f + QStringLiteral(".mscp")));
        }
        r0->waitForFinished(30000);
        r1->waitForFinished(30000);
    }

    // memscope record --all-ranks -o DIR -- LAUNCHER: a stand-in for torchrun starts two ranks
    // with torchrun's variables; the launcher itself starts no agent (MEMSCOPE_AGENT=ranks).
    void recordAllRanksOfALaunchedJob()
    {
        const QString memscope = QStringLiteral(MEMSCOPE_APP);
        QVERIFY2(QFileInfo::exists(memscope), "the memscope binary is built before the tests");
        const QString launcher = QString::fromUtf8(kLauncher);
        QTemporaryDir out;
        QProcessEnvironment e = env();
        e.insert(QStringLiteral("MEMSCOPE_AGENT_PATH"), QStringLiteral(MEMSCOPE_AGENT_DIR));
        e.insert(QStringLiteral("MEMSCOPE_AGENT_SPEED"), QStringLiteral("0"));
        QProcess rec;
        rec.setProcessEnvironment(e);
        rec.setProcessChannelMode(QProcess::MergedChannels);
        rec.start(memscope, {QStringLiteral("record"), QStringLiteral("--all-ranks"), QStringLiteral("-o"), out.path(),
                             QStringLiteral("--"), m_python, QStringLiteral("-c"), launcher, rankFile(0), rankFile(1)});
        QVERIFY(rec.waitForFinished(120000));
        const QString log = QString::fromUtf8(rec.readAll());
        QVERIFY2(rec.exitCode() == 0, qPrintable(log));
        for (int r = 0; r < 2; ++r) {
            const QString file = out.filePath(QStringLiteral("rank%1.pickle").arg(r));
            QVERIFY2(QFileInfo::exists(file), qPrintable(log));
            QCOMPARE(QString::fromStdString(test::compareSnapshots(*asStreamed(r), *readSnapshotFile(file.toStdString()))),
                     QString());
        }
    }

    // Real streams (tests/data/ranks/torchrun/): both ranks of a 2-rank torchrun DDP job (gloo,
    // one H200 shared, tracker mode) as agent/tools/record_ranks.py received them; each rank's
    // replayed peaks equal what torch counted in that rank (requested_bytes.all.peak,
    // max_memory_reserved, dumped by agent/tools/ddp_train.py).
    void realTorchrunRankStreams()
    {
        for (int r = 0; r < 2; ++r) {
            std::string note;
            const auto s = readLiveStreamFile(
                QStringLiteral(MEMSCOPE_TESTDATA_DIR "/ranks/torchrun/rank%1.mscp").arg(r).toStdString(), &note);
            QCOMPARE(QString::fromStdString(note), QString());
            AnalysisOptions o;
            o.until = AnalysisStage::Replayed;
            const auto a = analyze(AnalysisSource::recording(s, "rank"), o);
            const DeviceReplay& d = a->replay->devices[a->focusDevice()];
            QCOMPARE(d.eventCount, int64_t(3925));
            QCOMPARE(d.peakRequested.bytes, int64_t(496819268));
            QCOMPARE(d.peakReserved.bytes, int64_t(517996544));
        }
    }

    void usageErrors()
    {
        const QString memscope = QStringLiteral(MEMSCOPE_APP);
        QVERIFY2(QFileInfo::exists(memscope), "the memscope binary is built before the tests");
        for (const QStringList& args :
             {QStringList{QStringLiteral("record"), QStringLiteral("--all-ranks"), QStringLiteral("-o"), QStringLiteral("d")},
              QStringList{QStringLiteral("record"), QStringLiteral("--attach-job"), QStringLiteral("j")},
              QStringList{QStringLiteral("record"), QStringLiteral("--attach-job"), QStringLiteral("j"), QStringLiteral("-o"),
                          QStringLiteral("d"), QStringLiteral("--attach"), QStringLiteral("1")}}) {
            QProcess p;
            p.setProcessChannelMode(QProcess::MergedChannels);
            p.start(memscope, args);
            QVERIFY(p.waitForFinished(30000));
            QCOMPARE(p.exitCode(), 1); // as every usage error of record
            QVERIFY(QString::fromUtf8(p.readAll()).contains(QLatin1String("usage: memscope record")));
        }
    }
};

QTEST_GUILESS_MAIN(TestLiveJob)
#include "tst_live_job.moc"
