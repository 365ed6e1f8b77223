// IncrementalAnalysis (core/analysis/incremental_analysis.h): a real recording fed in pieces cut
// at random points, as a live session receives it. After every piece the published view's
// replay equals a whole-file replay of the prefix (peaks, reserved, the curve's last value),
// and the full analysis built from the mirrored rows equals analyze() of the same prefix:
// phases of every event, category and iteration of every allocation, iterations with their
// peaks, the per-category curves, the peak's split, and every diagnosis.
#include "analysis/analysis.h"
#include "analysis/incremental_analysis.h"
#include "analysis/live_stats.h"
#include "live/live_recording.h"
#include "snapshot/snapshot_reader.h"

#include <QDir>
#include <QTest>

#include <random>

using namespace memscope;

namespace {

QString compareAnalyses(const Analysis& got, const Analysis& want)
{
    if (got.deviceCount() != want.deviceCount())
        return QStringLiteral("device count");
    for (size_t d = 0; d < want.deviceCount(); ++d) {
        const DeviceReplay& rg = got.replay->devices[d];
        const DeviceReplay& rw = want.replay->devices[d];
        if (rg.eventCount != rw.eventCount || rg.peakRequested.bytes != rw.peakRequested.bytes ||
            rg.peakRequested.event != rw.peakRequested.event || rg.peakReserved.bytes != rw.peakReserved.bytes ||
            rg.peakReserved.event != rw.peakReserved.event || rg.allocations.size() != rw.allocations.size())
            return QStringLiteral("device %1: replay").arg(d);
        if (!want.attribution)
            continue;
        const DeviceAttribution& ag = got.attribution->devices[d];
        const DeviceAttribution& aw = want.attribution->devices[d];
        if (ag.eventPhase != aw.eventPhase)
            return QStringLiteral("device %1: phases").arg(d);
        if (ag.allocationCategory != aw.allocationCategory || ag.allocationPhase != aw.allocationPhase ||
            ag.allocationIteration != aw.allocationIteration)
            return QStringLiteral("device %1: categories").arg(d);
        if (ag.iterations.size() != aw.iterations.size())
            return QStringLiteral("device %1: %2 iterations vs %3").arg(d).arg(ag.iterations.size()).arg(aw.iterations.size());
        for (size_t i = 0; i < aw.iterations.size(); ++i) {
            const Iteration& a = ag.iterations[i];
            const Iteration& b = aw.iterations[i];
            if (a.firstEvent != b.firstEvent || a.lastEvent != b.lastEvent || a.peak.bytes != b.peak.bytes ||
                a.peak.event != b.peak.event || a.peak.byCategory != b.peak.byCategory || a.phases.size() != b.phases.size())
                return QStringLiteral("device %1: iteration %2").arg(d).arg(i);
        }
        if (ag.peakByCategory != aw.peakByCategory || ag.peakPhase != aw.peakPhase || ag.categoryAtStart != aw.categoryAtStart)
            return QStringLiteral("device %1: peak split").arg(d);
        for (size_t c = 0; c < ag.categoryBytes.size(); ++c) {
            if (ag.categoryBytes[c].size() != aw.categoryBytes[c].size())
                return QStringLiteral("device %1: category curve %2 length").arg(d).arg(c);
            for (size_t i = 0; i < aw.categoryBytes[c].size(); ++i)
                if (ag.categoryBytes[c][i] != aw.categoryBytes[c][i])
                    return QStringLiteral("device %1: category %2 at event %3").arg(d).arg(c).arg(i);
        }
    }
    if (want.diagnosis) {
        const auto& g = got.diagnosis->items;
        const auto& w = want.diagnosis->items;
        if (g.size() != w.size())
            return QStringLiteral("%1 diagnoses vs %2").arg(g.size()).arg(w.size());
        for (size_t i = 0; i < w.size(); ++i)
            if (g[i].kind != w[i].kind || g[i].message != w[i].message || g[i].detail != w[i].detail ||
                g[i].bytes != w[i].bytes || g[i].allocations != w[i].allocations || g[i].event != w[i].event)
                return QStringLiteral("diagnosis %1: %2 vs %3")
                    .arg(i)
                    .arg(QString::fromStdString(g[i].message), QString::fromStdString(w[i].message));
    }
    return {};
}

} // namespace

class TestIncrementalAnalysis : public QObject {
    Q_OBJECT
private slots:
    void equalsAnalyzeAfterEveryUpdate_data()
    {
        QTest::addColumn<QString>("file");
        for (const char* f :
             {MEMSCOPE_SAMPLES_DIR "/oracle_qwen_bs16.pickle", MEMSCOPE_SAMPLES_DIR "/loss_leak.pickle",
              MEMSCOPE_SAMPLES_DIR "/generate_keep.pickle", MEMSCOPE_SAMPLES_DIR "/oom.pickle",
              MEMSCOPE_SAMPLES_DIR "/llm_bs2_cpp.pickle", MEMSCOPE_TESTDATA_DIR "/oracle/fw_hf_trainer.pickle",
              MEMSCOPE_TESTDATA_DIR "/oracle/oracle_qwen_bs8_ckpt.pickle",
              MEMSCOPE_TESTDATA_DIR "/oracle/oracle_qwen_bs4_late.pickle", MEMSCOPE_TESTDATA_DIR "/multi/two_gpus.pickle",
              MEMSCOPE_TESTDATA_DIR "/oracle/fw_closure_adam.pickle",
              // 93,702 events: six chunks of mirrored rows, so the full analyses let rows go.
              MEMSCOPE_SAMPLES_DIR "/many_small.pickle"})
            QTest::newRow(qPrintable(QFileInfo(QString::fromUtf8(f)).fileName())) << QString::fromUtf8(f);
    }
    void equalsAnalyzeAfterEveryUpdate()
    {
        QFETCH(QString, file);
        const auto full = readSnapshotFile(file.toStdString());
        // The growing recording: every pool from the start, rows pushed piece by piece, the
        // dump-time segments only with the last piece (the agent sends them at the end).
        std::unique_ptr<Snapshot> growing = copySnapshot(*full);
        growing->segments.clear();
        size_t total = 0;
        for (DeviceTrace& t : growing->devices) {
            total += t.events.count();
            EventTable empty;
            empty.hasTime = t.events.hasTime;
            t.events = std::move(empty);
        }
        std::mt19937_64 rng(qHash(file));
        std::vector<size_t> cuts;
        for (int c = 0; c < 6; ++c)
            cuts.push_back(static_cast<size_t>(rng() % (total + 1)));
        cuts.push_back(total);
        std::sort(cuts.begin(), cuts.end());
        IncrementalAnalysis inc;
        size_t pushed = 0;
        int updates = 0;
        for (size_t cut : cuts) {
            // Rows in the file's device order, as many as the cut says.
            for (size_t d = 0; d < full->devices.size() && pushed < cut; ++d) {
                const EventTable& src = full->devices[d].events;
                EventTable& dst = growing->devices[d].events;
                while (dst.count() < src.count() && pushed < cut) {
                    const size_t k = dst.count();
                    dst.push(src.action[k], src.addr[k], src.size[k], src.stream[k], src.timeUs[k], src.stack[k],
                             src.userMetadata[k], src.compileContext[k]);
                    if (auto it = src.deviceFree.find(static_cast<int64_t>(k)); it != src.deviceFree.end())
                        dst.deviceFree.emplace(it->first, it->second);
                    ++pushed;
                }
            }
            if (cut == total)
                growing->segments = full->segments;
            inc.ingest(*growing);
            const auto view = inc.publish();
            QCOMPARE(view->events, static_cast<int64_t>(cut));
            QVERIFY2(view->error.empty(), view->error.c_str());
            const auto previous = inc.baseSnapshot();
            const auto got = inc.runFullAnalysis();
            QVERIFY(got);
            // The analysis's Snapshot is the mirror: the model holds it (the same object, not a
            // copy) and has let go of every mirrored row it holds but those of each device's
            // last, partly analysed chunk (a chunk's bytes from the rows held before).
            QCOMPARE(inc.baseSnapshot().get(), got->snapshot.get());
            constexpr size_t kChunk = ChunkedSeries<int>::kChunk;
            size_t chunksBefore = 0, partialChunks = 0;
            for (size_t d = 0; d < growing->devices.size(); ++d) {
                const size_t n = growing->devices[d].events.count();
                const size_t analysedBefore = previous && d < previous->devices.size() ? previous->devices[d].events.count() : 0;
                chunksBefore += (n + kChunk - 1) / kChunk - analysedBefore / kChunk;
                partialChunks += n % kChunk != 0;
            }
            const int64_t rowsAfter = inc.publish()->rowBytes;
            QVERIFY(chunksBefore > 0 || view->rowBytes == 0);
            if (chunksBefore > 0) {
                const int64_t chunkBytes = view->rowBytes / static_cast<int64_t>(chunksBefore);
                QVERIFY(chunkBytes >= static_cast<int64_t>(kChunk * 32)); // a row holds 32 bytes or more
                QVERIFY2(rowsAfter <= static_cast<int64_t>(partialChunks) * chunkBytes,
                         qPrintable(QStringLiteral("%1 bytes of rows kept, %2 chunks of %3 allowed")
                                        .arg(rowsAfter)
                                        .arg(partialChunks)
                                        .arg(chunkBytes)));
            }
            const auto want = analyze(AnalysisSource::recording(copySnapshot(*growing), "prefix"));
            QVERIFY(want->reached(AnalysisStage::Diagnosed) && got->reached(AnalysisStage::Diagnosed));
            const QString diff = compareAnalyses(*got, *want);
            QVERIFY2(diff.isEmpty(), qPrintable(QStringLiteral("after %1 of %2 events: %3").arg(cut).arg(total).arg(diff)));
            // The fast path agrees with the full replay of the same prefix.
            for (size_t d = 0; d < want->deviceCount(); ++d) {
                const DeviceReplay& r = want->replay->devices[d];
                const DeviceReplayView& v = view->devices.at(d);
                QCOMPARE(v.eventCount, r.eventCount);
                QCOMPARE(v.peakRequested.bytes, r.peakRequested.bytes);
                QCOMPARE(v.peakRequested.event, r.peakRequested.event);
                QCOMPARE(v.peakReserved.bytes, r.peakReserved.bytes);
                if (r.eventCount > 0) {
                    QCOMPARE(v.requestedAfter(r.eventCount - 1), r.requestedAfter(r.eventCount - 1));
                    QCOMPARE(v.reservedAfter(r.eventCount - 1), r.reservedAfter(r.eventCount - 1));
                }
            }
            ++updates;
        }
        QCOMPARE(updates, static_cast<int>(cuts.size()));
        // The whole recording: the same findings and iterations as the file opened whole.
        const auto whole = analyze(AnalysisSource::file(file.toStdString()));
        const auto last = inc.publish()->analysis; // the view after the last full analysis
        QVERIFY(last);
        QVERIFY(!whole->diagnosis->items.empty());
        QCOMPARE(last->diagnosis->items.size(), whole->diagnosis->items.size());
        QCOMPARE(last->attribution->devices[0].iterations.size(), whole->attribution->devices[0].iterations.size());
    }

    // The bounded mode lets the rows go and runs no full analysis; a failed update is reported
    // in the view, not swallowed.
    void boundedAndFailures()
    {
        const auto full = readSnapshotFile(MEMSCOPE_SAMPLES_DIR "/many_small.pickle");
        IncrementalAnalysis::Options o;
        o.detailEvents = 20000;
        IncrementalAnalysis inc(o);
        inc.ingest(*full);
        const auto v = inc.publish();
        QVERIFY(v->bounded);
        QCOMPARE(v->events, static_cast<int64_t>(full->devices[0].events.count()));
        // MEMSCOPE_LIVE_STATS's line for this view.
        const LiveStatsLine line = liveStatsLine(*v, 1.5, 2.25);
        QCOMPARE(line.events, v->events);
        QVERIFY(line.rssBytes > 0);
        const QString json = QString::fromStdString(liveStatsJson(line));
        QVERIFY2(json.startsWith(
                     QStringLiteral("{\"t_s\": 1.500, \"events\": %1, \"update_ms\": 2.250, \"rss_bytes\": ").arg(v->events)),
                 qPrintable(json));
        QVERIFY(json.endsWith(QStringLiteral("\"dropped\": 0, \"lag_events\": 0}")));
        QVERIFY(!inc.runFullAnalysis());
        QVERIFY(!inc.mirroredSnapshot());
        // A recording whose rows were released before they were taken cannot be shown whole.
        LiveRecording rec;
        IncrementalAnalysis other;
        rec.releaseEvents();
        QCOMPARE(other.ingest(rec), int64_t(0));
        QVERIFY(other.publish()->error.empty());
    }
};

QTEST_GUILESS_MAIN(TestIncrementalAnalysis)
#include "tst_incremental_analysis.moc"
