#include "support/snapshot_compare.h"

#include "io/pickle_writer.h"
#include "live/agent_directory.h"
#include "live/live_client.h"
#include "live/nvml.h"
#include "snapshot/snapshot_reader.h"

#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QProcessEnvironment>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>

#include <csignal>
#include <cstring>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace memscope;

// The app's live client attached to real agent processes: `python3 -m memscope_agent
// --replay FILE` serves a recorded snapshot through the same socket and protocol the
// GPU agent uses, so the whole path is tested without torch or a GPU.
class TestLiveClient : public QObject {
    Q_OBJECT

    QString m_python;

    static QString sample(const char* name) { return QStringLiteral(MEMSCOPE_SAMPLES_DIR "/") + QLatin1String(name); }

    static QProcessEnvironment agentEnv()
    {
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("PYTHONPATH"), QStringLiteral(MEMSCOPE_AGENT_DIR));
        env.insert(QStringLiteral("MEMSCOPE_AGENT_QUIET"), QStringLiteral("1"));
        return env;
    }

    std::unique_ptr<QProcess> startAgent(const QString& file, const QString& socket, const QString& speed, QStringList extra = {})
    {
        auto p = std::make_unique<QProcess>();
        p->setProcessEnvironment(agentEnv());
        p->setProcessChannelMode(QProcess::ForwardedErrorChannel);
        p->start(m_python, QStringList{QStringLiteral("-m"), QStringLiteral("memscope_agent"), QStringLiteral("--replay"), file,
                                       QStringLiteral("--speed"), speed, QStringLiteral("--socket"), socket,
                                       QStringLiteral("--linger"), QStringLiteral("5")} +
                               extra);
        if (!p->waitForStarted())
            return nullptr;
        return p;
    }

    static LiveEndpoint unixEndpoint(const QString& path)
    {
        LiveEndpoint e;
        e.unixPath = path.toStdString();
        return e;
    }

    // A fake agent: a valid beginning (HELLO, 10 events), then `tail`, then silence.
    std::unique_ptr<QProcess> startFakeAgent(const QString& socket, const QString& tail)
    {
        const QString script = QStringLiteral(R"(
import os, socket, sys, time
from memscope_agent import protocol as P
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); s.bind(sys.argv[1]); s.listen(1)
c, _ = s.accept(); c.recv(4096)
enc = P.Encoder()
for i in range(10):
    enc.event(0, {"action": "alloc", "addr": 4096 * (i + 1), "size": 512, "stream": 0, "time_us": i,
                  "frames": [{"filename": "t.py", "line": i, "name": "f"}]})
defs, body, n = enc.take()
c.sendall(P.hello({"pid": os.getpid(), "mode": "fake"}) + defs + body)
time.sleep(0.3)
c.sendall(%1)
time.sleep(30)
)")
                                   .arg(tail);
        auto p = std::make_unique<QProcess>();
        p->setProcessEnvironment(agentEnv());
        p->setProcessChannelMode(QProcess::ForwardedErrorChannel);
        p->start(m_python, {QStringLiteral("-c"), script, socket});
        if (!p->waitForStarted())
            return nullptr;
        return p;
    }

private slots:
    void initTestCase()
    {
        m_python = QStandardPaths::findExecutable(QStringLiteral("python3"));
        QVERIFY2(!m_python.isEmpty(), "python3 runs the agent (scripts/install-deps.sh installs it)");
    }

    void replayedRecordingEqualsFile_data()
    {
        QTest::addColumn<QString>("file");
        for (const char* f : {"linear3.pickle", "oom.pickle", "release.pickle", "llm_bs16.pickle", "llm_bs2_cpp.pickle",
                              "libtorch_mlp.pickle", "many_small.pickle"})
            QTest::newRow(f) << sample(f);
    }
    void replayedRecordingEqualsFile()
    {
        QFETCH(QString, file);
        QTemporaryDir dir;
        const QString socket = dir.filePath(QStringLiteral("a.sock"));
        auto agent = startAgent(file, socket, QStringLiteral("0"));
        QVERIFY(agent);
        LiveClient::Options options;
        options.recoveryPath = dir.filePath(QStringLiteral("recovery.mscp")).toStdString();
        LiveClient client(options);
        client.connect(unixEndpoint(socket));
        QVERIFY(client.waitFinished(120000));
        QCOMPARE(liveStateName(client.state()), std::string_view("ended"));
        QCOMPARE(client.hello().mode, std::string("replay"));
        QVERIFY(client.stats().ended);

        auto original = readSnapshotFile(file.toStdString());
        auto received = client.snapshot();
        QCOMPARE(QString::fromStdString(test::compareSnapshots(*original, *received)), QString());

        // Save recording: the pickle memscope writes equals the replayed file, event for event.
        const QString saved = dir.filePath(QStringLiteral("saved.pickle"));
        writePickleSnapshotFile(*received, saved.toStdString());
        QCOMPARE(QString::fromStdString(test::compareSnapshots(*original, *readSnapshotFile(saved.toStdString()))), QString());
        // The recovery file holds the same stream.
        std::string note;
        auto recovered = readLiveStreamFile(options.recoveryPath, &note);
        QCOMPARE(QString::fromStdString(note), QString());
        QCOMPARE(QString::fromStdString(test::compareSnapshots(*original, *recovered)), QString());
        QVERIFY(agent->waitForFinished(30000));
        QCOMPARE(agent->exitCode(), 0);
    }

    void dataArrivesWhileTheAgentRuns()
    {
        QTemporaryDir dir;
        const QString socket = dir.filePath(QStringLiteral("a.sock"));
        auto agent = startAgent(sample("many_small.pickle"), socket, QStringLiteral("1"));
        LiveClient client;
        client.connect(unixEndpoint(socket));
        std::vector<uint64_t> seen;
        while (!client.waitFinished(100)) {
            const uint64_t n = client.stats().events;
            if (seen.empty() || seen.back() != n)
                seen.push_back(n);
        }
        QCOMPARE(client.stats().events, uint64_t(93702));
        QVERIFY2(seen.size() >= 3, "the recording should grow in steps while the agent paces it");
        QVERIFY(seen.front() < 93702);
        QVERIFY(agent->waitForFinished(30000));
    }

    void killedAgentLeavesDataAndClientWorking()
    {
        QTemporaryDir dir;
        const QString socket = dir.filePath(QStringLiteral("a.sock"));
        auto agent = startAgent(sample("many_small.pickle"), socket, QStringLiteral("0.5"));
        LiveClient::Options options;
        options.recoveryPath = dir.filePath(QStringLiteral("recovery.mscp")).toStdString();
        LiveClient client(options);
        client.connect(unixEndpoint(socket));
        QTRY_VERIFY_WITH_TIMEOUT(client.stats().events > 1000, 30000);
        ::kill(static_cast<pid_t>(agent->processId()), SIGKILL);
        QVERIFY(client.waitFinished(30000));
        QCOMPARE(liveStateName(client.state()), std::string_view("lost"));
        QVERIFY2(QString::fromStdString(client.error()).contains(QLatin1String("killed")), client.error().c_str());
        auto kept = client.snapshot();
        const size_t n = kept->devices[0].events.count();
        QVERIFY(n >= 1000 && n < 93702);
        // The partial recording saves and loads like any snapshot.
        const QString saved = dir.filePath(QStringLiteral("partial.pickle"));
        writePickleSnapshotFile(*kept, saved.toStdString());
        QCOMPARE(readSnapshotFile(saved.toStdString())->devices[0].events.count(), n);
        std::string note;
        QCOMPARE(readLiveStreamFile(options.recoveryPath, &note)->devices[0].events.count(), n);
        QVERIFY(!note.empty());
        // And the client side works on: a new agent, a new session.
        const QString socket2 = dir.filePath(QStringLiteral("b.sock"));
        auto agent2 = startAgent(sample("linear3.pickle"), socket2, QStringLiteral("0"));
        LiveClient again;
        again.connect(unixEndpoint(socket2));
        QVERIFY(again.waitFinished(60000));
        QCOMPARE(again.stats().events, uint64_t(25));
        agent->waitForFinished();
        QVERIFY(agent2->waitForFinished(30000));
    }

    void malformedMessageClosesWithErrorKeepsData_data()
    {
        QTest::addColumn<QString>("tail");
        QTest::addColumn<QString>("expected");
        QTest::newRow("oversized") << QStringLiteral("(0x7FFFFFFF).to_bytes(4, 'little') + b'\\x05' * 64")
                                   << QStringLiteral("outside 1..");
        QTest::newRow("bad events") << QStringLiteral("P.message(P.EVENTS, P.EVENTS_HEAD.pack(0, 0, 5) + b'x' * 48)")
                                    << QStringLiteral("5 events need");
        QTest::newRow("undefined stack")
            << QStringLiteral("P.message(P.EVENTS, P.EVENTS_HEAD.pack(0, 0, 1) + P.EVENT.pack(0, 1, 0, 4242, 1, 1, 0, 0, 0, 0))")
            << QStringLiteral("stack 4242");
        QTest::newRow("garbage") << QStringLiteral("b'\\x10\\x00\\x00\\x00\\x09{not json at all'")
                                 << QStringLiteral("invalid JSON");
    }
    void malformedMessageClosesWithErrorKeepsData()
    {
        QFETCH(QString, tail);
        QFETCH(QString, expected);
        QTemporaryDir dir;
        const QString socket = dir.filePath(QStringLiteral("fake.sock"));
        auto fake = startFakeAgent(socket, tail);
        QVERIFY(fake);
        LiveClient client;
        client.connect(unixEndpoint(socket));
        QVERIFY(client.waitFinished(30000));
        QCOMPARE(liveStateName(client.state()), std::string_view("failed"));
        QVERIFY2(QString::fromStdString(client.error()).contains(expected), client.error().c_str());
        QCOMPARE(client.snapshot()->devices[0].events.count(), size_t(10));
        fake->kill();
        fake->waitForFinished();
    }

    void secondClientLeavesFirstWorking()
    {
        QTemporaryDir dir;
        const QString socket = dir.filePath(QStringLiteral("a.sock"));
        auto agent = startAgent(sample("llm_bs16.pickle"), socket, QStringLiteral("0.5"));
        LiveClient first;
        first.connect(unixEndpoint(socket));
        QTRY_VERIFY_WITH_TIMEOUT(first.stats().events > 0, 30000);
        {
            LiveClient quitter;
            quitter.connect(unixEndpoint(socket));
            QTRY_VERIFY_WITH_TIMEOUT(quitter.stats().events > 0, 30000);
            quitter.detach();
            QCOMPARE(liveStateName(quitter.state()), std::string_view("detached"));
        }
        LiveClient second;
        second.connect(unixEndpoint(socket));
        QVERIFY(first.waitFinished(60000));
        QVERIFY(second.waitFinished(60000));
        auto original = readSnapshotFile(sample("llm_bs16.pickle").toStdString());
        QCOMPARE(QString::fromStdString(test::compareSnapshots(*original, *first.snapshot())), QString());
        QCOMPARE(QString::fromStdString(test::compareSnapshots(*original, *second.snapshot())), QString());
        QVERIFY(agent->waitForFinished(30000));
    }

    void refusesPlacesItShouldNotTrust()
    {
        QTemporaryDir dir;
        QCOMPARE(QString::fromStdString(checkPrivateDirectory(dir.path().toStdString())), QString());
        ::chmod(dir.path().toLocal8Bit().constData(), 0777);
        QVERIFY(QString::fromStdString(checkPrivateDirectory(dir.path().toStdString())).contains(QLatin1String("0700")));
        QVERIFY_THROWS_EXCEPTION(std::runtime_error, listAgents(dir.path().toStdString()));
        ::chmod(dir.path().toLocal8Bit().constData(), 0700);
        QVERIFY(listAgents(dir.path().toStdString()).empty());
        try {
            resolveAttachTarget("999999", dir.path().toStdString());
            QFAIL("expected no agent");
        } catch (const std::runtime_error& e) {
            QVERIFY(QString::fromUtf8(e.what()).contains(QLatin1String("no memscope agent runs in process 999999")));
        }
        LiveClient client;
        LiveClient::Options o;
        QVERIFY_THROWS_EXCEPTION(std::runtime_error, [&] {
            LiveClient c(LiveClient::Options{{}, 16u << 20, 200});
            c.connect(unixEndpoint(dir.filePath(QStringLiteral("nobody.sock"))));
        }());
        LiveEndpoint remote;
        remote.tcpHost = "192.0.2.1";
        remote.tcpPort = 9;
        try {
            client.connect(remote);
            QFAIL("expected a refusal");
        } catch (const std::runtime_error& e) {
            QVERIFY(QString::fromUtf8(e.what()).contains(QLatin1String("loopback")));
        }
    }

    // SO_PEERCRED: an agent socket served by another user is refused even where the
    // directory lets this user reach it (root reaches every directory). Needs root to
    // become another user; CI runs as root.
    void refusesAnAgentOfAnotherUser()
    {
        if (::geteuid() != 0)
            QSKIP("needs root to run a server as another user");
        const uid_t nobody = 65534;
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QVERIFY(::chown(dir.path().toLocal8Bit().constData(), nobody, nobody) == 0);
        const std::string path = dir.filePath(QStringLiteral("other.sock")).toStdString();
        int ready[2];
        QVERIFY(::pipe(ready) == 0);
        const pid_t child = ::fork();
        QVERIFY(child >= 0);
        if (child == 0) {
            ::close(ready[0]);
            if (::setgid(nobody) != 0 || ::setuid(nobody) != 0)
                ::_exit(2);
            const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
            sockaddr_un addr{};
            addr.sun_family = AF_UNIX;
            std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
            if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd, 1) != 0)
                ::_exit(3);
            (void)!::write(ready[1], "r", 1);
            const int conn = ::accept(fd, nullptr, nullptr);
            char byte;
            while (conn >= 0 && ::read(conn, &byte, 1) > 0) { }
            ::_exit(0);
        }
        ::close(ready[1]);
        char byte = 0;
        QCOMPARE(::read(ready[0], &byte, 1), ssize_t(1));
        ::close(ready[0]);
        struct stat st { };
        QVERIFY(::stat(path.c_str(), &st) == 0);
        QCOMPARE(st.st_uid, nobody);
        QString error;
        try {
            LiveClient client(LiveClient::Options{{}, 16u << 20, 2000});
            client.connect(unixEndpoint(QString::fromStdString(path)));
        } catch (const std::runtime_error& e) {
            error = QString::fromUtf8(e.what());
        }
        int status = 0;
        ::waitpid(child, &status, 0);
        QVERIFY2(error.contains(QLatin1String("the agent runs as uid 65534, not as this user")), qPrintable(error));
        QVERIFY(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }

    void listsAndResolvesRunningAgents()
    {
        QTemporaryDir tmp;
        QProcessEnvironment env = agentEnv();
        env.insert(QStringLiteral("TMPDIR"), tmp.path());
        env.insert(QStringLiteral("XDG_RUNTIME_DIR"), QString());
        QProcess agent;
        agent.setProcessEnvironment(env);
        agent.start(m_python, {QStringLiteral("-m"), QStringLiteral("memscope_agent"), QStringLiteral("--replay"),
                               sample("linear3.pickle"), QStringLiteral("--speed"), QStringLiteral("0")});
        QVERIFY(agent.waitForStarted());
        const std::string directory = (tmp.path() + QStringLiteral("/memscope-%1").arg(::getuid())).toStdString();
        QTRY_VERIFY_WITH_TIMEOUT(!listAgents(directory).empty(), 30000);
        const AgentInfo a = listAgents(directory).front();
        QCOMPARE(a.pid, static_cast<int>(agent.processId()));
        QCOMPARE(a.mode, std::string("replay"));
        const LiveEndpoint e = resolveAttachTarget(std::to_string(a.pid), directory);
        QCOMPARE(e.unixPath, a.socketPath);
        LiveClient client;
        client.connect(e);
        QVERIFY(client.waitFinished(60000));
        QCOMPARE(client.stats().events, uint64_t(25));
        QVERIFY(agent.waitForFinished(30000));
    }

    void nvmlAbsentMeansEmptyNotACrash()
    {
        qputenv("MEMSCOPE_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1");
        Nvml& nvml = Nvml::instance();
        if (nvml.available())
            QSKIP("a real NVML was loaded before this test");
        QVERIFY(!nvml.error().empty());
        QVERIFY(nvml.processes().empty());
        QVERIFY(!nvml.processUsedBytes(1).has_value());
    }

    void recordCommand()
    {
        const QString memscope = QStringLiteral(MEMSCOPE_APP);
        QVERIFY2(QFileInfo::exists(memscope), "the memscope binary is built before the tests");
        QTemporaryDir dir;
        // --attach SOCKET: ends with the agent; the file equals the replayed one.
        const QString socket = dir.filePath(QStringLiteral("a.sock"));
        auto agent = startAgent(sample("llm_bs16.pickle"), socket, QStringLiteral("0"));
        const QString out = dir.filePath(QStringLiteral("attach.pickle"));
        QProcess rec;
        rec.setProcessChannelMode(QProcess::ForwardedChannels);
        rec.start(memscope, {QStringLiteral("record"), QStringLiteral("--attach"), socket, QStringLiteral("-o"), out});
        QVERIFY(rec.waitForFinished(120000));
        QCOMPARE(rec.exitCode(), 0);
        auto original = readSnapshotFile(sample("llm_bs16.pickle").toStdString());
        QCOMPARE(QString::fromStdString(test::compareSnapshots(*original, *readSnapshotFile(out.toStdString()))), QString());
        QVERIFY(agent->waitForFinished(30000));

        // -- COMMAND: launched under the agent through the environment switch.
        const QString out2 = dir.filePath(QStringLiteral("launch.pickle"));
        QProcess launch;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("MEMSCOPE_AGENT_PATH"), QStringLiteral(MEMSCOPE_AGENT_DIR));
        env.insert(QStringLiteral("MEMSCOPE_AGENT_REPLAY"), sample("oom.pickle"));
        env.insert(QStringLiteral("MEMSCOPE_AGENT_SPEED"), QStringLiteral("0"));
        launch.setProcessEnvironment(env);
        launch.setProcessChannelMode(QProcess::ForwardedChannels);
        launch.start(memscope, {QStringLiteral("record"), QStringLiteral("-o"), out2, QStringLiteral("--"), m_python,
                                QStringLiteral("-c"), QStringLiteral("import time; time.sleep(1)")});
        QVERIFY(launch.waitForFinished(120000));
        QCOMPARE(launch.exitCode(), 0);
        QCOMPARE(QString::fromStdString(test::compareSnapshots(*readSnapshotFile(sample("oom.pickle").toStdString()),
                                                               *readSnapshotFile(out2.toStdString()))),
                 QString());

        // --light reaches the launched program as MEMSCOPE_AGENT_LIGHT=1 (the agent reads it),
        // in place of a value the environment had.
        const QString out3 = dir.filePath(QStringLiteral("light.pickle"));
        const QString seen = dir.filePath(QStringLiteral("light.txt"));
        env.insert(QStringLiteral("MEMSCOPE_AGENT_LIGHT"), QStringLiteral("0"));
        launch.setProcessEnvironment(env);
        launch.start(memscope, {QStringLiteral("record"), QStringLiteral("-o"), out3, QStringLiteral("--light"),
                                QStringLiteral("--"), m_python, QStringLiteral("-c"),
                                QStringLiteral("import os, time; open(%1, 'w').write(os.environ.get('MEMSCOPE_AGENT_LIGHT', ''));"
                                               " time.sleep(1)")
                                    .arg(QStringLiteral("'") + seen + QStringLiteral("'"))});
        QVERIFY(launch.waitForFinished(120000));
        QCOMPARE(launch.exitCode(), 0);
        QFile light(seen);
        QVERIFY(light.open(QIODevice::ReadOnly));
        QCOMPARE(light.readAll(), QByteArray("1"));
        QVERIFY(QFileInfo::exists(out3));

        // --markers likewise as MEMSCOPE_AGENT_MARKERS=1, and it clears a light mode the
        // environment asked for (the agent would take the light one).
        const QString out4 = dir.filePath(QStringLiteral("markers.pickle"));
        const QString seen4 = dir.filePath(QStringLiteral("markers.txt"));
        env.insert(QStringLiteral("MEMSCOPE_AGENT_LIGHT"), QStringLiteral("1"));
        env.insert(QStringLiteral("MEMSCOPE_AGENT_MARKERS"), QStringLiteral("0"));
        launch.setProcessEnvironment(env);
        launch.start(memscope, {QStringLiteral("record"), QStringLiteral("-o"), out4, QStringLiteral("--markers"),
                                QStringLiteral("--"), m_python, QStringLiteral("-c"),
                                QStringLiteral("import os, time; open(%1, 'w').write(os.environ.get('MEMSCOPE_AGENT_MARKERS', '')"
                                               " + '/' + os.environ.get('MEMSCOPE_AGENT_LIGHT', '')); time.sleep(1)")
                                    .arg(QStringLiteral("'") + seen4 + QStringLiteral("'"))});
        QVERIFY(launch.waitForFinished(120000));
        QCOMPARE(launch.exitCode(), 0);
        QFile markers(seen4);
        QVERIFY(markers.open(QIODevice::ReadOnly));
        QCOMPARE(markers.readAll(), QByteArray("1/"));
        QVERIFY(QFileInfo::exists(out4));

        // --duration and Ctrl-C: the file is written with what arrived.
        for (const bool interrupt : {false, true}) {
            const QString s = dir.filePath(interrupt ? QStringLiteral("i.sock") : QStringLiteral("d.sock"));
            auto slow = startAgent(sample("many_small.pickle"), s, QStringLiteral("0.2"));
            const QString o = dir.filePath(interrupt ? QStringLiteral("int.pickle") : QStringLiteral("dur.pickle"));
            QProcess r;
            r.setProcessChannelMode(QProcess::ForwardedChannels);
            QStringList args{QStringLiteral("record"), QStringLiteral("--attach"), s, QStringLiteral("-o"), o};
            if (!interrupt)
                args << QStringLiteral("--duration") << QStringLiteral("1.5");
            r.start(memscope, args);
            QVERIFY(r.waitForStarted());
            if (interrupt) {
                QThread::msleep(1500);
                ::kill(static_cast<pid_t>(r.processId()), SIGINT);
            }
            QVERIFY(r.waitForFinished(60000));
            QCOMPARE(r.exitCode(), 0);
            const size_t n = readSnapshotFile(o.toStdString())->devices[0].events.count();
            QVERIFY2(n > 0 && n < 93702, qPrintable(QString::number(n)));
            slow->kill();
            slow->waitForFinished();
        }
    }

    // Issue 18, train on a GPU server and look on the desktop: the agent listens on its
    // loopback over TCP with a token, a forwarded port brings it elsewhere (socat here, as
    // `ssh -L` would), and `memscope record --attach HOST:PORT --token T` records through
    // the forward, event for event; a wrong token is refused with a message and no file.
    void remoteRecordThroughForward()
    {
        const QString memscope = QStringLiteral(MEMSCOPE_APP);
        QVERIFY2(QFileInfo::exists(memscope), "the memscope binary is built before the tests");
        const QString socat = QStandardPaths::findExecutable(QStringLiteral("socat"));
        QVERIFY2(!socat.isEmpty(), "socat forwards a port (scripts/install-deps.sh installs it)");
        QTemporaryDir dir;
        const QString file = sample("llm_bs16.pickle");
        auto agent = startAgent(file, dir.filePath(QStringLiteral("a.sock")), QStringLiteral("0"),
                                {QStringLiteral("--tcp"), QStringLiteral("127.0.0.1:0")});
        QVERIFY(agent);
        // "memscope-agent: tcp 127.0.0.1:PORT token T", on stdout before it waits for a client.
        QString line;
        for (int i = 0; i < 100 && !line.contains(QLatin1String(" token ")); ++i) {
            agent->waitForReadyRead(100);
            line += QString::fromUtf8(agent->readAllStandardOutput());
        }
        const QStringList words = line.trimmed().split(QLatin1Char(' '));
        QVERIFY2(words.size() == 5 && words[1] == QLatin1String("tcp") && words[3] == QLatin1String("token"), qPrintable(line));
        const QString agentPort = words[2].section(QLatin1Char(':'), -1);
        const QString token = words[4];

        const int forwardPort = freeLoopbackPort();
        QVERIFY(forwardPort > 0);
        QProcess forward;
        forward.setProcessChannelMode(QProcess::ForwardedChannels);
        forward.start(socat, {QStringLiteral("TCP-LISTEN:%1,bind=127.0.0.1,reuseaddr,fork").arg(forwardPort),
                              QStringLiteral("TCP:127.0.0.1:%1").arg(agentPort)});
        QVERIFY(forward.waitForStarted());
        QVERIFY(waitListening(forwardPort));
        const QString address = QStringLiteral("127.0.0.1:%1").arg(forwardPort);

        const QString refused = dir.filePath(QStringLiteral("refused.pickle"));
        QProcess bad;
        bad.start(memscope, {QStringLiteral("record"), QStringLiteral("--attach"), address, QStringLiteral("--token"),
                             QStringLiteral("0123456789abcdef"), QStringLiteral("-o"), refused});
        QVERIFY(bad.waitForFinished(60000));
        const QString badErr = QString::fromUtf8(bad.readAllStandardError());
        QCOMPARE(bad.exitCode(), 1);
        QVERIFY2(badErr.contains(QStringLiteral("memscope record: %1: the agent refused the connection: wrong or missing "
                                                "token (check --token")
                                     .arg(address)),
                 qPrintable(badErr));
        QVERIFY(!QFileInfo::exists(refused));
        QVERIFY(!QFileInfo::exists(refused + QStringLiteral(".mscp")));

        const QString out = dir.filePath(QStringLiteral("remote.pickle"));
        QProcess rec;
        rec.setProcessChannelMode(QProcess::ForwardedChannels);
        rec.start(memscope, {QStringLiteral("record"), QStringLiteral("--attach"), address, QStringLiteral("--token"), token,
                             QStringLiteral("-o"), out});
        QVERIFY(rec.waitForFinished(120000));
        QCOMPARE(rec.exitCode(), 0);
        QCOMPARE(QString::fromStdString(
                     test::compareSnapshots(*readSnapshotFile(file.toStdString()), *readSnapshotFile(out.toStdString()))),
                 QString());
        QVERIFY(agent->state() == QProcess::NotRunning || agent->waitForFinished(30000));
        QCOMPARE(agent->exitCode(), 0);
        forward.terminate();
        forward.waitForFinished();
    }

private:
    static int freeLoopbackPort()
    {
        const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof a;
        int port = -1;
        if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
            ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
            port = ntohs(a.sin_port);
        ::close(fd);
        return port;
    }

    // True once something accepts connections on the loopback port (the probe is closed at
    // once; the agent behind the forward refuses it and goes on waiting).
    static bool waitListening(int port)
    {
        for (int i = 0; i < 100; ++i) {
            const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
            sockaddr_in a{};
            a.sin_family = AF_INET;
            a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
            a.sin_port = htons(static_cast<uint16_t>(port));
            const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
            ::close(fd);
            if (ok)
                return true;
            QThread::msleep(50);
        }
        return false;
    }
};

QTEST_GUILESS_MAIN(TestLiveClient)
#include "tst_live_client.moc"
