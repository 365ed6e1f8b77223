#include "support/snapshot_compare.h"

#include "analysis/analysis.h"
#include "live/live_client.h"
#include "snapshot/snapshot_reader.h"
#include "ui/live/attach_dialog.h"
#include "ui/live/live_overview.h"
#include "ui/live/live_session.h"
#include "ui/live/live_tab.h"
#include "ui/live/memory_gap_bar.h"
#include "ui/main_window.h"
#include "ui/pages/snapshot_tab.h"
#include "ui/plot/category_timeline_view.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMainWindow>
#include <QMenuBar>
#include <QProcess>
#include <QScreen>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>

#include <algorithm>
#include <csignal>

using namespace memscope;

// The live window attached to real `python3 -m memscope_agent --replay` agents.
// MEMSCOPE_LIVE_SCREENSHOT=PATH saves a screenshot of the window mid-stream (run under
// xvfb-run with QT_QPA_PLATFORM=xcb for a real window).
// Events the tab's timeline shows (0 before its first document).
int64_t shownEvents(const LiveTab& w) { return w.timeline() && w.timeline()->model() ? w.timeline()->model()->eventCount() : 0; }

class TestLiveTab : public QObject {
    Q_OBJECT
    QString m_python;

    std::unique_ptr<QProcess> startAgent(const QString& sample, const QString& socket, const QString& speed,
                                         const QString& maxGap = QStringLiteral("0.3"))
    {
        auto p = std::make_unique<QProcess>();
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("PYTHONPATH"), QStringLiteral(MEMSCOPE_AGENT_DIR));
        env.insert(QStringLiteral("MEMSCOPE_AGENT_QUIET"), QStringLiteral("1"));
        p->setProcessEnvironment(env);
        p->start(m_python, {QStringLiteral("-m"), QStringLiteral("memscope_agent"), QStringLiteral("--replay"),
                            QStringLiteral(MEMSCOPE_SAMPLES_DIR "/") + sample, QStringLiteral("--speed"), speed,
                            QStringLiteral("--max-gap"), maxGap, QStringLiteral("--socket"), socket, QStringLiteral("--linger"),
                            QStringLiteral("3")});
        return p->waitForStarted() ? std::move(p) : nullptr;
    }
    // many_small paced to stream for about a minute with no pause over half a second: at speed
    // 0.5 and gaps of 0.3 s it streamed for 2.2 s, and a slow CI machine detached after it ended.
    std::unique_ptr<QProcess> startStreamingAgent(const QString& socket)
    {
        return startAgent(QStringLiteral("many_small.pickle"), socket, QStringLiteral("0.01"), QStringLiteral("0.005"));
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
        QVERIFY2(!m_python.isEmpty(), "python3 runs the agent (scripts/install-deps.sh installs it)");
        QStandardPaths::setTestModeEnabled(true);
        qputenv("MEMSCOPE_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1");
    }

    void timelineGrowsThenStaysAndSaves()
    {
        QTemporaryDir dir;
        const QString socket = dir.filePath(QStringLiteral("a.sock"));
        auto agent = startAgent(QStringLiteral("many_small.pickle"), socket, QStringLiteral("1"));
        QVERIFY(agent);
        auto* w = new LiveTab;
        QElapsedTimer analysis;
        w->setAskBeforeClosing(false);
        w->attach(endpoint(socket));
        w->show();
        QElapsedTimer clock;
        clock.start();
        std::vector<int64_t> counts; // the incremental view's events, at each distinct size
        std::vector<int64_t> analysed; // the full analyses' (the timeline below)
        bool shot = false;
        while (w->session()->state() == LiveState::Streaming && clock.elapsed() < 60000) {
            QTest::qWait(50);
            if (const auto v = w->session()->view(); v && v->events > 0 && (counts.empty() || counts.back() != v->events))
                counts.push_back(v->events);
            if (const int64_t n = shownEvents(*w); n > 0 && (analysed.empty() || analysed.back() != n))
                analysed.push_back(n);
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
        qInfo("live view: %d views and %d full analyses in %.2f s of streaming (%.1f views a second), %zu distinct sizes",
              w->session()->viewsDelivered(), w->session()->documentsDelivered(), seconds,
              w->session()->viewsDelivered() / seconds, counts.size());
        QVERIFY2(counts.size() >= 3, "the live view should grow while events arrive");
        QVERIFY2(!analysed.empty(), "a full analysis should reach the tab while events arrive");
        QVERIFY(std::is_sorted(counts.begin(), counts.end()));
        // The overview follows every incremental update, the categories the slower full analyses.
        QVERIFY(w->session()->viewsDelivered() > w->session()->documentsDelivered());
        QVERIFY(w->overview()->columnsDrawn() > 0);
        QCOMPARE(liveStateName(w->session()->state()), std::string_view("ended"));
        // The data stays after the process exits, and the view catches up with all of it.
        QTRY_COMPARE_WITH_TIMEOUT(shownEvents(*w), int64_t(93702), 30000);
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

    // Regression (CI, pauseFreezesDetachKeeps under ASan): events received but not yet taken
    // by an update were left out of a save, so a detach then a save kept less than arrived.
    // Here no event loop runs between the stream's end and the save, so no update can have
    // taken them: the save must take them itself.
    void saveHoldsWhatArrivedBeforeAnyUpdate()
    {
        QTemporaryDir dir;
        const QString socket = dir.filePath(QStringLiteral("a.sock"));
        auto agent = startAgent(QStringLiteral("llm_bs16.pickle"), socket, QStringLiteral("0"));
        QVERIFY(agent);
        LiveSession session;
        session.attach(endpoint(socket));
        QElapsedTimer clock;
        clock.start();
        while (session.state() == LiveState::Streaming && clock.elapsed() < 60000)
            QThread::msleep(20); // the reader thread receives; this thread handles no event
        QCOMPARE(liveStateName(session.state()), std::string_view("ended"));
        const QString saved = dir.filePath(QStringLiteral("saved.pickle"));
        QString error;
        QVERIFY2(session.save(saved, &error), qPrintable(error));
        auto original = readSnapshotFile(MEMSCOPE_SAMPLES_DIR "/llm_bs16.pickle");
        QCOMPARE(QString::fromStdString(test::compareSnapshots(*original, *readSnapshotFile(saved.toStdString()))), QString());
        // And a detach takes them into the model the window reads.
        session.detach();
        QCOMPARE(session.snapshot()->devices[0].events.count(), original->devices[0].events.count());
        QVERIFY(agent->state() == QProcess::NotRunning || agent->waitForFinished(30000));
    }

    void pauseFreezesDetachKeeps()
    {
        QTemporaryDir dir;
        const QString socket = dir.filePath(QStringLiteral("a.sock"));
        auto agent = startStreamingAgent(socket);
        QVERIFY(agent);
        LiveTab w;
        w.setAskBeforeClosing(false);
        w.attach(endpoint(socket));
        QTRY_VERIFY_WITH_TIMEOUT(w.session()->documentsDelivered() > 0, 60000);
        w.setPaused(true);
        QTest::qWait(300); // an analysis started before the pause may still land
        const int frozen = w.session()->documentsDelivered();
        const uint64_t before = w.session()->stats().events;
        QTest::qWait(800);
        QCOMPARE(w.session()->documentsDelivered(), frozen);
        QVERIFY(w.session()->stats().events > before); // receiving goes on
        w.setPaused(false);
        QTRY_VERIFY_WITH_TIMEOUT(w.session()->documentsDelivered() > frozen, 60000);
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

    // Attaching from the main window opens a tab like any other: the live recording goes
    // through the same Document path as a file, and once the stream ends its tab holds what
    // the file's analysis holds (categories, phases, findings) and the window's actions
    // (export, the detail views) work on it. MEMSCOPE_LIVE_STATS logs each update.
    void aLiveTabIsATabOfTheMainWindow()
    {
        QTemporaryDir dir;
        const QString socket = dir.filePath(QStringLiteral("a.sock"));
        const QString stats = dir.filePath(QStringLiteral("stats.jsonl"));
        qputenv("MEMSCOPE_LIVE_STATS", stats.toLocal8Bit());
        auto agent = startAgent(QStringLiteral("llm_bs16.pickle"), socket, QStringLiteral("0"));
        QVERIFY(agent);
        MainWindow main;
        LiveTab* live = attachLive(&main, socket, {}, main.runner());
        qunsetenv("MEMSCOPE_LIVE_STATS");
        QVERIFY(live);
        live->setAskBeforeClosing(false);
        QCOMPARE(main.tabCount(), 1);
        QCOMPARE(main.liveTab(0), live);
        const auto file = analyze(AnalysisSource::file(MEMSCOPE_SAMPLES_DIR "/llm_bs16.pickle"));
        const int64_t all = static_cast<int64_t>(file->snapshot->devices[0].events.count());
        QTRY_VERIFY_WITH_TIMEOUT(live->session()->state() != LiveState::Streaming, 60000);
        QTRY_VERIFY_WITH_TIMEOUT(main.tab(0) && shownEvents(*live) == all && main.tab(0)->document().diagnosed(), 60000);
        SnapshotTab* t = main.tab(0);
        // issue 29: the window works at 1000x700 with a live tab too (its content scrolls)
        main.resize(1000, 700);
        main.show();
        QCoreApplication::processEvents();
        QVERIFY2(main.minimumSizeHint().width() <= 1000 && main.minimumSizeHint().height() <= 700,
                 qPrintable(QStringLiteral("%1x%2").arg(main.minimumSizeHint().width()).arg(main.minimumSizeHint().height())));
        QCOMPARE(main.size(), QSize(1000, 700));
        const Document& d = t->document();
        QVERIFY(d.attributed());
        const DeviceReplay& fr = file->replay->devices[0];
        QCOMPARE(d.devices[0].replay->peakRequested.bytes, fr.peakRequested.bytes);
        QCOMPARE(d.attribution()->devices[0].iterations.size(), file->attribution->devices[0].iterations.size());
        for (Category c : kAllCategories)
            QCOMPARE(d.devices[0].categoryBytes(c, fr.peakRequested.event.value),
                     file->attribution->devices[0]
                         .categoryBytes[static_cast<size_t>(c)][static_cast<size_t>(fr.peakRequested.event.value)]);
        QCOMPARE(d.diagnosis()->items.size(), file->diagnosis->items.size());
        // The window's export works on the live tab.
        QString message;
        QVERIFY2(main.exportReport(dir.filePath(QStringLiteral("report")), &message), qPrintable(message));
        QVERIFY(QFileInfo::exists(dir.filePath(QStringLiteral("report/report.json"))));
        QFile f(stats);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QList<QByteArray> lines = f.readAll().split('\n');
        QVERIFY(lines.size() >= 2);
        const QJsonObject first = QJsonDocument::fromJson(lines.front()).object();
        for (const char* key : {"t_s", "events", "update_ms", "rss_bytes", "dropped", "lag_events"})
            QVERIFY2(first.contains(QLatin1String(key)), key);
        QVERIFY(first.value(QStringLiteral("events")).toDouble() > 0);
        agent->kill();
        agent->waitForFinished();
    }

    // An update that fails is shown in the tab, and the view keeps the document before it.
    void aFailedUpdateIsShown()
    {
        QTemporaryDir dir;
        const QString socket = dir.filePath(QStringLiteral("a.sock"));
        auto agent = startStreamingAgent(socket);
        QVERIFY(agent);
        LiveTab w;
        w.setAskBeforeClosing(false);
        w.attach(endpoint(socket));
        QTRY_VERIFY_WITH_TIMEOUT(w.session()->documentsDelivered() > 0, 60000);
        const int delivered = w.session()->documentsDelivered();
        QSignalSpy failed(w.session(), &LiveSession::updateFailed);
        w.session()->setDocumentMaker([](std::shared_ptr<const Analysis>) -> std::shared_ptr<const Document> {
            throw std::runtime_error("the analysis ran out of disk");
        });
        QVERIFY(failed.wait(30000));
        QCOMPARE(failed.at(0).at(0).toString(), QStringLiteral("live update: the analysis ran out of disk"));
        QTRY_VERIFY_WITH_TIMEOUT(
            w.statusText().contains(QLatin1String("update failed: live update: the analysis ran out of disk")), 5000);
        QCOMPARE(w.session()->documentsDelivered(), delivered);
        QVERIFY(shownEvents(w) > 0);
        w.session()->setDocumentMaker({}); // the next update succeeds and clears the message
        QTRY_VERIFY_WITH_TIMEOUT(w.session()->documentsDelivered() > delivered, 30000);
        QTRY_VERIFY_WITH_TIMEOUT(!w.statusText().contains(QLatin1String("update failed")), 5000);
        agent->kill();
        agent->waitForFinished();
    }

    void killedAgentKeepsTheWindowWorking()
    {
        QTemporaryDir dir;
        const QString socket = dir.filePath(QStringLiteral("a.sock"));
        auto agent = startStreamingAgent(socket);
        QVERIFY(agent);
        LiveTab w;
        w.setAskBeforeClosing(false);
        w.attach(endpoint(socket));
        QTRY_VERIFY_WITH_TIMEOUT(w.session()->documentsDelivered() > 0, 60000);
        ::kill(static_cast<pid_t>(agent->processId()), SIGKILL);
        QTRY_COMPARE_WITH_TIMEOUT(liveStateName(w.session()->state()), std::string_view("lost"), 30000);
        // The window shows the client's state at its next poll (40 ms), not at once.
        QTRY_VERIFY_WITH_TIMEOUT(w.statusText().contains(QLatin1String("lost")), 5000);
        QVERIFY(w.timeline()->model()->eventCount() > 0);
        // The recovery file holds what arrived and opens as a recovered recording.
        const QString recovery = w.session()->recoveryPath();
        QVERIFY(QFileInfo::exists(recovery));
        LiveTab again;
        again.setAskBeforeClosing(false);
        again.showRecovered(recovery);
        QTRY_VERIFY_WITH_TIMEOUT(again.timeline() && again.timeline()->model() != nullptr, 30000);
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
        // File > Attach is added to a menu, before the action asked.
        QMainWindow main;
        QMenu* file = main.menuBar()->addMenu(QStringLiteral("&File"));
        QAction* quit = file->addAction(QStringLiteral("Quit"));
        QAction* attach = addAttachAction(&main, file, quit);
        QVERIFY(main.findChild<QAction*>(QStringLiteral("actionAttach")) == attach);
        QCOMPARE(file->actions().indexOf(attach), 0);
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
        LiveTab* w = attachLive(nullptr, words[2], words[4]);
        QVERIFY(w);
        w->setAskBeforeClosing(false);
        QTRY_COMPARE_WITH_TIMEOUT(liveStateName(w->session()->state()), std::string_view("ended"), 60000);
        // The model takes what arrived at the next update; a detach takes it now (on a slow CI
        // machine the comparison ran before any update: "device count 1 vs 0").
        w->session()->detach();
        const auto original = readSnapshotFile(MEMSCOPE_SAMPLES_DIR "/oom.pickle");
        QCOMPARE(QString::fromStdString(test::compareSnapshots(*original, *w->session()->snapshot())), QString());
        delete w;
        QVERIFY(agent.state() == QProcess::NotRunning || agent.waitForFinished(30000));
        QCOMPARE(agent.exitCode(), 0);
    }
};

QTEST_MAIN(TestLiveTab)
#include "tst_live_tab.moc"
