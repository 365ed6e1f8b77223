// CompactCurve (core/common/compact_curve.h): every value reads back exactly, in blocks
// that fit 32-bit differences and in blocks that must keep values whole; and the per-category
// curves of a real recording equal the running sums of its allocations.
#include "attribute/attributor.h"
#include "common/compact_curve.h"
#include "replay/replay.h"
#include "snapshot/snapshot_reader.h"

#include <QTest>

#include <algorithm>
#include <random>

using namespace memscope;

class TestCompactCurve : public QObject {
    Q_OBJECT
private slots:
    void valuesReadBack_data()
    {
        QTest::addColumn<int>("n");
        QTest::addColumn<qlonglong>("step"); // largest move between neighbours
        QTest::addColumn<bool>("expectWide");
        QTest::newRow("empty") << 0 << qlonglong(1) << false;
        QTest::newRow("one") << 1 << qlonglong(1) << false;
        QTest::newRow("block edge") << int(CompactCurve::kBlock) << qlonglong(1 << 20) << false;
        QTest::newRow("block edge + 1") << int(CompactCurve::kBlock + 1) << qlonglong(1 << 20) << false;
        QTest::newRow("bytes, narrow") << 100003 << (qlonglong(4) << 20) << false;
        QTest::newRow("GiB moves, wide blocks") << 100003 << (qlonglong(3) << 30) << true;
    }
    void valuesReadBack()
    {
        QFETCH(int, n);
        QFETCH(qlonglong, step);
        QFETCH(bool, expectWide);
        std::mt19937_64 rng(11);
        std::vector<int64_t> want;
        int64_t v = int64_t(5) << 40; // far from 0: the base matters
        CompactCurve c;
        c.reserve(static_cast<size_t>(n) / 2); // reserving short must not lose anything
        for (int i = 0; i < n; ++i) {
            v += static_cast<int64_t>(rng() % static_cast<uint64_t>(2 * step + 1)) - step;
            want.push_back(v);
            c.push_back(v);
            QCOMPARE(c[static_cast<size_t>(i)], v); // readable at once
        }
        QCOMPARE(c.size(), want.size());
        for (size_t i = 0; i < want.size(); ++i)
            if (c[i] != want[i])
                QFAIL(qPrintable(QStringLiteral("value %1: %2, expected %3").arg(i).arg(c[i]).arg(want[i])));
        QVERIFY(std::equal(c.begin(), c.end(), want.begin(), want.end()));
        QCOMPARE(c.wideBlocks() > 0, expectWide);
        c.shrinkToFit();
        for (size_t i = 0; i < want.size(); ++i)
            QCOMPARE(c[i], want[i]);
        if (!expectWide && n > 0) // about half a vector<int64_t>
            QVERIFY(c.bytes() <= want.size() * sizeof(int32_t) + (want.size() / CompactCurve::kBlock + 1) * 32);
    }
    // read() copies any stretch, across block edges and wide blocks, as indexing gives it.
    void readCopiesAnyStretch_data() { valuesReadBack_data(); }
    void readCopiesAnyStretch()
    {
        QFETCH(int, n);
        QFETCH(qlonglong, step);
        std::mt19937_64 rng(13);
        CompactCurve c;
        int64_t v = int64_t(7) << 40;
        for (int i = 0; i < n; ++i)
            c.push_back(v += static_cast<int64_t>(rng() % static_cast<uint64_t>(2 * step + 1)) - step);
        std::vector<int64_t> out(c.size() + 1, 42);
        const size_t sz = c.size();
        for (int q = 0; q < 200; ++q) {
            const size_t first = sz ? static_cast<size_t>(rng() % sz) : 0;
            const size_t count = q == 0 ? sz - first : static_cast<size_t>(rng() % (sz - first + 1));
            std::fill(out.begin(), out.end(), 42);
            c.read(first, count, out.data());
            for (size_t k = 0; k < count; ++k)
                QCOMPARE(out[k], c[first + k]);
            QCOMPARE(out[count], int64_t(42)); // nothing past the stretch
        }
    }
    // The replay's reserved peak and the attribution's iteration peaks: the first index of the
    // highest value over any stretch, wide blocks and block edges included, as a scan finds it.
    void firstMaxIndexMatchesScan_data() { valuesReadBack_data(); }
    void firstMaxIndexMatchesScan()
    {
        QFETCH(int, n);
        QFETCH(qlonglong, step);
        std::mt19937_64 rng(14);
        CompactCurve c;
        int64_t v = int64_t(7) << 40;
        for (int i = 0; i < n; ++i)
            c.push_back(v += static_cast<int64_t>(rng() % static_cast<uint64_t>(2 * step + 1)) - step);
        const size_t sz = c.size();
        for (int q = 0; q < 200; ++q) {
            const size_t first = sz ? static_cast<size_t>(rng() % sz) : 0;
            const size_t last = q == 0 ? sz : first + static_cast<size_t>(rng() % (sz - first + 1));
            size_t want = first;
            for (size_t k = first; k < last; ++k)
                if (c[k] > c[want])
                    want = k;
            QCOMPARE(c.firstMaxIndex(first, last), want);
        }
        QCOMPARE(c.firstMaxIndex(3, 3), size_t(3)); // an empty stretch: its start

        // Ties keep the first: a saw whose highest value repeats every 7 events, across blocks.
        CompactCurve saw;
        for (int i = 0; i < 3 * static_cast<int>(CompactCurve::kBlock); ++i)
            saw.push_back(i % 7);
        QCOMPARE(saw.firstMaxIndex(0, saw.size()), size_t(6));
        QCOMPARE(saw.firstMaxIndex(CompactCurve::kBlock - 2, saw.size()),
                 CompactCurve::kBlock - 2 + 6 - (CompactCurve::kBlock - 2) % 7);
    }
    // append() (whole blocks in one pass, what the attribution uses) gives the curve
    // push_back gives: same values, same blocks kept wide; chunks start mid-block too.
    void appendEqualsPushBack_data() { valuesReadBack_data(); }
    void appendEqualsPushBack()
    {
        QFETCH(int, n);
        QFETCH(qlonglong, step);
        QFETCH(bool, expectWide);
        std::mt19937_64 rng(12);
        std::vector<int64_t> want;
        int64_t v = -(int64_t(3) << 40);
        for (int i = 0; i < n; ++i) {
            v += static_cast<int64_t>(rng() % static_cast<uint64_t>(2 * step + 1)) - step;
            want.push_back(v);
        }
        CompactCurve pushed;
        for (int64_t x : want)
            pushed.push_back(x);
        for (size_t chunkSize : {size_t(1), size_t(777), CompactCurve::kBlock, 3 * CompactCurve::kBlock + 5}) {
            CompactCurve appended;
            appended.reserve(want.size());
            for (size_t at = 0; at < want.size(); at += chunkSize)
                appended.append(want.data() + at, std::min(chunkSize, want.size() - at));
            QCOMPARE(appended.size(), want.size());
            for (size_t i = 0; i < want.size(); ++i)
                if (appended[i] != want[i])
                    QFAIL(qPrintable(QStringLiteral("chunks of %1, value %2: %3, expected %4")
                                         .arg(chunkSize)
                                         .arg(i)
                                         .arg(appended[i])
                                         .arg(want[i])));
            QCOMPARE(appended.wideBlocks(), pushed.wideBlocks());
            QCOMPARE(appended.wideBlocks() > 0, expectWide);
        }
    }
    // partitionPoint (and partitionPointInBlock) on a non-decreasing curve agrees with
    // std::partition_point over its values: runs of equal values across block edges, a wide
    // block (a jump of 2^40), thresholds below, between, on and above the values.
    void partitionPointMatchesStd()
    {
        std::mt19937_64 rng(13);
        std::vector<int64_t> values;
        int64_t v = -1000;
        for (size_t i = 0; i < 3 * CompactCurve::kBlock + 100; ++i) {
            if (i == CompactCurve::kBlock + 7)
                v += int64_t(1) << 40; // that block keeps its values whole
            else if (rng() % 3 == 0)
                v += static_cast<int64_t>(rng() % 5);
            values.push_back(v);
        }
        CompactCurve c;
        c.append(values.data(), values.size());
        QVERIFY(c.wideBlocks() > 0);
        QCOMPARE(c.blockCount(), size_t(4));
        std::vector<int64_t> thresholds{values.front() - 1, values.back() + 1, values[CompactCurve::kBlock],
                                        values[CompactCurve::kBlock + 7], values[2 * CompactCurve::kBlock - 1]};
        for (int k = 0; k < 300; ++k)
            thresholds.push_back(values[rng() % values.size()] + static_cast<int64_t>(rng() % 3) - 1);
        for (int64_t x : thresholds) {
            auto less = [x](int64_t value) { return value < x; };
            const size_t want = static_cast<size_t>(std::partition_point(values.begin(), values.end(), less) - values.begin());
            QCOMPARE(c.partitionPoint(less), want);
            const size_t block = want == 0 ? 0 : (want - 1) >> CompactCurve::kShift;
            QCOMPARE(c.partitionPointInBlock(block, less), want);
        }
        QCOMPARE(CompactCurve().partitionPoint([](int64_t) { return true; }), size_t(0));
    }
    // A value 2^31 away from its block's first value, either side, and the extremes of int64.
    void edgesOfTheNarrowRange()
    {
        const std::vector<int64_t> values = {
            0, INT32_MAX, INT32_MIN, int64_t(INT32_MAX) + 1, int64_t(INT32_MIN) - 1, INT64_MAX, INT64_MIN, 7, -7};
        CompactCurve c;
        for (int64_t v : values)
            c.push_back(v);
        for (size_t i = 0; i < values.size(); ++i)
            QCOMPARE(c[i], values[i]);
        QCOMPARE(c.wideBlocks(), size_t(1));
        // After a wide block the next starts narrow again.
        for (size_t i = values.size(); i < CompactCurve::kBlock + 10; ++i)
            c.push_back(static_cast<int64_t>(i));
        QCOMPARE(c.wideBlocks(), size_t(1));
        QCOMPARE(c[CompactCurve::kBlock + 9], int64_t(CompactCurve::kBlock + 9));
        QCOMPARE(c[1], int64_t(INT32_MAX));
        // The same through append, a whole block and then a block that stays narrow.
        std::vector<int64_t> block(CompactCurve::kBlock, 0);
        std::copy(values.begin(), values.end(), block.begin());
        CompactCurve a;
        a.append(block.data(), block.size());
        for (size_t i = 0; i < values.size(); ++i)
            QCOMPARE(a[i], values[i]);
        QCOMPARE(a.wideBlocks(), size_t(1));
        std::vector<int64_t> edge(CompactCurve::kBlock, 0); // base 0: both edges of int32 fit
        edge[1] = INT32_MAX;
        edge[2] = INT32_MIN;
        a.append(edge.data(), edge.size());
        QCOMPARE(a.wideBlocks(), size_t(1));
        QCOMPARE(a[CompactCurve::kBlock + 1], int64_t(INT32_MAX));
        QCOMPARE(a[CompactCurve::kBlock + 2], int64_t(INT32_MIN));
        edge[2] = int64_t(INT32_MIN) - 1; // one past: this block is kept whole
        a.append(edge.data(), edge.size());
        QCOMPARE(a.wideBlocks(), size_t(2));
        QCOMPARE(a[2 * CompactCurve::kBlock + 2], int64_t(INT32_MIN) - 1);
    }
    // The attribution's curves on a real recording: categories sum to the requested curve.
    void realCurvesAddUp()
    {
        auto snap = readSnapshotFile(MEMSCOPE_SAMPLES_DIR "/many_small.pickle");
        auto replay = replaySnapshot(snap);
        auto a = attribute(replay);
        const DeviceReplay& d = replay->devices.at(0);
        const DeviceAttribution& da = a->devices.at(0);
        for (const CompactCurve& curve : da.categoryBytes)
            QCOMPARE(curve.size(), static_cast<size_t>(d.eventCount));
        for (int64_t i = 0; i < d.eventCount; ++i) {
            int64_t sum = 0;
            for (const CompactCurve& curve : da.categoryBytes)
                sum += curve[static_cast<size_t>(i)];
            if (sum != d.requested[static_cast<size_t>(i)])
                QFAIL(qPrintable(QStringLiteral("event %1: categories %2, requested %3")
                                     .arg(i)
                                     .arg(sum)
                                     .arg(d.requested[static_cast<size_t>(i)])));
        }
    }
};

QTEST_GUILESS_MAIN(TestCompactCurve)
#include "tst_compact_curve.moc"
