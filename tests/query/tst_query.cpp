// core/query: segment lifetimes, the allocator state at an event, free space and its one
// fragmentation definition, on real recordings.
#include "query/allocator_state.h"
#include "query/free_space.h"
#include "query/point_report.h"
#include "query/range_summary.h"
#include "query/segment_lives.h"
#include "replay/replay.h"
#include "snapshot/annotation_spans.h"
#include "snapshot/snapshot_reader.h"

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
    void lastEventMatchesDumpTime_data() { allocatorState_data(); }
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
        if (reserved == 0)
            QSKIP("no dump-time segments");
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
};

QTEST_GUILESS_MAIN(TstQuery)
#include "tst_query.moc"
