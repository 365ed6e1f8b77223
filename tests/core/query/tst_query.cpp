// core/query: segment lifetimes, the allocator state at an event, free space and its one
// fragmentation definition, on real recordings.
#include "query/allocator_state.h"
#include "query/free_space.h"
#include "query/point_report.h"
#include "query/range_summary.h"
#include "query/metadata_spans.h"
#include "query/pool_usage.h"
#include "query/segment_lives.h"
#include "replay/replay.h"
#include "snapshot/annotation_spans.h"
#include "snapshot/snapshot_reader.h"

#include <QDir>
#include <map>
#include <QTest>

using namespace memscope;

Q_DECLARE_METATYPE(std::vector<uint64_t>)

class TstQuery : public QObject {
    Q_OBJECT

private slots:
    void fragmentation_data()
    {
        QTest::addColumn<std::vector<uint64_t>>("pieces");
        QTest::addColumn<double>("fragmentation");
        QTest::newRow("none") << std::vector<uint64_t>{} << 0.0;
        QTest::newRow("one piece") << std::vector<uint64_t>{64u << 20} << 0.0;
        QTest::newRow("four equal") << std::vector<uint64_t>{512, 512, 512, 512} << 0.75;
        QTest::newRow("one large, slivers") << std::vector<uint64_t>{3u << 20, 512u << 10, 512u << 10} << 0.25;
        QTest::newRow("empty pieces ignored") << std::vector<uint64_t>{0, 1024, 0} << 0.0;
    }
    void fragmentation()
    {
        QFETCH(std::vector<uint64_t>, pieces);
        QFETCH(double, fragmentation);
        FreeSpace f;
        for (uint64_t p : pieces)
            f.add(p);
        QCOMPARE(f.fragmentation(), fragmentation);
        QCOMPARE(f.count, static_cast<int64_t>(std::count_if(pieces.begin(), pieces.end(), [](uint64_t p) { return p > 0; })));
    }

    void blockRounding()
    {
        QCOMPARE(roundToAllocatorBlock(0), uint64_t{512});
        QCOMPARE(roundToAllocatorBlock(1), uint64_t{512});
        QCOMPARE(roundToAllocatorBlock(512), uint64_t{512});
        QCOMPARE(roundToAllocatorBlock(513), uint64_t{1024});
    }

    // One pairing of record_function START/END for the attribution and the GUI: an END closes
    // the latest open START of its name, a stray END is dropped, an unclosed START runs to the
    // end, and a device's annotations are those naming it (all of them when none does).
    void annotationSpansPairing_data()
    {
        QTest::addColumn<int>("device");
        QTest::addColumn<QString>("expected"); // name:start-end, in the order returned; "open" for no end
        QTest::newRow("device 0") << 0 << QStringLiteral("step:20-30 step:10-40 fwd:50-60 fwd:70-open");
        QTest::newRow("device 1") << 1 << QStringLiteral("dev1:5-6");
        QTest::newRow("device 2 names none: all") << 2 << QStringLiteral("step:20-30 dev1:5-6 step:10-40 fwd:50-60 fwd:70-open");
    }
    void annotationSpansPairing()
    {
        QFETCH(int, device);
        QFETCH(QString, expected);
        Snapshot s;
        auto add = [&](const char* name, AnnotationStage stage, int dev, int64_t t) {
            s.annotations.push_back({s.strings.intern(name), stage, dev, t});
        };
        add("fwd", AnnotationStage::End, 0, 1); // stray END
        add("step", AnnotationStage::Start, 0, 10);
        add("step", AnnotationStage::Start, 0, 20);
        add("step", AnnotationStage::End, 0, 30);
        add("dev1", AnnotationStage::Start, 1, 5);
        add("dev1", AnnotationStage::End, 1, 6);
        add("step", AnnotationStage::End, 0, 40);
        add("fwd", AnnotationStage::Start, 0, 50);
        add("fwd", AnnotationStage::End, 0, 60);
        add("fwd", AnnotationStage::Start, 0, 70);
        QStringList got;
        for (const AnnotationSpan& a : annotationSpans(s, device))
            got << QStringLiteral("%1:%2-%3")
                       .arg(QString::fromUtf8(s.str(a.name).data(), static_cast<qsizetype>(s.str(a.name).size())))
                       .arg(a.startUs)
                       .arg(a.open() ? QStringLiteral("open") : QString::number(a.endUs));
        QCOMPARE(got.join(QLatin1Char(' ')), expected);
    }

    void allocatorState_data()
    {
        QTest::addColumn<QString>("sample");
        for (const char* s : {"linear3", "llm_bs16", "many_small", "oom", "release", "generate_keep"})
            QTest::newRow(s) << QString::fromLatin1(s);
    }
    // At the first, middle, peak and last events: the segments alive add up to the replay's
    // reserved curve, every live allocation lies in one, and each segment is its blocks plus
    // its free space, the blocks' rounding counted in use, never free.
    void allocatorState()
    {
        QFETCH(QString, sample);
        const auto replay = replaySnapshot(
            readSnapshotFile((QStringLiteral(MEMSCOPE_SAMPLES_DIR "/") + sample + QStringLiteral(".pickle")).toStdString()));
        const DeviceReplay& d = replay->devices[0];
        const auto lives = segmentLives(*replay->snapshot, replay->snapshot->devices[0]);
        QVERIFY(!lives.empty());
        QVERIFY(std::is_sorted(lives.begin(), lives.end(),
                               [](const SegmentLife& a, const SegmentLife& b) { return a.addr < b.addr; }));
        const int64_t n = d.eventCount;
        for (int64_t e : {int64_t{0}, n / 2, d.peakRequested.event.value, n - 1}) {
            const AllocatorState st = computeAllocatorState(d, lives, e);
            QCOMPARE(static_cast<int64_t>(st.reserved), d.reservedAfter(e));
            QCOMPARE(st.unplacedCount, int64_t{0});
            QCOMPARE(static_cast<int64_t>(st.requested), d.requestedAfter(e));
            QCOMPARE(st.free.bytes + st.inUse, st.reserved);
            FreeSpace sum;
            for (const SegmentState& seg : st.segments) {
                QCOMPARE(seg.free.bytes + seg.inUse, seg.segment->size);
                uint64_t rounded = 0;
                for (const SegmentState::Piece& p : seg.blocks)
                    rounded += roundToAllocatorBlock(p.size);
                QVERIFY(seg.inUse <= rounded);
                QVERIFY(seg.inUse >= seg.requested);
                sum.add(seg.free);
            }
            QCOMPARE(sum.bytes, st.free.bytes);
            QCOMPARE(sum.largest, st.free.largest);
            QCOMPARE(st.fragmentation(), st.free.fragmentation());
        }
    }

    // At the last event the replayed state sees the dump-time segments: its free space holds
    // every Inactive block's bytes (it may hold more: a block the allocator did not split
    // keeps its remainder, which a replay cannot see).
    void lastEventMatchesDumpTime_data()
    {
        QTest::addColumn<QString>("sample");
        for (const char* name : {"linear3", "llm_bs16", "many_small", "oom", "release", "generate_keep"}) {
            const auto s = readSnapshotFile(MEMSCOPE_SAMPLES_DIR "/" + std::string(name) + ".pickle");
            if (std::any_of(s->segments.begin(), s->segments.end(),
                            [&](const Segment& g) { return g.device == s->devices[0].device; }))
                QTest::newRow(name) << QString::fromLatin1(name); // a recording that has dump-time segments
        }
    }
    void lastEventMatchesDumpTime()
    {
        QFETCH(QString, sample);
        const auto replay = replaySnapshot(
            readSnapshotFile((QStringLiteral(MEMSCOPE_SAMPLES_DIR "/") + sample + QStringLiteral(".pickle")).toStdString()));
        const Snapshot& s = *replay->snapshot;
        const DeviceReplay& d = replay->devices[0];
        const auto lives = segmentLives(s, s.devices[0]);
        const AllocatorState st = computeAllocatorState(d, lives, d.eventCount - 1);
        FreeSpace exact;
        uint64_t reserved = 0;
        for (const Segment& seg : s.segments)
            if (seg.device == s.devices[0].device) {
                reserved += seg.totalSize;
                for (const Block& b : seg.blocks)
                    if (b.state == BlockState::Inactive)
                        exact.add(b.size);
            }
        QVERIFY(reserved > 0);
        QCOMPARE(st.reserved, reserved);
        QVERIFY(st.free.bytes >= exact.bytes);
        QVERIFY(st.free.largest >= exact.largest);
        qInfo("%s: free %llu (dump %llu), fragmentation %.3f (dump %.3f)", qPrintable(sample),
              static_cast<unsigned long long>(st.free.bytes), static_cast<unsigned long long>(exact.bytes), st.fragmentation(),
              exact.fragmentation());
    }

    // A range's summary against what the replay's pairing says independently: the allocations
    // whose alloc / completed free falls in the range (their sizes and counts), the highest
    // point of the requested curve in it, and over a range with no double alloc the curve's
    // change (what came in minus what went out). The pyramid's peak is the scan's.
    void rangeSummary_data()
    {
        QTest::addColumn<QString>("sample");
        for (const char* name : {"linear3", "release", "oom", "llm_bs2_cpp", "loss_leak"})
            QTest::newRow(name) << QString::fromLatin1(name);
    }
    void rangeSummary()
    {
        QFETCH(QString, sample);
        const auto replay = replaySnapshot(
            readSnapshotFile((QStringLiteral(MEMSCOPE_SAMPLES_DIR "/") + sample + QStringLiteral(".pickle")).toStdString()));
        const DeviceReplay& r = replay->devices.at(0);
        const EventTable& events = replay->snapshot->devices.at(0).events;
        const MinMaxPyramid pyramid(&r.requested);
        const int64_t n = r.eventCount;
        QVERIFY(n > 10);
        const std::vector<std::pair<int64_t, int64_t>> ranges{{0, n - 1},     {0, n / 3},       {n / 3, 2 * n / 3},
                                                              {n / 2, n / 2}, {n - 5, n + 100}, {-7, 3}};
        for (const auto& [first, last] : ranges) {
            const RangeSummary s = summarizeRange(r, events, first, last);
            const int64_t lo = std::clamp<int64_t>(first, 0, n - 1), hi = std::clamp<int64_t>(last, lo, n - 1);
            QCOMPARE(s.firstEvent, lo);
            QCOMPARE(s.lastEvent, hi);
            int64_t allocated = 0, freed = 0, allocs = 0, frees = 0;
            for (const Allocation& a : r.allocations) {
                if (a.allocEvent.valid() && a.allocEvent.value >= lo && a.allocEvent.value <= hi) {
                    allocated += static_cast<int64_t>(a.size);
                    ++allocs;
                }
                if (a.freeEvent.valid() && a.freeEvent.value >= lo && a.freeEvent.value <= hi &&
                    events.action[static_cast<size_t>(a.freeEvent.value)] == Action::FreeCompleted) {
                    freed += static_cast<int64_t>(a.size);
                    ++frees;
                }
            }
            QCOMPARE(s.allocatedBytes, allocated);
            QCOMPARE(s.allocCount, allocs);
            QCOMPARE(s.freedBytes, freed);
            QCOMPARE(s.freeCount, frees);
            int64_t peak = -1, peakAt = -1;
            for (int64_t i = lo; i <= hi; ++i)
                if (r.requestedAfter(i) > peak) {
                    peak = r.requestedAfter(i);
                    peakAt = i;
                }
            QCOMPARE(s.peakBytes, peak);
            QCOMPARE(s.peakEvent, peakAt);
            if (r.doubleAllocs == 0)
                QCOMPARE(r.requestedAfter(hi) - r.requestedAfter(lo - 1), allocated - freed);
            const RangeSummary p = summarizeRange(r, events, first, last, &pyramid);
            QCOMPARE(p.peakEvent, s.peakEvent);
            QCOMPARE(p.peakBytes, s.peakBytes);
            QCOMPARE(p.allocatedBytes, s.allocatedBytes);
        }
        // The whole trace: its peak is the replay's requested peak; every traced alloc is counted.
        const RangeSummary all = summarizeRange(r, events, 0, n - 1);
        if (r.peakRequested.event.valid()) {
            QCOMPARE(all.peakBytes, r.peakRequested.bytes);
            QCOMPARE(all.peakEvent, peakEvent(r));
        }
        QCOMPARE(all.allocCount, static_cast<int64_t>(r.allocations.size()) - r.preexistingCount);
    }

    // CUDA-graph / MemPool private pools on tests/data/formats/pools.pickle (linear3 with
    // segments 2-7 in pool (1, 0), pool_id on their allocs only): the pool's segments come from
    // the dump's segment_pool_id, its allocations from pool_id or the segment they lie in (the
    // 1 MiB alloc of event 10 carries no pool id but lies in a pool segment). Numbers from the
    // file read with Python's pickle.
    void poolUsageOnAPoolFile()
    {
        const auto replay = replaySnapshot(readSnapshotFile(MEMSCOPE_TESTDATA_DIR "/formats/pools.pickle"));
        const Snapshot& s = *replay->snapshot;
        const DeviceReplay& d = replay->devices[0];
        const auto lives = segmentLives(s, s.devices[0]);
        QCOMPARE(std::count_if(lives.begin(), lives.end(), [](const SegmentLife& l) { return !l.pool.isDefault(); }), 6);
        const DevicePools pools = poolUsage(d, s.devices[0].events, lives);
        QCOMPARE(pools.pools.size(), size_t{1});
        const PoolUsage& p = pools.pools[0];
        QCOMPARE(p.id, (PoolId{1, 0}));
        QCOMPARE(p.number, 1);
        QVERIFY(p.graphCapture());
        QCOMPARE(p.segmentCount, int64_t{6});
        QCOMPARE(p.allocationCount, int64_t{9}); // 6 with pool_id, event 10 by its segment, 2 re-allocs after frees
        QCOMPARE(p.reservedAfter(-1), int64_t{0});
        QCOMPARE(p.reservedAfter(0), int64_t{2000683008});
        QCOMPARE(p.usedAfter(1), int64_t{2000000000});
        QCOMPARE(p.reservedAfter(12), int64_t{3439329280});
        QCOMPARE(p.usedAfter(12), int64_t{3434803008});
        QCOMPARE(p.usedAfter(18), int64_t{2234803008});
        QCOMPARE(p.reservedAfter(d.eventCount - 1), int64_t{3439329280});
        QCOMPARE(p.usedAfter(d.eventCount - 1), int64_t{3234803008});
        QCOMPARE(p.heldAfter(d.eventCount - 1), int64_t{204526272});
        QCOMPARE(p.peakReserved, int64_t{3439329280});
        QCOMPARE(pools.heldAfter(d.eventCount - 1), int64_t{204526272});
        // The default pool's 1 GB alloc at 0x7f075a000000 (event 14) is no pool's.
        const AllocationId plain = d.eventAllocation[14];
        QVERIFY(plain.valid());
        QVERIFY(pools.poolOf(plain) == nullptr);
        QVERIFY(pools.poolOf(d.eventAllocation[10]) == &p);
        // Pool bytes never exceed the device's totals.
        for (int64_t e = -1; e < d.eventCount; ++e) {
            QVERIFY(p.usedAfter(e) <= d.requestedAfter(e));
            QVERIFY(p.reservedAfter(e) <= d.reservedAfter(e));
        }
    }

    // On every file of tests/data/formats and the real recordings of tests/data/fields (a CUDA
    // graph's pool (1, 0), MemPool and torch.compile's cudagraph trees (0, 1); torch 2.11 writes
    // no pool_id on trace entries, only segment_pool_id at the dump): at the last event each
    // pool reserves exactly the dump's segments of its id and its live allocations are exactly
    // the dump's allocated blocks in them (requested bytes).
    void poolUsageMatchesTheDump_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<int>("pools");
        const QDir formats(QStringLiteral(MEMSCOPE_TESTDATA_DIR "/formats"));
        for (const QString& f :
             formats.entryList({QStringLiteral("*.pickle"), QStringLiteral("*.json")}, QDir::Files, QDir::Name))
            if (!f.endsWith(QLatin1String(".summary.json")) && f != QLatin1String("lfs_pointer.pickle"))
                QTest::newRow(qPrintable(f)) << formats.filePath(f) << (f == QLatin1String("pools.pickle") ? 1 : 0);
        const QDir fields(QStringLiteral(MEMSCOPE_TESTDATA_DIR "/fields"));
        for (const auto& [name, pools] : {std::pair{"fields_graph", 1}, std::pair{"fields_mempool", 1},
                                          std::pair{"fields_compile_ro", 1}, std::pair{"fields_metadata", 0}})
            QTest::newRow(name) << fields.filePath(QString::fromLatin1(name) + QStringLiteral(".pickle")) << pools;
    }
    void poolUsageMatchesTheDump()
    {
        QFETCH(QString, file);
        QFETCH(int, pools);
        const auto replay = replaySnapshot(readSnapshotFile(file.toStdString()));
        const Snapshot& s = *replay->snapshot;
        int poolsSeen = 0;
        for (size_t k = 0; k < s.devices.size(); ++k) {
            const DeviceReplay& d = replay->devices[k];
            const auto lives = segmentLives(s, s.devices[k]);
            const DevicePools found = poolUsage(d, s.devices[k].events, lives);
            std::map<std::pair<int64_t, int64_t>, int64_t> reserved, used;
            for (const Segment& seg : s.segments)
                if (seg.device == s.devices[k].device && (seg.poolId[0] || seg.poolId[1])) {
                    reserved[{seg.poolId[0], seg.poolId[1]}] += static_cast<int64_t>(seg.totalSize);
                    for (const Block& b : seg.blocks)
                        if (b.state != BlockState::Inactive)
                            used[{seg.poolId[0], seg.poolId[1]}] += static_cast<int64_t>(b.requestedSize);
                }
            QCOMPARE(found.pools.size(), reserved.size());
            for (const PoolUsage& p : found.pools) {
                QCOMPARE(p.reservedAfter(d.eventCount - 1), (reserved[{p.id.first, p.id.second}]));
                QCOMPARE(p.usedAfter(d.eventCount - 1), (used[{p.id.first, p.id.second}]));
                QVERIFY(p.heldAfter(d.eventCount - 1) >= 0);
            }
            // Pool memory nobody uses lies between the requested total and the reserved line.
            for (int64_t e = -1; e < d.eventCount; ++e)
                QVERIFY2(d.requestedAfter(e) + found.heldAfter(e) <= d.reservedAfter(e),
                         qPrintable(QStringLiteral("event %1: requested %2 + held %3 > reserved %4")
                                        .arg(e)
                                        .arg(d.requestedAfter(e))
                                        .arg(found.heldAfter(e))
                                        .arg(d.reservedAfter(e))));
            poolsSeen += static_cast<int>(found.pools.size());
        }
        QCOMPARE(poolsSeen, pools);
    }

    // user_metadata stretches and annotate markers on tests/data/formats/annotate_metadata.pickle
    // (release with user_metadata = JSON {"step": i // 10} and two annotate entries); spans
    // and markers from the file read with Python's pickle. A file without metadata has none.
    void metadataSpansOfAFile()
    {
        auto s = readSnapshotFile(MEMSCOPE_TESTDATA_DIR "/formats/annotate_metadata.pickle");
        QStringList got;
        for (const MetadataSpan& m : metadataSpans(*s, s->devices[0].events))
            got << QStringLiteral("%1%2-%3:%4")
                       .arg(m.marker ? QStringLiteral("marker ") : QString())
                       .arg(m.firstEvent)
                       .arg(m.lastEvent)
                       .arg(QString::fromStdString(std::string(s->str(m.text))));
        QCOMPARE(got.join(QLatin1Char('|')),
                 QStringLiteral("0-10:{\"step\": 0, \"phase\": \"train\"}|marker 6-6:{\"marker\": \"step 5\"}|"
                                "11-20:{\"step\": 1, \"phase\": \"train\"}|21-31:{\"step\": 2, \"phase\": \"train\"}|"
                                "marker 22-22:{\"marker\": \"step 20\"}|32-40:{\"step\": 3, \"phase\": \"train\"}"));
        // The real recording: _set_memory_metadata per phase, plain and JSON text; backward runs
        // on autograd's thread, whose events carry no metadata, so its text shows at its edges.
        auto real = readSnapshotFile(MEMSCOPE_TESTDATA_DIR "/fields/fields_metadata.pickle");
        const auto spans = metadataSpans(*real, real->devices[0].events);
        QCOMPARE(spans.size(), size_t{16});
        QCOMPARE(spans[0].firstEvent, int64_t{29});
        QCOMPARE(spans[0].lastEvent, int64_t{74});
        QCOMPARE(real->str(spans[0].text), std::string_view("step 0 forward"));
        QCOMPARE(spans[3].firstEvent, int64_t{236});
        QCOMPARE(spans[3].lastEvent, int64_t{420});
        QCOMPARE(real->str(spans[4].text), std::string_view("{\"step\": 1, \"phase\": \"forward\"}"));
        QVERIFY(std::none_of(spans.begin(), spans.end(), [](const MetadataSpan& m) { return m.marker; }));
        auto plain = readSnapshotFile(MEMSCOPE_SAMPLES_DIR "/release.pickle");
        QVERIFY(metadataSpans(*plain, plain->devices[0].events).empty());
    }
};

QTEST_GUILESS_MAIN(TstQuery)
#include "tst_query.moc"
