#include "replay/minmax_pyramid.h"

#include <algorithm>

namespace memscope {

void MinMaxPyramid::Running::take(const Block& x)
{
    if (b.minIndex < 0 || x.minValue < b.minValue || (x.minValue == b.minValue && x.minIndex < b.minIndex)) {
        b.minIndex = x.minIndex;
        b.minValue = x.minValue;
    }
    if (b.maxIndex < 0 || x.maxValue > b.maxValue || (x.maxValue == b.maxValue && x.maxIndex < b.maxIndex)) {
        b.maxIndex = x.maxIndex;
        b.maxValue = x.maxValue;
    }
}

MinMaxPyramid::MinMaxPyramid(const std::vector<int64_t>* values) : m_values(values) { build(); }

MinMaxPyramid::MinMaxPyramid(const CompactCurve* values) : m_compact(values) { build(); }

void MinMaxPyramid::build()
{
    const int64_t n = size();
    for (int l = 1; blockSizeAt(l) <= n; ++l) {
        const int64_t blockSize = blockSizeAt(l);
        const int64_t fan = l == 1 ? blockSize : int64_t{1} << kShift;
        const int64_t blocks = n / blockSize; // only whole blocks
        std::vector<Block> level(static_cast<size_t>(blocks));
        for (int64_t b = 0; b < blocks; ++b) {
            Running r;
            for (int64_t c = 0; c < fan; ++c) {
                if (m_levels.empty()) {
                    const int64_t i = b * fan + c;
                    const int64_t x = value(i);
                    r.take({i, i, x, x});
                } else {
                    r.take(m_levels.back()[static_cast<size_t>(b * fan + c)]);
                }
            }
            level[static_cast<size_t>(b)] = r.b;
        }
        m_levels.push_back(std::move(level));
    }
}

void MinMaxPyramid::scan(int level, int64_t first, int64_t last, Running& r) const
{
    if (first >= last)
        return;
    if (level == 0) {
        for (int64_t i = first; i < last; ++i) {
            const int64_t x = value(i);
            r.take({i, i, x, x});
        }
        return;
    }
    const std::vector<Block>& blocks = m_levels[static_cast<size_t>(level - 1)];
    const int64_t blockSize = blockSizeAt(level);
    const int64_t firstBlock = (first + blockSize - 1) / blockSize;
    const int64_t lastBlock = std::min(last / blockSize, static_cast<int64_t>(blocks.size()));
    if (firstBlock >= lastBlock) {
        scan(level - 1, first, last, r);
        return;
    }
    scan(level - 1, first, firstBlock * blockSize, r);
    for (int64_t b = firstBlock; b < lastBlock; ++b)
        r.take(blocks[static_cast<size_t>(b)]);
    scan(level - 1, lastBlock * blockSize, last, r);
}

MinMaxPyramid::Extremes MinMaxPyramid::query(int64_t first, int64_t last) const
{
    first = std::max<int64_t>(first, 0);
    last = std::min<int64_t>(last, size());
    if (first >= last)
        return {};
    int level = static_cast<int>(m_levels.size());
    while (level > 0 && blockSizeAt(level) > last - first)
        --level;
    Running r;
    scan(level, first, last, r);
    return {r.b.minIndex, r.b.maxIndex};
}

} // namespace memscope
