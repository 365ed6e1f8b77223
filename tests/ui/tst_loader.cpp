#include "ui/loader.h"

#include "query/point_report.h"
#include "replay/replay.h"
#include "snapshot/snapshot_reader.h"

#include <QElapsedTimer>
#include <QProcess>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using namespace memscope;

// The loader runs the core off the GUI thread and reports back on it.
class TestLoader : public QObject {
    Q_OBJECT
private slots:
    // The window can draw a file's curves before its categories and findings exist: the loader
    // hands over a document per stage, in order, each holding exactly that stage's results.
    void curvesBeforeAttribution()
    {
        const QString generator = QStringLiteral(MEMSCOPE_GEN_SNAPSHOT);
        QTemporaryDir dir;
        const QString file = dir.filePath(QStringLiteral("gen_1m.pickle"));
        QProcess gen;
        gen.start(generator, {QStringLiteral("--events"), QStringLiteral("1000000"), QStringLiteral("--out"), file});
        QVERIFY(gen.waitForFinished(300000));
        QCOMPARE(gen.exitCode(), 0);

        Loader loader;
        QStringList order;
        QElapsedTimer clock;
        qint64 curvesAt = -1, attributedAt = -1, loadedAt = -1;
        std::shared_ptr<const Document> curves, attributed, loaded;
        connect(&loader, &Loader::curvesReady, this, [&](const QString&, std::shared_ptr<const Document> d) {
            order << QStringLiteral("curves");
            curvesAt = clock.elapsed();
            curves = d;
        });
        connect(&loader, &Loader::attributed, this, [&](const QString&, std::shared_ptr<const Document> d) {
            order << QStringLiteral("attributed");
            attributedAt = clock.elapsed();
            attributed = d;
        });
        connect(&loader, &Loader::snapshotLoaded, this, [&](const QString&, std::shared_ptr<const Document> d) {
            order << QStringLiteral("loaded");
            loadedAt = clock.elapsed();
            loaded = d;
        });
        QSignalSpy curvesSpy(&loader, &Loader::curvesReady);
        QSignalSpy idle(&loader, &Loader::idle);
        clock.start();
        loader.load(file);
        QVERIFY(idle.wait(600000));
        QCOMPARE(order, (QStringList{QStringLiteral("curves"), QStringLiteral("attributed"), QStringLiteral("loaded")}));
        QCOMPARE(curvesSpy.count(), 1);
        QVERIFY(curvesAt < attributedAt && attributedAt <= loadedAt);

        // The curves' document: the whole replay, no categories yet.
        QVERIFY(curves && attributed && loaded);
        QCOMPARE(curves->analysis->stage, AnalysisStage::Replayed);
        QVERIFY(!curves->attribution() && !curves->attributed() && !curves->frames() && !curves->diagnosis());
        QVERIFY(curves->devices.at(0).eventCount() >= 1000000);
        QCOMPARE(curves->devices[0].phaseAt(0), Phase::Other);
        QCOMPARE(curves->devices[0].categoryBytes(Category::Other, curves->devices[0].replay->peakRequested.event.value),
                 curves->devices[0].replay->peakRequested.bytes);
        // Then the categories, then the findings, over the same replay.
        QCOMPARE(attributed->analysis->stage, AnalysisStage::Attributed);
        QVERIFY(attributed->attributed() && attributed->frames() && !attributed->diagnosis());
        QCOMPARE(loaded->analysis->stage, AnalysisStage::Diagnosed);
        QVERIFY(loaded->attributed() && loaded->diagnosis());
        QCOMPARE(loaded->training().size(), loaded->devices.size());
        QCOMPARE(curves->analysis->replay.get(), loaded->analysis->replay.get());
        QVERIFY(curves->devices[0].timeUs && curves->devices[0].timeUs == loaded->devices[0].timeUs); // shared, not copied
        qInfo("1M events: curves at %lld ms, categories at %lld ms, findings at %lld ms", curvesAt, attributedAt, loadedAt);
    }

    void loadsAndReportsProgress_data()
    {
        QTest::addColumn<QString>("file");
        for (const char* name : {"llm_bs16", "llm_bs2_cpp", "many_small", "oom", "libtorch_mlp"})
            QTest::newRow(name) << QStringLiteral(MEMSCOPE_SAMPLES_DIR "/%1.pickle").arg(QLatin1String(name));
    }
    void loadsAndReportsProgress()
    {
        QFETCH(QString, file);
        Loader loader;
        QSignalSpy started(&loader, &Loader::loadStarted);
        QSignalSpy progress(&loader, &Loader::progressChanged);
        QSignalSpy loaded(&loader, &Loader::snapshotLoaded);
        QSignalSpy failed(&loader, &Loader::loadFailed);
        QSignalSpy idle(&loader, &Loader::idle);
        loader.load(file);
        QVERIFY(loader.isBusy());
        QVERIFY(idle.wait(60000));
        QCOMPARE(started.count(), 1);
        QCOMPARE(failed.count(), 0);
        QCOMPARE(loaded.count(), 1);
        QCOMPARE(loaded.at(0).at(0).toString(), file);
        QVERIFY(progress.count() >= 2);
        QCOMPARE(progress.last().at(1).toDouble(), 1.0);
        double last = -1;
        for (const auto& args : progress) {
            QVERIFY(args.at(1).toDouble() >= last);
            last = args.at(1).toDouble();
        }
        QVERIFY(!loader.isBusy());

        // The document carries the core's results, unchanged.
        const auto doc = loaded.at(0).at(1).value<std::shared_ptr<const Document>>();
        QVERIFY(doc);
        const auto direct = replaySnapshot(readSnapshotFile(file.toStdString()));
        QCOMPARE(doc->devices.size(), direct->devices.size());
        const DeviceReplay& d = *doc->devices[0].replay;
        QCOMPARE(d.peakRequested.bytes, direct->devices[0].peakRequested.bytes);
        QCOMPARE(d.peakReserved.bytes, direct->devices[0].peakReserved.bytes);
        QCOMPARE(d.eventCount, direct->devices[0].eventCount);
        QVERIFY(doc->attributed());
        // The category curves add up to the requested curve.
        const DeviceModel& m = doc->devices[0];
        for (int64_t i = 0; i < m.eventCount(); i += std::max<int64_t>(1, m.eventCount() / 500)) {
            int64_t sum = 0;
            for (Category c : kAllCategories)
                sum += m.categoryBytes(c, i);
            QCOMPARE(sum, m.requestedAfter(i));
        }
    }

    void failureNamesFileAndPlace_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("expected");
        QTest::newRow("global opcode") << QStringLiteral(MEMSCOPE_TESTDATA_DIR "/evil_global_os_system.pickle")
                                       << QStringLiteral("byte");
        QTest::newRow("truncated") << QStringLiteral(MEMSCOPE_TESTDATA_DIR "/release_truncated.pickle") << QStringLiteral("byte");
        QTest::newRow("not a snapshot") << QStringLiteral(MEMSCOPE_TESTDATA_DIR "/not_a_snapshot.pickle") << QString();
        QTest::newRow("missing") << QStringLiteral("/nonexistent/dir/snap.pickle") << QString();
    }
    void failureNamesFileAndPlace()
    {
        QFETCH(QString, file);
        QFETCH(QString, expected);
        Loader loader;
        QSignalSpy loaded(&loader, &Loader::snapshotLoaded);
        QSignalSpy failed(&loader, &Loader::loadFailed);
        QSignalSpy idle(&loader, &Loader::idle);
        loader.load(file);
        QVERIFY(idle.wait(30000));
        QCOMPARE(loaded.count(), 0);
        QCOMPARE(failed.count(), 1);
        QCOMPARE(failed.at(0).at(0).toString(), file);
        const QString message = failed.at(0).at(1).toString();
        QVERIFY2(message.contains(file), qPrintable(message));
        if (!expected.isEmpty())
            QVERIFY2(message.contains(expected), qPrintable(message));
    }

    // Several files queue up and come back in order; a bad one in the middle does not stop the rest.
    void queueKeepsOrder()
    {
        Loader loader;
        QSignalSpy loaded(&loader, &Loader::snapshotLoaded);
        QSignalSpy failed(&loader, &Loader::loadFailed);
        QSignalSpy idle(&loader, &Loader::idle);
        const QString a = QStringLiteral(MEMSCOPE_SAMPLES_DIR "/release.pickle");
        const QString bad = QStringLiteral(MEMSCOPE_TESTDATA_DIR "/release_truncated.pickle");
        const QString b = QStringLiteral(MEMSCOPE_SAMPLES_DIR "/oom.pickle");
        loader.load(QStringList{a, bad, b});
        QCOMPARE(loader.queuedCount(), 2);
        QVERIFY(idle.wait(30000));
        QCOMPARE(loaded.count(), 2);
        QCOMPARE(loaded.at(0).at(0).toString(), a);
        QCOMPARE(loaded.at(1).at(0).toString(), b);
        QCOMPARE(failed.count(), 1);
        QCOMPARE(failed.at(0).at(0).toString(), bad);
    }

    void cancelStopsCurrentAndQueued()
    {
        Loader loader;
        QSignalSpy loaded(&loader, &Loader::snapshotLoaded);
        QSignalSpy cancelled(&loader, &Loader::loadCancelled);
        QSignalSpy idle(&loader, &Loader::idle);
        const QString big = QStringLiteral(MEMSCOPE_SAMPLES_DIR "/many_small.pickle");
        const QString other = QStringLiteral(MEMSCOPE_SAMPLES_DIR "/llm_bs16.pickle");
        loader.load(QStringList{big, other});
        loader.cancel();
        QVERIFY(idle.wait(30000));
        QCOMPARE(loaded.count(), 0);
        QCOMPARE(cancelled.count(), 2);
        QStringList paths;
        for (const auto& c : cancelled)
            paths << c.at(0).toString();
        QVERIFY(paths.contains(big));
        QVERIFY(paths.contains(other));
        // The loader is usable again.
        loader.load(other);
        QVERIFY(idle.wait(30000));
        QCOMPARE(loaded.count(), 1);
    }

    void destroyedWhileLoading()
    {
        auto* loader = new Loader;
        loader->load(QStringLiteral(MEMSCOPE_SAMPLES_DIR "/many_small.pickle"));
        delete loader; // waits for the worker, posts nothing to a dead object
        QTest::qWait(50);
    }
};

QTEST_MAIN(TestLoader)
#include "tst_loader.moc"
