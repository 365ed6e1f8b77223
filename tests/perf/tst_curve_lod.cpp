// CurveLod (core/replay/curve_lod.h): per-pixel min/max equals a plain scan, at every zoom.
#include "replay/curve_lod.h"
#include "replay/replay.h"
#include "snapshot/snapshot_reader.h"

#include <QTest>

#include <algorithm>
#include <random>

using namespace memscope;

namespace {
CurveLod::Range brute(const std::vector<int64_t>& v, int64_t atStart, int64_t first, int64_t last)
{
    const int64_t n = static_cast<int64_t>(v.size());
    auto at = [&](int64_t i) { return i < 0 ? atStart : v[static_cast<size_t>(std::min(i, n - 1))]; };
    if (last < first || last < 0 || first >= n)
        return {at(std::min(first, n - 1)), at(std::min(first, n - 1))};
    CurveLod::Range r{INT64_MAX, INT64_MIN};
    for (int64_t i = std::max<int64_t>(first, -1); i <= std::min(last, n - 1); ++i) {
        r.min = std::min(r.min, at(i));
        r.max = std::max(r.max, at(i));
    }
    return r;
}
} // namespace

class TestCurveLod : public QObject {
    Q_OBJECT
private slots:
    void rangesMatchAScan_data()
    {
        QTest::addColumn<int>("n");
        for (int n : {0, 1, 5, 127, 128, 129, 1000, 4096, 100003})
            QTest::newRow(qPrintable(QString::number(n))) << n;
    }
    void rangesMatchAScan()
    {
        QFETCH(int, n);
        std::mt19937_64 rng(static_cast<uint64_t>(n) + 1);
        std::vector<int64_t> v(static_cast<size_t>(n));
        int64_t cur = 1000;
        for (int64_t& x : v)
            x = cur += static_cast<int64_t>(rng() % 2001) - 1000;
        const CurveLod lod(v, 7);
        for (int q = 0; q < 3000; ++q) {
            const int64_t a = static_cast<int64_t>(rng() % static_cast<uint64_t>(n + 3)) - 2;
            const int64_t len = q % 3 == 0 ? static_cast<int64_t>(rng() % 5) : static_cast<int64_t>(rng() % static_cast<uint64_t>(n + 3));
            const CurveLod::Range got = lod.range(a, a + len);
            const CurveLod::Range want = brute(v, 7, a, a + len);
            QCOMPARE(got.min, want.min);
            QCOMPARE(got.max, want.max);
        }
        // Pixels: every zoom, including buckets narrower than an event.
        std::vector<CurveLod::Range> out;
        for (double width : {double(n) + 10, double(n) / 7 + 1, 3.0, 0.25}) {
            const double x0 = -2.5;
            lod.query(x0, x0 + width, 200, out);
            QCOMPARE(out.size(), size_t(200));
            const double w = width / 200;
            for (int j = 0; j < 200; ++j) {
                const int64_t first = static_cast<int64_t>(std::floor(x0 + w * j));
                const int64_t last = std::max(first, static_cast<int64_t>(std::ceil(x0 + w * (j + 1))) - 1);
                const CurveLod::Range want = brute(v, 7, first, last);
                QCOMPARE(out[size_t(j)].min, want.min);
                QCOMPARE(out[size_t(j)].max, want.max);
            }
        }
    }

    // On a real replay the whole-trace view's top pixel is the requested peak.
    void peakIsTheTopPixel()
    {
        auto r = replaySnapshot(readSnapshotFile(std::string(MEMSCOPE_SAMPLES_DIR) + "/many_small.pickle"));
        const DeviceReplay& d = r->devices.at(0);
        const CurveLod lod(d.requested, d.requestedAtStart);
        std::vector<CurveLod::Range> out;
        lod.query(0, static_cast<double>(d.eventCount), 1500, out);
        int64_t top = INT64_MIN;
        for (const auto& p : out)
            top = std::max(top, p.max);
        QCOMPARE(top, d.peakRequested.bytes);
        const std::vector<int64_t> edges{-1, 0, d.eventCount / 2, d.eventCount};
        lod.query(edges, out);
        QCOMPARE(out.size(), size_t(3));
        QCOMPARE(out[0].min, d.requestedAtStart);
        QCOMPARE(std::max(out[1].max, out[2].max), d.peakRequested.bytes);
    }
};

QTEST_GUILESS_MAIN(TestCurveLod)
#include "tst_curve_lod.moc"
