#pragma once

#include "replay/chunked_series.h"

#include <array>
#include <cstdint>

namespace memscope {

/*
 * MinMaxPyramid (replay/minmax_pyramid.h) for a curve that grows: the same blocks (32 events
 * at the first level, 16 children above), the same answers (index of the first minimum and
 * of the first maximum over any range), but built as values arrive. Appending a value costs
 * O(1) amortised: it joins the open first-level block, and a block that fills is pushed to
 * its level and joins the open block of the level above. Each level is a ChunkedSeries, so a
 * View (the values and every level, as published) is taken without copying and answers
 * queries on a reader thread while the writer goes on appending.
 *
 * The levels are the whole run's overview: 32 bytes per 32 events (1 byte an event) at the
 * first level, 1/16 of that above. The values themselves (level 0) may be evicted before an
 * index (the bounded mode): a query over evicted values answers from whole blocks only, so
 * its extremes are exact for the blocks and approximate within 32 events at its two ends.
 */
class GrowingPyramid {
public:
    static constexpr int kFirstShift = 5;
    static constexpr int kShift = 4;
    static constexpr int kMaxLevels = 8; // 32 · 16^7 events: 8.6e9
    struct Block {
        int64_t minIndex, maxIndex;
        int64_t minValue, maxValue;
    };
    struct Extremes {
        int64_t minIndex = -1;
        int64_t maxIndex = -1;
        int64_t minValue = 0;
        int64_t maxValue = 0;
    };

    class View {
    public:
        Extremes query(int64_t first, int64_t last) const;
        int64_t size() const { return static_cast<int64_t>(m_values.size()); }
        const ChunkedSeries<int64_t>::View& values() const { return m_values; }

    private:
        friend class GrowingPyramid;
        struct Running;
        void scan(int level, int64_t first, int64_t last, Running& r) const;
        ChunkedSeries<int64_t>::View m_values;
        std::array<ChunkedSeries<Block>::View, kMaxLevels> m_levels; // [l - 1]: level l
        int m_levelCount = 0;
    };

    void push_back(int64_t v);
    int64_t size() const { return static_cast<int64_t>(m_values.size()); }
    int64_t operator[](size_t i) const { return m_values[i]; }
    const ChunkedSeries<int64_t>& values() const { return m_values; }
    void evictValuesBefore(size_t i) { m_values.evictBefore(i); }
    View view() const;
    size_t heldBytes() const;

private:
    static constexpr int64_t blockSizeAt(int level) { return int64_t{1} << (kFirstShift + kShift * (level - 1)); }
    void close(int level, const Block& b);

    ChunkedSeries<int64_t> m_values;
    std::array<ChunkedSeries<Block>, kMaxLevels> m_levels;
    std::array<Block, kMaxLevels> m_open{}; // the open block of each level
    std::array<int64_t, kMaxLevels> m_openCount{};
};

} // namespace memscope
