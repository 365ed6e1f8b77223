#pragma once

#include "common/compact_curve.h"

#include <cstdint>
#include <vector>

namespace memscope {

/*
 * Where a curve is lowest and highest over any event range, fast enough to ask once per
 * screen pixel on every frame: a pyramid of blocks (32 events, 512, 8192, …) storing the
 * index of each block's minimum and maximum. A range query walks whole blocks at the
 * highest level that fits and finer levels only at its two ends: O(16 · levels + 32).
 * The first level groups 32 events, not 16: its blocks (32 bytes each) are nearly all of
 * the pyramid's memory, 1 byte an event instead of 2, for ~32 more curve reads a query.
 * Each block keeps its extremes' values beside their indexes, so a query compares blocks
 * without reading the curve at scattered indexes (a cache miss each at 10M events).
 * Ties keep the first index. Holds a pointer to the values, which must outlive it.
 */
class MinMaxPyramid {
public:
    struct Extremes {
        int64_t minIndex = -1;
        int64_t maxIndex = -1;
    };

    MinMaxPyramid() = default;
    explicit MinMaxPyramid(const std::vector<int64_t>* values);
    explicit MinMaxPyramid(const CompactCurve* values);

    // Extremes over [first, last); {-1, -1} when the range is empty.
    Extremes query(int64_t first, int64_t last) const;
    int64_t size() const
    {
        return m_values ? static_cast<int64_t>(m_values->size()) : m_compact ? static_cast<int64_t>(m_compact->size()) : 0;
    }

private:
    static constexpr int kFirstShift = 5; // 32 events per first-level block
    static constexpr int kShift = 4; // 16 children per block above it
    // Events per block at level >= 1.
    static constexpr int64_t blockSizeAt(int level) { return int64_t{1} << (kFirstShift + kShift * (level - 1)); }
    struct Block {
        int64_t minIndex, maxIndex;
        int64_t minValue, maxValue;
    };
    struct Running {
        Block b{-1, -1, 0, 0};
        void take(const Block& x);
    };
    void scan(int level, int64_t first, int64_t last, Running& r) const;
    void build();
    int64_t value(int64_t i) const
    {
        return m_values ? (*m_values)[static_cast<size_t>(i)] : (*m_compact)[static_cast<size_t>(i)];
    }

    const std::vector<int64_t>* m_values = nullptr; // one of these two
    const CompactCurve* m_compact = nullptr;
    std::vector<std::vector<Block>> m_levels; // m_levels[l - 1][b]: extremes of block b at level l
};

} // namespace memscope
