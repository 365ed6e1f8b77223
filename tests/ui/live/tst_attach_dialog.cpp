// File > Attach does its slow work off the GUI thread's back (issue 13): the check of a
// process's Python and the injection run as QProcesses, the dialog keeps processing events
// meanwhile, Cancel stops them, and the temporary start script is gone in every outcome.
// A fake interpreter (MEMSCOPE_INJECT_PYTHON: a shell script that sleeps) stands in for a
// Python 3.14 with sys.remote_exec.
#include "ui/live/attach_dialog.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>

#include <memory>

using namespace memscope;

class TestAttachDialog : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;

    // A stand-in interpreter: sleeps `seconds`, prints True (the check's answer), exits `code`.
    QString fakePython(const QString& name, double seconds, int code)
    {
        const QString path = m_dir.filePath(name);
        QFile f(path);
        if (!f.open(QIODevice::WriteOnly))
            return {};
        f.write(QStringLiteral("#!/bin/sh\nsleep %1\necho True\necho 'no such process' >&2\nexit %2\n")
                    .arg(seconds)
                    .arg(code)
                    .toUtf8());
        f.close();
        f.setPermissions(f.permissions() | QFileDevice::ExeOwner);
        return path;
    }

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        qputenv("TMPDIR", m_dir.path().toLocal8Bit()); // the dialog's script goes here, and the agent listing looks here
        qputenv("XDG_RUNTIME_DIR", "");
    }

    void cleanup() { qunsetenv("MEMSCOPE_INJECT_PYTHON"); }

    // The check answers later; meanwhile the dialog runs its event loop and says what it does.
    void pythonCheckIsAsynchronous()
    {
        qputenv("MEMSCOPE_INJECT_PYTHON", fakePython(QStringLiteral("slow_check"), 0.6, 0).toLocal8Bit());
        AttachDialog dialog;
        const unsigned pid = static_cast<unsigned>(QCoreApplication::applicationPid());
        QElapsedTimer clock;
        clock.start();
        dialog.checkPython(pid);
        QVERIFY(clock.elapsed() < 300); // it returned at once
        QCOMPARE(dialog.pythonCheck(pid), AttachDialog::PythonCheck::Checking);
        int ticks = 0;
        QTimer tick;
        connect(&tick, &QTimer::timeout, this, [&] { ++ticks; });
        tick.start(20);
        QTRY_COMPARE_WITH_TIMEOUT(dialog.pythonCheck(pid), AttachDialog::PythonCheck::RemoteExec, 10000);
        QVERIFY2(ticks >= 10, qPrintable(QString::number(ticks))); // ~30 in 0.6 s: the loop was not blocked
    }

    // An injection whose remote_exec returns goes on to wait for the agent; Cancel ends it and
    // removes the script.
    void injectionRunsWhileTheDialogResponds()
    {
        qputenv("MEMSCOPE_INJECT_PYTHON", fakePython(QStringLiteral("slow_inject"), 0.6, 0).toLocal8Bit());
        AttachDialog dialog;
        const unsigned pid = static_cast<unsigned>(QCoreApplication::applicationPid());
        dialog.injectInto(pid);
        QCOMPARE(dialog.injectState(), AttachDialog::InjectState::Injecting);
        const QString script = dialog.injectionScript();
        QVERIFY(!script.isEmpty());
        QVERIFY(QFileInfo::exists(script));
        QVERIFY(QFile(script).open(QIODevice::ReadOnly));
        int ticks = 0;
        QTimer tick;
        connect(&tick, &QTimer::timeout, this, [&] { ++ticks; });
        tick.start(20);
        QTRY_COMPARE_WITH_TIMEOUT(dialog.injectState(), AttachDialog::InjectState::WaitingForAgent, 10000);
        QVERIFY2(ticks >= 10, qPrintable(QString::number(ticks)));
        QVERIFY(QFileInfo::exists(script)); // the target reads it at its next safe point
        QVERIFY2(dialog.injectStatus().contains(QStringLiteral("Waiting")), qPrintable(dialog.injectStatus()));
        dialog.cancelInjection();
        QCOMPARE(dialog.injectState(), AttachDialog::InjectState::Idle);
        QVERIFY(dialog.injectionScript().isEmpty());
        QVERIFY(!QFileInfo::exists(script));
    }

    // Every other outcome removes the script too: remote_exec failing, Cancel while it runs,
    // the dialog closing while it runs.
    void scriptRemovedInEveryOutcome_data()
    {
        QTest::addColumn<QString>("outcome");
        QTest::newRow("remote_exec fails") << QStringLiteral("fails");
        QTest::newRow("cancelled while injecting") << QStringLiteral("cancel");
        QTest::newRow("dialog closed while injecting") << QStringLiteral("close");
    }
    void scriptRemovedInEveryOutcome()
    {
        QFETCH(QString, outcome);
        const bool fails = outcome == QStringLiteral("fails");
        qputenv("MEMSCOPE_INJECT_PYTHON",
                fakePython(QStringLiteral("inject_") + outcome, fails ? 0.1 : 5, fails ? 3 : 0).toLocal8Bit());
        auto dialog = std::make_unique<AttachDialog>();
        dialog->injectInto(static_cast<unsigned>(QCoreApplication::applicationPid()));
        const QString script = dialog->injectionScript();
        QVERIFY(QFileInfo::exists(script));
        if (fails) {
            QTRY_COMPARE_WITH_TIMEOUT(dialog->injectState(), AttachDialog::InjectState::Failed, 10000);
            QVERIFY2(dialog->injectStatus().contains(QStringLiteral("no such process")), qPrintable(dialog->injectStatus()));
        } else if (outcome == QStringLiteral("cancel")) {
            QTest::qWait(100);
            QCOMPARE(dialog->injectState(), AttachDialog::InjectState::Injecting);
            dialog->cancelInjection();
            QCOMPARE(dialog->injectState(), AttachDialog::InjectState::Idle);
        } else {
            QTest::qWait(100);
            dialog.reset();
        }
        QVERIFY(!QFileInfo::exists(script));
    }
};

QTEST_MAIN(TestAttachDialog)
#include "tst_attach_dialog.moc"
