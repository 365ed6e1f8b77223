// IncrementalDeviceReplay (core/replay/incremental_replay.h): fed a real recording in pieces
// cut at random points, after every piece its view equals replayDevice() of the same prefix —
// every curve value, both peaks, the baselines, the allocations and their numbering, the OOM
// and snapshot events, the truncation verdict — and its growing pyramids answer every range
// as MinMaxPyramid does on the whole-file curves. The bounded mode keeps the same peaks and
// whole-block answers after letting the old detail go.
#include "replay/device_replay.h"
#include "replay/incremental_replay.h"
#include "replay/minmax_pyramid.h"
#include "snapshot/snapshot_reader.h"

#include <QDir>
#include <QTest>

#include <random>

using namespace memscope;

namespace {

// The first `rows` events of a device, as a recording received so far (no dump-time segments).
EventTable prefixOf(const EventTable& ev, size_t rows)
{
    EventTable t;
    t.hasTime = ev.hasTime;
    for (size_t k = 0; k < rows; ++k)
        t.push(ev.action[k], ev.addr[k], ev.size[k], ev.stream[k], ev.timeUs[k], ev.stack[k], ev.userMetadata[k],
               ev.compileContext[k]);
    return t;
}

bool sameAllocation(const Allocation& a, const Allocation& b)
{
    return a.allocEvent == b.allocEvent && a.freeRequestedEvent == b.freeRequestedEvent && a.freeEvent == b.freeEvent &&
           a.addr == b.addr && a.size == b.size && a.stream == b.stream && a.stack == b.stack;
}

// Compares everything; returns the first difference, empty when equal.
QString compare(const DeviceReplayView& v, const IncrementalDeviceReplay& inc, const DeviceReplay& r, std::mt19937_64& rng)
{
    if (v.eventCount != r.eventCount)
        return QStringLiteral("events %1 vs %2").arg(v.eventCount).arg(r.eventCount);
    if (v.requestedAtStart != r.requestedAtStart || v.reservedAtStart != r.reservedAtStart)
        return QStringLiteral("baselines %1/%2 vs %3/%4")
            .arg(v.requestedAtStart)
            .arg(v.reservedAtStart)
            .arg(r.requestedAtStart)
            .arg(r.reservedAtStart);
    if (v.preexistingBytes != r.preexistingBytes || v.preexistingCount != r.preexistingCount)
        return QStringLiteral("pre-existing");
    for (int64_t i = 0; i < r.eventCount; ++i)
        if (v.requestedAfter(i) != r.requestedAfter(i) || v.reservedAfter(i) != r.reservedAfter(i))
            return QStringLiteral("curve at event %1: %2/%3 vs %4/%5")
                .arg(i)
                .arg(v.requestedAfter(i))
                .arg(v.reservedAfter(i))
                .arg(r.requestedAfter(i))
                .arg(r.reservedAfter(i));
    auto samePeak = [](const Peak& a, const Peak& b) { return a.bytes == b.bytes && a.event == b.event && a.timeUs == b.timeUs; };
    if (!samePeak(v.peakRequested, r.peakRequested))
        return QStringLiteral("requested peak %1@%2 vs %3@%4")
            .arg(v.peakRequested.bytes)
            .arg(v.peakRequested.event.value)
            .arg(r.peakRequested.bytes)
            .arg(r.peakRequested.event.value);
    if (!samePeak(v.peakReserved, r.peakReserved))
        return QStringLiteral("reserved peak %1@%2 vs %3@%4")
            .arg(v.peakReserved.bytes)
            .arg(v.peakReserved.event.value)
            .arg(r.peakReserved.bytes)
            .arg(r.peakReserved.event.value);
    if (v.oomEvents != r.oomEvents || v.snapshotEvents != r.snapshotEvents)
        return QStringLiteral("oom/snapshot events");
    if (v.unmatchedFrees != r.unmatchedFrees || v.doubleAllocs != r.doubleAllocs)
        return QStringLiteral("unmatched %1 vs %2").arg(v.unmatchedFrees).arg(r.unmatchedFrees);
    if (v.truncated != r.truncated || v.truncationReason != r.truncationReason)
        return QStringLiteral("truncation: %1").arg(QString::fromStdString(v.truncationReason));
    const std::vector<Allocation> allocs = inc.allocations();
    if (allocs.size() != r.allocations.size() || v.allocationCount != static_cast<int64_t>(r.allocations.size()))
        return QStringLiteral("allocations %1 vs %2").arg(allocs.size()).arg(r.allocations.size());
    for (size_t a = 0; a < allocs.size(); ++a)
        if (!sameAllocation(allocs[a], r.allocations[a]))
            return QStringLiteral("allocation %1").arg(a);
    if (inc.eventAllocation() != r.eventAllocation)
        return QStringLiteral("eventAllocation");
    // The growing pyramids answer as MinMaxPyramid on the whole-file curves.
    const MinMaxPyramid req(&r.requested), res(&r.reserved);
    const int64_t n = r.eventCount;
    for (int q = 0; q < 300 && n > 0; ++q) {
        const int64_t a = static_cast<int64_t>(rng() % static_cast<uint64_t>(n));
        const int64_t b = a + 1 + static_cast<int64_t>(rng() % static_cast<uint64_t>(n - a));
        const auto want = req.query(a, b);
        const auto got = v.requested.query(a, b);
        if (got.minIndex != want.minIndex || got.maxIndex != want.maxIndex ||
            got.maxValue + v.requestedAtStart != r.requestedAfter(want.maxIndex))
            return QStringLiteral("requested pyramid [%1, %2)").arg(a).arg(b);
        const auto wantRes = res.query(a, b);
        const auto gotRes = v.reserved.query(a, b);
        if (gotRes.minIndex != wantRes.minIndex || gotRes.maxIndex != wantRes.maxIndex)
            return QStringLiteral("reserved pyramid [%1, %2)").arg(a).arg(b);
    }
    return {};
}

QStringList recordings()
{
    QStringList files;
    for (const QString& folder :
         {QStringLiteral(MEMSCOPE_SAMPLES_DIR), QStringLiteral(MEMSCOPE_TESTDATA_DIR "/oracle"),
          QStringLiteral(MEMSCOPE_TESTDATA_DIR "/multi"), QStringLiteral(MEMSCOPE_TESTDATA_DIR "/real")}) {
        const QDir dir(folder);
        for (const QString& name : dir.entryList({QStringLiteral("*.pickle")}, QDir::Files, QDir::Name))
            files << dir.filePath(name);
    }
    return files;
}

} // namespace

class TestIncrementalReplay : public QObject {
    Q_OBJECT
private slots:
    void equalsWholeFileAfterEveryPiece_data()
    {
        QTest::addColumn<QString>("file");
        const QStringList files = recordings();
        QVERIFY(files.size() >= 20);
        for (const QString& f : files)
            QTest::newRow(qPrintable(QFileInfo(f).fileName())) << f;
    }
    void equalsWholeFileAfterEveryPiece()
    {
        QFETCH(QString, file);
        const auto snap = readSnapshotFile(file.toStdString());
        std::mt19937_64 rng(qHash(file));
        for (const DeviceTrace& trace : snap->devices) {
            const size_t n = trace.events.count();
            // Random cut points, a few tiny pieces among them.
            std::vector<size_t> cuts;
            for (int c = 0; c < 10 && n > 0; ++c)
                cuts.push_back(static_cast<size_t>(rng() % (n + 1)));
            cuts.push_back(std::min<size_t>(n, 1));
            cuts.push_back(n);
            std::sort(cuts.begin(), cuts.end());
            IncrementalDeviceReplay inc(trace.device);
            inc.setTraceLimits(snap->traceOverflowed, snap->traceMaxEntries);
            for (size_t cut : cuts) {
                inc.append(trace.events, cut);
                Snapshot prefix;
                prefix.traceOverflowed = snap->traceOverflowed;
                prefix.traceMaxEntries = snap->traceMaxEntries;
                DeviceTrace t;
                t.device = trace.device;
                t.events = prefixOf(trace.events, cut);
                const DeviceReplay want = replayDevice(prefix, t);
                const QString diff = compare(inc.view(), inc, want, rng);
                QVERIFY2(
                    diff.isEmpty(),
                    qPrintable(QStringLiteral("device %1, cut at %2 of %3: %4").arg(trace.device).arg(cut).arg(n).arg(diff)));
            }
            // The recording's end: the agent's final SEGMENTS raise the baselines as the file's do.
            inc.setSegments(snap->segments);
            const DeviceReplay whole = replayDevice(*snap, trace);
            const QString diff = compare(inc.view(), inc, whole, rng);
            QVERIFY2(diff.isEmpty(), qPrintable(QStringLiteral("device %1, with segments: %2").arg(trace.device).arg(diff)));
        }
    }

    // Bounded mode: the detail of all but the newest events is let go; the peaks, the count and
    // every query over whole first-level blocks (what a zoomed-out pixel asks) stay exact.
    void boundedKeepsTheOverview()
    {
        const auto snap = readSnapshotFile(MEMSCOPE_SAMPLES_DIR "/many_small.pickle");
        const DeviceTrace& trace = snap->devices.at(0);
        const int64_t n = static_cast<int64_t>(trace.events.count());
        QVERIFY(n > 40000);
        IncrementalDeviceReplay full(trace.device), bounded(trace.device);
        bounded.setDetailEvents(20000);
        std::mt19937_64 rng(7);
        for (int64_t at = 0; at < n;) {
            at = std::min<int64_t>(n, at + 1 + static_cast<int64_t>(rng() % 5000));
            full.append(trace.events, static_cast<size_t>(at));
            bounded.append(trace.events, static_cast<size_t>(at));
        }
        QVERIFY(bounded.heldBytes() < full.heldBytes());
        const DeviceReplayView a = full.view(), b = bounded.view();
        QVERIFY(b.requested.values().firstHeld() > 0);
        QVERIFY(!b.requested.values().has(0));
        QVERIFY(b.requested.values().has(static_cast<size_t>(n - 1)));
        QCOMPARE(b.peakRequested.bytes, a.peakRequested.bytes);
        QCOMPARE(b.peakRequested.event, a.peakRequested.event);
        QCOMPARE(b.peakReserved.bytes, a.peakReserved.bytes);
        for (int q = 0; q < 2000; ++q) {
            const int64_t x = static_cast<int64_t>(rng() % static_cast<uint64_t>(n / 32)) * 32;
            int64_t y = x + 32 * (1 + static_cast<int64_t>(rng() % 4000));
            y = std::min(y, n);
            const auto want = a.requested.query(x, y);
            const auto got = b.requested.query(x, y);
            QCOMPARE(got.maxIndex, want.maxIndex);
            QCOMPARE(got.minIndex, want.minIndex);
            QCOMPARE(got.maxValue, want.maxValue);
        }
    }

    // Regression: a chunk of allocations holding one long-lived allocation (a parameter) kept
    // every later chunk too, so the bounded mode's memory grew with the run (2.3 GiB at 100M
    // events). many_small six times over (addresses moved apart per round, so each round's
    // never-freed blocks stay live): the old chunks go, pinned ones stay, memory is flat.
    void boundedLetsOldAllocationsGo()
    {
        const auto snap = readSnapshotFile(MEMSCOPE_SAMPLES_DIR "/many_small.pickle");
        const EventTable& one = snap->devices.at(0).events;
        EventTable rounds;
        for (uint64_t r = 0; r < 6; ++r)
            for (size_t k = 0; k < one.count(); ++k)
                rounds.push(one.action[k], one.addr[k] + (r << 40), one.size[k], one.stream[k], one.timeUs[k], one.stack[k],
                            one.userMetadata[k], one.compileContext[k]);
        IncrementalDeviceReplay full(0), bounded(0);
        bounded.setDetailEvents(50000);
        for (size_t at = 0; at < rounds.count();) {
            at = std::min(rounds.count(), at + 7919);
            full.append(rounds, at);
            bounded.append(rounds, at);
        }
        QCOMPARE(bounded.view().peakRequested.bytes, full.view().peakRequested.bytes);
        const auto allocs = bounded.allocations();
        const auto fullAllocs = full.allocations();
        QCOMPARE(allocs.size(), fullAllocs.size());
        // Per chunk of 16,384 traced allocations wholly before the window: let go exactly when
        // none of them is still live; and some chunk after a pinned one was let go.
        const size_t pre = static_cast<size_t>(full.view().preexistingCount);
        const int64_t keepFrom = static_cast<int64_t>(rounds.count()) - 50000;
        const size_t chunk = ChunkedSeries<Allocation>::kChunk;
        bool pinnedSeen = false, evictedAfterPinned = false;
        for (size_t c = 0; pre + (c + 1) * chunk <= fullAllocs.size(); ++c) {
            const size_t first = pre + c * chunk, last = first + chunk;
            if (fullAllocs[last - 1].allocEvent.value >= keepFrom)
                break;
            bool live = false;
            for (size_t i = first; i < last; ++i)
                live = live || fullAllocs[i].aliveAtEnd();
            const bool kept = allocs[first].allocEvent.valid();
            QCOMPARE(kept, live);
            for (size_t i = first; kept && i < last; ++i)
                QCOMPARE(allocs[i].allocEvent, fullAllocs[i].allocEvent); // what is kept is right
            pinnedSeen = pinnedSeen || live;
            evictedAfterPinned = evictedAfterPinned || (pinnedSeen && !kept);
        }
        QVERIFY(evictedAfterPinned);
        QVERIFY(bounded.heldBytes() < full.heldBytes());
    }
};

QTEST_GUILESS_MAIN(TestIncrementalReplay)
#include "tst_incremental_replay.moc"
