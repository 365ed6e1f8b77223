// MinMaxPyramid (core/replay/minmax_pyramid.h): the extremes of any event range equal a plain
// scan's, at every zoom, on synthetic and real curves.
#include "replay/minmax_pyramid.h"
#include "replay/replay.h"
#include "snapshot/snapshot_reader.h"

#include <QTest>

#include <random>

using namespace memscope;

namespace {

MinMaxPyramid::Extremes brute(const std::vector<int64_t>& v, int64_t first, int64_t last)
{
    MinMaxPyramid::Extremes e;
    for (int64_t i = std::max<int64_t>(first, 0); i < std::min<int64_t>(last, static_cast<int64_t>(v.size())); ++i) {
        if (e.minIndex < 0 || v[static_cast<size_t>(i)] < v[static_cast<size_t>(e.minIndex)])
            e.minIndex = i;
        if (e.maxIndex < 0 || v[static_cast<size_t>(i)] > v[static_cast<size_t>(e.maxIndex)])
            e.maxIndex = i;
    }
    return e;
}

} // namespace

class TestMinMaxPyramid : public QObject {
    Q_OBJECT
private slots:
    void rangesMatchAScan_data()
    {
        QTest::addColumn<int>("n");
        for (int n : {0, 1, 5, 15, 16, 17, 31, 32, 33, 255, 256, 257, 511, 512, 513, 1000, 4096, 8191, 8192, 8193, 100003})
            QTest::newRow(qPrintable(QString::number(n))) << n;
    }
    void rangesMatchAScan()
    {
        QFETCH(int, n);
        std::mt19937_64 rng(static_cast<uint64_t>(n) + 1);
        std::vector<int64_t> v(static_cast<size_t>(n));
        int64_t cur = 1000;
        for (int64_t& x : v)
            x = cur += static_cast<int64_t>(rng() % 21) - 10; // small steps: many ties
        const MinMaxPyramid p(&v);
        QCOMPARE(p.size(), static_cast<int64_t>(n));
        for (int q = 0; q < 3000; ++q) {
            const int64_t a = static_cast<int64_t>(rng() % static_cast<uint64_t>(n + 3)) - 2;
            const int64_t len = q % 3 == 0 ? static_cast<int64_t>(rng() % 5)
                                           : static_cast<int64_t>(rng() % static_cast<uint64_t>(n + 3));
            const MinMaxPyramid::Extremes got = p.query(a, a + len);
            const MinMaxPyramid::Extremes want = brute(v, a, a + len);
            QCOMPARE(got.minIndex, want.minIndex);
            QCOMPARE(got.maxIndex, want.maxIndex);
        }
    }

    // On a real replay the whole-trace view's highest pixel is the requested peak, at its event.
    void peakIsTheTopPixel()
    {
        auto r = replaySnapshot(readSnapshotFile(std::string(MEMSCOPE_SAMPLES_DIR) + "/many_small.pickle"));
        const DeviceReplay& d = r->devices.at(0);
        const MinMaxPyramid p(&d.requested);
        const int64_t n = d.eventCount;
        int64_t top = INT64_MIN, topEvent = -1;
        for (int j = 0; j < 1500; ++j) {
            const MinMaxPyramid::Extremes e = p.query(n * j / 1500, std::max(n * (j + 1) / 1500, n * j / 1500 + 1));
            if (d.requested[static_cast<size_t>(e.maxIndex)] > top) {
                top = d.requested[static_cast<size_t>(e.maxIndex)];
                topEvent = e.maxIndex;
            }
        }
        QCOMPARE(top, d.peakRequested.bytes);
        QCOMPARE(topEvent, d.peakRequested.event.value);
    }
};

QTEST_GUILESS_MAIN(TestMinMaxPyramid)
#include "tst_minmax_pyramid.moc"
