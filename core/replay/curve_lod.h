#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace memscope {

/*
 * Levels of detail for drawing a step curve of millions of events in a few thousand
 * points: the min and max of the curve over any range of events, per pixel.
 *
 *   curve[i] = value after event i (it holds on x in [i, i+1)); atStart = value before
 *   event 0 (x < 0). Level k stores the min/max of each aligned block of 128 << k
 *   events. A range is answered from at most two partial blocks of raw values plus
 *   O(log n) stored blocks, so a 2000-pixel view costs well under a millisecond at any
 *   zoom, and the levels take n/4 bytes per curve (2.5 MB at 10M events).
 *
 * Works for any int64 step curve: DeviceReplay::requested and ::reserved,
 * DeviceAttribution::categoryBytes[c], a stacked sum the caller made. The curve must
 * outlive the CurveLod (it keeps a view of it).
 */
class CurveLod {
public:
    struct Range {
        int64_t min = 0;
        int64_t max = 0;
    };
    static constexpr int64_t kBlock = 128;

    CurveLod() = default;
    CurveLod(std::span<const int64_t> curve, int64_t atStart);

    int64_t size() const { return static_cast<int64_t>(m_curve.size()); }
    int64_t atStart() const { return m_atStart; }

    // Min and max over events [first, last] (clamped to the curve); first < 0 includes the
    // value before the first event. An empty range gives the value at `first`.
    Range range(int64_t first, int64_t last) const;

    // One Range per pixel: x in [x0, x1) (event units: event i spans [i, i+1)) split into
    // `pixels` equal buckets; a bucket narrower than an event gives that event's value.
    void query(double x0, double x1, int pixels, std::vector<Range>& out) const;

    // One Range per bucket [edges[j], edges[j+1]) of event indices (non-decreasing); for a
    // time axis, edges come from a lower_bound of each pixel's time in EventTable::timeUs.
    // A bucket with no event gives the value in force there.
    void query(std::span<const int64_t> edges, std::vector<Range>& out) const;

    size_t bytes() const;

private:
    int64_t valueAt(int64_t i) const;

    std::span<const int64_t> m_curve;
    int64_t m_atStart = 0;
    std::vector<std::vector<Range>> m_levels; // m_levels[k][b]: events [b, b+1) * (kBlock << k)
};

} // namespace memscope
