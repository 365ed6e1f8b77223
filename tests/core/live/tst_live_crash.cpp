// The on-disk recording survives a crash of the app: `memscope record --attach` (the app's
// live client, writing OUT.pickle.mscp as events arrive, flushed to disk every 500 ms) is
// killed with SIGKILL in mid-stream while `memscope replay-serve` paces a real recording;
// the stream it was writing opens (readLiveStreamFile, and analyze() like any recording) and
// holds a prefix of the source, event for event. Also: the native sender serves a whole
// recording equal to the file, at a fixed rate and unpaced.
#include "analysis/analysis.h"
#include "analysis/incremental_analysis.h"
#include "io/summary_writer.h"
#include "live/live_client.h"
#include "snapshot/snapshot_reader.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <atomic>
#include <csignal>
#include <thread>

using namespace memscope;

namespace {

QString socketIn(const QTemporaryDir& dir, const char* name) { return dir.filePath(QString::fromUtf8(name)); }

bool waitForFile(const QString& path, int ms)
{
    QElapsedTimer t;
    t.start();
    while (!QFile::exists(path) && t.elapsed() < ms)
        QTest::qWait(20);
    return QFile::exists(path);
}

QString comparePrefix(const Snapshot& got, const Snapshot& source)
{
    const EventTable& g = got.devices.at(0).events;
    const EventTable& s = source.devices.at(0).events;
    if (g.count() > s.count())
        return QStringLiteral("more events than the source");
    for (size_t k = 0; k < g.count(); ++k)
        if (g.action[k] != s.action[k] || g.addr[k] != s.addr[k] || g.size[k] != s.size[k] || g.timeUs[k] != s.timeUs[k] ||
            g.stream[k] != s.stream[k])
            return QStringLiteral("event %1 differs").arg(k);
    return {};
}

} // namespace

class TestLiveCrash : public QObject {
    Q_OBJECT
private slots:
    void killedAppLeavesAnOpenableRecording()
    {
        if (QString::fromUtf8(MEMSCOPE_APP).isEmpty())
            QFAIL("the memscope executable is not built");
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QFile::setPermissions(dir.path(), QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
        const QString source = QStringLiteral(MEMSCOPE_SAMPLES_DIR "/many_small.pickle");
        const auto full = readSnapshotFile(source.toStdString());
        const size_t total = full->devices.at(0).events.count();
        const QString sock = socketIn(dir, "a.sock");
        QProcess server;
        server.setProcessChannelMode(QProcess::ForwardedErrorChannel);
        // ~3 s for the whole recording: the kill lands in mid-stream.
        server.start(QStringLiteral(MEMSCOPE_APP), {QStringLiteral("replay-serve"), source, QStringLiteral("--socket"), sock,
                                                    QStringLiteral("--rate"), QString::number(total / 3)});
        QVERIFY(server.waitForStarted());
        QVERIFY(waitForFile(sock, 10000));
        const QString out = dir.filePath(QStringLiteral("out.pickle"));
        QProcess app;
        app.setProcessChannelMode(QProcess::ForwardedErrorChannel);
        app.start(QStringLiteral(MEMSCOPE_APP),
                  {QStringLiteral("record"), QStringLiteral("--attach"), sock, QStringLiteral("-o"), out});
        QVERIFY(app.waitForStarted());
        QTest::qWait(1700);
        QCOMPARE(app.state(), QProcess::Running);
        ::kill(static_cast<pid_t>(app.processId()), SIGKILL);
        QVERIFY(app.waitForFinished(5000));
        QCOMPARE(app.exitStatus(), QProcess::CrashExit);
        QVERIFY(!QFile::exists(out)); // the app never got to write its pickle
        const QString stream = out + QStringLiteral(".mscp");
        QVERIFY(QFile::exists(stream));
        std::string note;
        const auto got = readLiveStreamFile(stream.toStdString(), &note);
        const size_t n = got->devices.at(0).events.count();
        // At 1/3 of the recording a second, 1.7 s in and flushed every 0.5 s: more than the
        // first second's worth is on disk, and not the end.
        QVERIFY2(n >= total / 3 && n < total, qPrintable(QStringLiteral("%1 of %2 events").arg(n).arg(total)));
        qInfo("%zu of %zu events on disk after the kill", n, total);
        QVERIFY(!note.empty()); // it says the recording stops before its end
        const QString diff = comparePrefix(*got, *full);
        QVERIFY2(diff.isEmpty(), qPrintable(diff));
        // The same file opens through the one pipeline, as any recording.
        const auto a = analyze(AnalysisSource::file(stream.toStdString()));
        QCOMPARE(a->replay->devices.at(0).eventCount, static_cast<int64_t>(n));
        QVERIFY(a->reached(AnalysisStage::Diagnosed));
        // regression: `memscope summary` of a stream file called it "pickle protocol 0"
        const std::string summary = summaryText(*a->replay, std::nullopt, std::nullopt);
        QVERIFY2(summary.find("format: memscope live stream,") != std::string::npos, summary.c_str());
        QVERIFY(summary.find("pickle protocol") == std::string::npos);
        server.kill();
        server.waitForFinished(5000);
    }

    // The live tab's path end to end: IncrementalAnalysis started on a LiveClient receiving a
    // paced replay-serve. Views arrive while the stream does; the last one shows every event
    // with the file's peaks and a full analysis of all of them, equal to the file's findings.
    void incrementalAnalysisOnALiveClient()
    {
        QTemporaryDir dir;
        QFile::setPermissions(dir.path(), QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
        const QString file = QStringLiteral(MEMSCOPE_SAMPLES_DIR "/oracle_qwen_bs16.pickle");
        const auto want = analyze(AnalysisSource::file(file.toStdString()));
        const int64_t total = want->replay->devices.at(0).eventCount;
        const QString sock = socketIn(dir, "i.sock");
        QProcess server;
        server.setProcessChannelMode(QProcess::ForwardedErrorChannel);
        server.start(QStringLiteral(MEMSCOPE_APP), {QStringLiteral("replay-serve"), file, QStringLiteral("--socket"), sock,
                                                    QStringLiteral("--rate"), QString::number(total)}); // about 1 s
        QVERIFY(server.waitForStarted());
        LiveClient client;
        client.connect(LiveEndpoint{sock.toStdString(), {}, 0, {}});
        IncrementalAnalysis::Options o;
        o.minFullAnalysisIntervalMs = 200;
        IncrementalAnalysis inc(o);
        std::atomic<int> published{0};
        std::atomic<int64_t> partial{0};
        inc.start(client, [&] {
            const auto v = inc.view();
            ++published;
            if (v->events > 0 && v->events < total)
                partial = v->events;
        });
        QVERIFY(client.waitFinished(30000));
        QElapsedTimer t;
        t.start();
        std::shared_ptr<const LiveView> v;
        while (t.elapsed() < 20000) {
            v = inc.view();
            if (v->state == LiveState::Ended && v->events == total && v->analysisEvents == total)
                break;
            QTest::qWait(50);
        }
        inc.stop();
        QVERIFY(partial > 0); // views came while the stream did
        QVERIFY(published >= 3);
        QCOMPARE(v->events, total);
        QCOMPARE(v->analysisEvents, total);
        QVERIFY2(v->error.empty(), v->error.c_str());
        QCOMPARE(v->stats.agentDropped, uint64_t(0));
        const DeviceReplayView& d = v->devices.at(0);
        QCOMPARE(d.peakRequested.bytes, want->replay->devices[0].peakRequested.bytes);
        QCOMPARE(d.peakRequested.event, want->replay->devices[0].peakRequested.event);
        QCOMPARE(d.peakReserved.bytes, want->replay->devices[0].peakReserved.bytes);
        QVERIFY(v->analysis);
        QCOMPARE(v->analysis->diagnosis->items.size(), want->diagnosis->items.size());
        for (size_t i = 0; i < want->diagnosis->items.size(); ++i)
            QCOMPARE(v->analysis->diagnosis->items[i].message, want->diagnosis->items[i].message);
        QCOMPARE(v->analysis->attribution->devices[0].allocationCategory, want->attribution->devices[0].allocationCategory);
        inc.retire(v);
        // (qWait above may already have seen it finish.)
        QVERIFY(server.state() == QProcess::NotRunning || server.waitForFinished(10000));
        QCOMPARE(server.exitCode(), 0);
    }

    // The native sender's whole stream equals the file: unpaced, and paced by --rate.
    void replayServeEqualsTheFile_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("rate");
        QTest::newRow("oracle_qwen_bs16 unpaced") << QStringLiteral(MEMSCOPE_SAMPLES_DIR "/oracle_qwen_bs16.pickle") << "0";
        QTest::newRow("two_gpus paced") << QStringLiteral(MEMSCOPE_TESTDATA_DIR "/multi/two_gpus.pickle") << "200000";
        QTest::newRow("oom unpaced") << QStringLiteral(MEMSCOPE_SAMPLES_DIR "/oom.pickle") << "0";
    }
    void replayServeEqualsTheFile()
    {
        QFETCH(QString, file);
        QFETCH(QString, rate);
        QTemporaryDir dir;
        QFile::setPermissions(dir.path(), QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
        const QString sock = socketIn(dir, "s.sock");
        QProcess server;
        server.setProcessChannelMode(QProcess::ForwardedErrorChannel);
        server.start(QStringLiteral(MEMSCOPE_APP),
                     {QStringLiteral("replay-serve"), file, QStringLiteral("--socket"), sock, QStringLiteral("--rate"), rate});
        QVERIFY(server.waitForStarted());
        LiveClient client;
        client.connect(LiveEndpoint{sock.toStdString(), {}, 0, {}});
        QVERIFY(client.waitFinished(30000));
        QCOMPARE(client.state(), LiveState::Ended);
        const auto got = client.snapshot();
        const auto want = readSnapshotFile(file.toStdString());
        QCOMPARE(got->devices.size(), want->devices.size());
        for (size_t d = 0; d < want->devices.size(); ++d) {
            const EventTable& g = got->devices[d].events;
            const EventTable& w = want->devices[d].events;
            QCOMPARE(g.count(), w.count());
            for (size_t k = 0; k < w.count(); ++k) {
                QCOMPARE(g.action[k], w.action[k]);
                QCOMPARE(g.addr[k], w.addr[k]);
                QCOMPARE(g.size[k], w.size[k]);
                QCOMPARE(g.timeUs[k], w.timeUs[k]);
                QCOMPARE(g.stack[k], w.stack[k]); // ids as the file's: definitions go out in id order
            }
        }
        QCOMPARE(got->annotations.size(), want->annotations.size());
        QCOMPARE(got->segments.size(), want->segments.size());
        // The same peaks as the file.
        AnalysisOptions replayOnly;
        replayOnly.until = AnalysisStage::Replayed;
        const auto a = analyze(AnalysisSource::recording(got, "served"), replayOnly);
        const auto b = analyze(AnalysisSource::file(file.toStdString()), replayOnly);
        for (size_t d = 0; d < b->replay->devices.size(); ++d) {
            QCOMPARE(a->replay->devices[d].peakRequested.bytes, b->replay->devices[d].peakRequested.bytes);
            QCOMPARE(a->replay->devices[d].peakReserved.bytes, b->replay->devices[d].peakReserved.bytes);
        }
        QVERIFY(server.waitForFinished(10000));
        QCOMPARE(server.exitCode(), 0);
    }
};

QTEST_GUILESS_MAIN(TestLiveCrash)
#include "tst_live_crash.moc"
