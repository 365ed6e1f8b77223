#include "support/snapshot_compare.h"

#include "ui/live/attach_dialog.h"
#include "ui/plot/category_timeline_view.h"
#include "live/live_client.h"
#include "ui/live/live_session.h"
#include "ui/live/live_window.h"
#include "ui/live/memory_gap_bar.h"
#include "snapshot/snapshot_reader.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QMainWindow>
#include <QMenuBar>
#include <QProcess>
#include <QScreen>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <csignal>

using namespace memscope;

// The live window attached to real `python3 -m memscope_agent --replay` agents.
// MEMSCOPE_LIVE_SCREENSHOT=PATH saves a screenshot of the window mid-stream (run under
// xvfb-run with QT_QPA_PLATFORM=xcb for a real window).
class TestLiveWindow : public QObject {
    Q_OBJECT
    QString m_python;

    std::unique_ptr<QProcess> startAgent(const QString& sample, const QString& socket, const QString& speed)
    {
        auto p = std::make_unique<QProcess>();
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("PYTHONPATH"), QStringLiteral(MEMSCOPE_AGENT_DIR));
        env.insert(QStringLiteral("MEMSCOPE_AGENT_QUIET"), QStringLiteral("1"));
        p->setProcessEnvironment(env);
        p->start(m_python, {QStringLiteral("-m"), QStringLiteral("memscope_agent"), QStringLiteral("--replay"),
                            QStringLiteral(MEMSCOPE_SAMPLES_DIR "/") + sample, QStringLiteral("--speed"), speed,
                            QStringLiteral("--max-gap"), QStringLiteral("0.3"), QStringLiteral("--socket"), socket,
                            QStringLiteral("--linger"), QStringLiteral("3")});
        return p->waitForStarted() ? std::move(p) : nullptr;
    }
    static LiveEndpoint endpoint(const QString& socket)
    {
        LiveEndpoint e;
        e.unixPath = socket.toStdString();
        return e;
    }

private slots:
    void initTestCase()
    {
        m_python = QStandardPaths::findExecutable(QStringLiteral("python3"));
        if (m_python.isEmpty())
            QSKIP("python3 is needed to run the agent");
        QStandardPaths::setTestModeEnabled(true);
        qputenv("MEMSCOPE_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1");
    }

    void timelineGrowsThenStaysAndSaves()
    {
        QTemporaryDir dir;
        const QString socket = dir.filePath(QStringLiteral("a.sock"));
        auto agent = startAgent(QStringLiteral("many_small.pickle"), socket, QStringLiteral("1"));
        QVERIFY(agent);
        auto* w = new LiveWindow;
        QElapsedTimer analysis;
        w->setAskBeforeClosing(false);
        w->attach(endpoint(socket));
        w->show();
        QElapsedTimer clock;
        clock.start();
        std::vector<int64_t> counts;
        bool shot = false;
        while (w->session()->state() == LiveState::Streaming && clock.elapsed() < 60000) {
            QTest::qWait(50);
            if (const auto* m = w->timeline()->model(); m && (counts.empty() || counts.back() != m->eventCount()))
                counts.push_back(m->eventCount());
            const QString shotPath = qEnvironmentVariable("MEMSCOPE_LIVE_SCREENSHOT");
            if (!shot && !shotPath.isEmpty() && !counts.empty() && counts.back() > 50000) {
                QTest::qWait(100);
                QPixmap pix = w->screen()->grabWindow(w->winId());
                if (pix.isNull() || pix.width() < 100)
                    pix = w->grab();
                QVERIFY(pix.save(shotPath));
                shot = true;
            }
        }
        const double seconds = clock.elapsed() / 1000.0;
        if (const auto doc = w->session()->document()) {
            analysis.start();
            analyzeSnapshot(w->session()->snapshot(), "timing");
            qInfo("analysing the whole recording (%lld events) takes %lld ms here",
                  static_cast<long long>(doc->devices[0].eventCount()), static_cast<long long>(analysis.elapsed()));
        }
        qInfo("live view: %d updates in %.2f s of streaming (%.1f per second), %zu distinct sizes",
              w->session()->documentsDelivered(), seconds, w->session()->documentsDelivered() / seconds, counts.size());
        QVERIFY2(counts.size() >= 3, "the timeline should grow while events arrive");
        QCOMPARE(liveStateName(w->session()->state()), std::string_view("ended"));
        // The data stays after the process exits, and the view catches up with all of it.
        QTRY_COMPARE_WITH_TIMEOUT(w->timeline()->model() ? w->timeline()->model()->eventCount() : 0, int64_t(93702), 30000);
        QVERIFY(w->statusText().contains(QLatin1String("93,702")));
        QVERIFY(w->statusText().contains(QLatin1String("0 dropped")));
        QVERIFY(w->gapBar()->gapText().isEmpty()); // no NVML here: a note, no numbers
        const QString saved = dir.filePath(QStringLiteral("saved.pickle"));
        QString error;
        QVERIFY2(w->saveTo(saved, &error), qPrintable(error));
        auto original = readSnapshotFile(MEMSCOPE_SAMPLES_DIR "/many_small.pickle");
        QCOMPARE(QString::fromStdString(test::compareSnapshots(*original, *readSnapshotFile(saved.toStdString()))), QString());
        const QString recovery = w->session()->recoveryPath();
        QVERIFY(!QFileInfo::exists(recovery)); // saved after the end: the recovery file is gone
        w->close();
        // waitForFinished() is false for a process that already exited (the QTRY loops above
        // may have seen it go): ask for the state first.
        QVERIFY(agent->state() == QProcess::NotRunning || agent->waitForFinished(30000));
        QCOMPARE(agent->exitStatus(), QProcess::NormalExit);
        QCOMPARE(agent->exitCode(), 0);
    }

    void pauseFreezesDetachKeeps()
    {
        QTemporaryDir dir;
        const QString socket = dir.filePath(QStringLiteral("a.sock"));
        auto agent = startAgent(QStringLiteral("many_small.pickle"), socket, QStringLiteral("0.5"));
        LiveWindow w;
        w.setAskBeforeClosing(false);
        w.attach(endpoint(socket));
        QTRY_VERIFY_WITH_TIMEOUT(w.session()->documentsDelivered() > 0, 30000);
        w.setPaused(true);
        QTest::qWait(300); // an analysis started before the pause may still land
        const int frozen = w.session()->documentsDelivered();
        const uint64_t before = w.session()->stats().events;
        QTest::qWait(800);
        QCOMPARE(w.session()->documentsDelivered(), frozen);
        QVERIFY(w.session()->stats().events > before); // receiving goes on
        w.setPaused(false);
        QTRY_VERIFY_WITH_TIMEOUT(w.session()->documentsDelivered() > frozen, 10000);
        // Zooming stops following; Follow brings the full range back.
        w.timeline()->zoomBy(0.5);
        QVERIFY(!w.following());
        w.setFollowing(true);
        // Detach: the connection closes, the data stays and is saveable.
        w.session()->detach();
        QCOMPARE(liveStateName(w.session()->state()), std::string_view("detached"));
        const size_t n = w.session()->snapshot()->devices[0].events.count();
        QVERIFY(n > 0 && n < 93702);
        QString error;
        const QString saved = dir.filePath(QStringLiteral("partial.pickle"));
        QVERIFY(w.saveTo(saved, &error));
        QCOMPARE(readSnapshotFile(saved.toStdString())->devices[0].events.count(), n);
        agent->kill();
        agent->waitForFinished();
    }

    void killedAgentKeepsTheWindowWorking()
    {
        QTemporaryDir dir;
        const QString socket = dir.filePath(QStringLiteral("a.sock"));
        auto agent = startAgent(QStringLiteral("many_small.pickle"), socket, QStringLiteral("0.5"));
        LiveWindow w;
        w.setAskBeforeClosing(false);
        w.attach(endpoint(socket));
        QTRY_VERIFY_WITH_TIMEOUT(w.session()->documentsDelivered() > 0, 30000);
        ::kill(static_cast<pid_t>(agent->processId()), SIGKILL);
        QTRY_COMPARE_WITH_TIMEOUT(liveStateName(w.session()->state()), std::string_view("lost"), 30000);
        // The window shows the client's state at its next poll (40 ms), not at once.
        QTRY_VERIFY_WITH_TIMEOUT(w.statusText().contains(QLatin1String("lost")), 5000);
        QVERIFY(w.timeline()->model()->eventCount() > 0);
        // The recovery file holds what arrived and opens as a recovered recording.
        const QString recovery = w.session()->recoveryPath();
        QVERIFY(QFileInfo::exists(recovery));
        LiveWindow again;
        again.setAskBeforeClosing(false);
        again.showRecovered(recovery);
        QTRY_VERIFY_WITH_TIMEOUT(again.timeline()->model() != nullptr, 30000);
        QCOMPARE(static_cast<size_t>(again.timeline()->model()->eventCount()),
                 w.session()->snapshot()->devices[0].events.count());
        agent->waitForFinished();
    }

    void attachDialogListsAgentsAndSurvivesWithoutNvml()
    {
        QTemporaryDir tmp;
        qputenv("TMPDIR", tmp.path().toLocal8Bit());
        qputenv("XDG_RUNTIME_DIR", "");
        QProcess agent;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("PYTHONPATH"), QStringLiteral(MEMSCOPE_AGENT_DIR));
        agent.setProcessEnvironment(env);
        agent.start(m_python, {QStringLiteral("-m"), QStringLiteral("memscope_agent"), QStringLiteral("--replay"),
                               QStringLiteral(MEMSCOPE_SAMPLES_DIR "/linear3.pickle")});
        QVERIFY(agent.waitForStarted());
        AttachDialog dialog;
        QTRY_VERIFY_WITH_TIMEOUT((dialog.refresh(), dialog.agentRows() == 1), 30000);
        QCOMPARE(dialog.gpuProcessRows(), 0);
        QVERIFY(dialog.nvmlText().contains(QLatin1String("MEMSCOPE_AGENT=1")));
        // File > Attach is added to a window's File menu.
        QMainWindow main;
        main.menuBar()->addMenu(QStringLiteral("&File"))->addAction(QStringLiteral("Quit"));
        installLiveMenu(&main);
        QVERIFY(main.findChild<QAction*>(QStringLiteral("actionAttach")));
        agent.kill();
        agent.waitForFinished();
        qunsetenv("TMPDIR");
    }

    // Issue 18: `memscope --attach HOST:PORT --token T` (and File > Attach's address and token
    // fields, which parse the same way) watch an agent's TCP listener, as forwarded from a GPU
    // server; the recording equals the replayed file.
    void attachesOverTcpWithItsToken()
    {
        QProcess agent;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("PYTHONPATH"), QStringLiteral(MEMSCOPE_AGENT_DIR));
        env.insert(QStringLiteral("MEMSCOPE_AGENT_QUIET"), QStringLiteral("1"));
        agent.setProcessEnvironment(env);
        QTemporaryDir dir;
        agent.start(m_python, {QStringLiteral("-m"), QStringLiteral("memscope_agent"), QStringLiteral("--replay"),
                               QStringLiteral(MEMSCOPE_SAMPLES_DIR "/oom.pickle"), QStringLiteral("--speed"), QStringLiteral("0"),
                               QStringLiteral("--socket"), dir.filePath(QStringLiteral("a.sock")), QStringLiteral("--tcp"),
                               QStringLiteral("127.0.0.1:0"), QStringLiteral("--linger"), QStringLiteral("3")});
        QVERIFY(agent.waitForStarted());
        QString line; // "memscope-agent: tcp 127.0.0.1:PORT token T"
        for (int i = 0; i < 100 && !line.contains(QLatin1String(" token ")); ++i) {
            agent.waitForReadyRead(100);
            line += QString::fromUtf8(agent.readAllStandardOutput());
        }
        const QStringList words = line.trimmed().split(QLatin1Char(' '));
        QVERIFY2(words.size() == 5, qPrintable(line));
        LiveWindow* w = attachLive(nullptr, words[2], words[4]);
        QVERIFY(w);
        w->setAskBeforeClosing(false);
        QTRY_COMPARE_WITH_TIMEOUT(liveStateName(w->session()->state()), std::string_view("ended"), 60000);
        const auto original = readSnapshotFile(MEMSCOPE_SAMPLES_DIR "/oom.pickle");
        QCOMPARE(QString::fromStdString(test::compareSnapshots(*original, *w->session()->snapshot())), QString());
        delete w;
        QVERIFY(agent.state() == QProcess::NotRunning || agent.waitForFinished(30000));
        QCOMPARE(agent.exitCode(), 0);
    }
};

QTEST_MAIN(TestLiveWindow)
#include "tst_live_window.moc"
