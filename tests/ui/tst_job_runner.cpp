// The JobRunner (ui/runner): the one way the window runs background work. Each job ends in
// exactly one of finished / failed / cancelled on the GUI thread, posts arrive in order and
// before the end, an exception's message reaches the job or the runner's failed() signal,
// and nothing reaches a receiver that is gone.
#include "common/load_error.h"
#include "ui/runner/job_runner.h"

#include <QSignalSpy>
#include <QThread>
#include <QtTest>

#include <atomic>
#include <stdexcept>

using namespace memscope;

class TstJobRunner : public QObject {
    Q_OBJECT

private slots:
    void endsOnceWithItsOutcome_data()
    {
        QTest::addColumn<QString>("outcome");
        QTest::addColumn<QString>("message");
        QTest::newRow("finished") << "finished"
                                  << "";
        QTest::newRow("std::exception") << "throw"
                                        << "job: boom";
        QTest::newRow("LoadError keeps its own line") << "loaderror"
                                                      << "f.pickle: byte 7: refused pickle opcode GLOBAL (0x63): x";
        QTest::newRow("bad_alloc") << "badalloc"
                                   << "job: not enough memory";
        QTest::newRow("LoadCancelled is a cancel") << "cancelled"
                                                   << "";
    }
    void endsOnceWithItsOutcome()
    {
        QFETCH(QString, outcome);
        QFETCH(QString, message);
        JobRunner runner;
        QSignalSpy ended(&runner, &JobRunner::ended);
        QSignalSpy idle(&runner, &JobRunner::idle);
        QStringList calls;
        const QThread* gui = QThread::currentThread();
        bool onGuiThread = true;
        JobCallbacks cb;
        cb.finished = [&] {
            calls << "finished";
            onGuiThread &= QThread::currentThread() == gui;
        };
        cb.failed = [&](const QString& m) {
            calls << "failed:" + m;
            onGuiThread &= QThread::currentThread() == gui;
        };
        cb.cancelled = [&] {
            calls << "cancelled";
            onGuiThread &= QThread::currentThread() == gui;
        };
        runner.start(
            QStringLiteral("job"),
            [outcome](JobContext&) {
            if (outcome == "throw")
                throw std::runtime_error("boom");
            if (outcome == "loaderror")
                throw LoadError("f.pickle", 7, "", "refused pickle opcode GLOBAL (0x63): x");
            if (outcome == "badalloc")
                throw std::bad_alloc();
            if (outcome == "cancelled")
                throw LoadCancelled();
            },
            cb);
        QVERIFY(ended.wait(10000));
        QCOMPARE(idle.count(), 1);
        QVERIFY(onGuiThread);
        const QString expected = outcome == "finished"    ? QStringLiteral("finished")
                                 : outcome == "cancelled" ? QStringLiteral("cancelled")
                                                          : QStringLiteral("failed:") + message;
        QCOMPARE(calls, QStringList{expected});
        QCOMPARE(runner.runningCount(), 0);
    }

    void postsArriveInOrderBeforeTheEnd()
    {
        JobRunner runner;
        QStringList seen;
        QList<double> fractions;
        JobCallbacks cb;
        cb.progress = [&](double f, const QString& stage) {
            fractions << f;
            QCOMPARE(stage, QStringLiteral("stage"));
        };
        cb.finished = [&] { seen << "end"; };
        QSignalSpy ended(&runner, &JobRunner::ended);
        runner.start(
            QStringLiteral("posts"),
            [&seen](JobContext& job) {
            for (int i = 0; i < 50; ++i) {
                job.post([&seen, i] { seen << QString::number(i); });
                job.progress(i / 49.0, QStringLiteral("stage"));
                job.progress(i / 49.0, QStringLiteral("stage")); // the same percent: not repeated
            }
            },
            cb);
        QVERIFY(ended.wait(10000));
        QCOMPARE(seen.size(), 51);
        for (int i = 0; i < 50; ++i)
            QCOMPARE(seen[i], QString::number(i));
        QCOMPARE(seen.back(), QStringLiteral("end"));
        QCOMPARE(fractions.size(), 50);
        QCOMPARE(fractions.back(), 1.0);
    }

    void cancelStopsAndSaysSo()
    {
        JobRunner runner;
        std::atomic<bool> sawCancel{false};
        int posted = 0;
        QStringList calls;
        JobCallbacks cb;
        cb.finished = [&] { calls << "finished"; };
        cb.cancelled = [&] { calls << "cancelled"; };
        QSignalSpy ended(&runner, &JobRunner::ended);
        std::atomic<bool> started{false};
        const auto id = runner.start(
            QStringLiteral("long"),
            [&](JobContext& job) {
            started = true;
            while (!job.cancelled())
                QThread::msleep(1);
            sawCancel = true;
            job.post([&posted] { ++posted; }); // after the cancel: dropped
            },
            cb);
        QTRY_VERIFY(started.load());
        QVERIFY(runner.isRunning(id));
        runner.cancel(id);
        QVERIFY(ended.wait(10000));
        QVERIFY(sawCancel.load());
        QCOMPARE(calls, QStringList{"cancelled"});
        QCOMPARE(posted, 0);
        QVERIFY(!runner.isRunning(id));
    }

    void aGoneReceiverGetsNothingAndErrorsStillSurface()
    {
        JobRunner runner;
        QSignalSpy failed(&runner, &JobRunner::failed);
        QSignalSpy ended(&runner, &JobRunner::ended);
        int reached = 0;
        auto* receiver = new QObject;
        std::atomic<bool> release{false};
        JobCallbacks cb;
        cb.receiver = receiver;
        cb.failed = [&](const QString&) { ++reached; };
        runner.start(
            QStringLiteral("tab's job"),
            [&](JobContext& job) {
            while (!release)
                QThread::msleep(1);
            job.post([&reached] { ++reached; });
            throw std::runtime_error("disk full");
            },
            cb);
        delete receiver; // the tab closed
        release = true;
        QVERIFY(ended.wait(10000));
        QCOMPARE(reached, 0);
        QCOMPARE(failed.count(), 1); // not swallowed: the window's banner shows it
        QCOMPARE(failed.at(0).at(1).toString(), QStringLiteral("tab's job: disk full"));
    }

    void anErrorWithNoHandlerGoesToTheRunner()
    {
        JobRunner runner;
        QSignalSpy failed(&runner, &JobRunner::failed);
        runner.start(QStringLiteral("compare"), [](JobContext&) { throw std::runtime_error("a.pickle: not a snapshot"); });
        QVERIFY(failed.wait(10000));
        QCOMPARE(failed.at(0).at(0).toString(), QStringLiteral("compare"));
        QCOMPARE(failed.at(0).at(1).toString(), QStringLiteral("compare: a.pickle: not a snapshot"));
    }

    void destroyingTheRunnerCancelsAndWaits()
    {
        std::atomic<bool> finishedWork{false};
        std::atomic<bool> started{false};
        {
            JobRunner runner;
            runner.start(QStringLiteral("x"), [&](JobContext& job) {
                started = true;
                while (!job.cancelled())
                    QThread::msleep(1);
                finishedWork = true;
            });
            QTRY_VERIFY(started.load());
        }
        QVERIFY(finishedWork.load()); // the destructor waited for it
    }
};

QTEST_GUILESS_MAIN(TstJobRunner)
#include "tst_job_runner.moc"
