#include "replay/growing_pyramid.h"

#include <algorithm>

namespace memscope {

namespace {

// Ties keep the first index, as MinMaxPyramid does.
void take(GrowingPyramid::Block& b, bool empty, const GrowingPyramid::Block& x)
{
    if (empty || x.minValue < b.minValue || (x.minValue == b.minValue && x.minIndex < b.minIndex)) {
        b.minIndex = x.minIndex;
        b.minValue = x.minValue;
    }
    if (empty || x.maxValue > b.maxValue || (x.maxValue == b.maxValue && x.maxIndex < b.maxIndex)) {
        b.maxIndex = x.maxIndex;
        b.maxValue = x.maxValue;
    }
}

} // namespace

struct GrowingPyramid::View::Running {
    Block b{-1, -1, 0, 0};
    void add(const Block& x) { take(b, b.minIndex < 0, x); }
};

void GrowingPyramid::push_back(int64_t v)
{
    const int64_t i = size();
    m_values.push_back(v);
    const Block x{i, i, v, v};
    take(m_open[0], m_openCount[0] == 0, x);
    if (++m_openCount[0] == blockSizeAt(1))
        close(1, m_open[0]);
}

void GrowingPyramid::close(int level, const Block& b)
{
    const size_t l = static_cast<size_t>(level - 1);
    m_levels[l].push_back(b);
    m_openCount[l] = 0;
    if (level >= kMaxLevels)
        return;
    take(m_open[l + 1], m_openCount[l + 1] == 0, b);
    if (++m_openCount[l + 1] == (int64_t{1} << kShift))
        close(level + 1, m_open[l + 1]);
}

GrowingPyramid::View GrowingPyramid::view() const
{
    View v;
    v.m_values = m_values.view();
    for (int l = 0; l < kMaxLevels && !m_levels[static_cast<size_t>(l)].empty(); ++l) {
        v.m_levels[static_cast<size_t>(l)] = m_levels[static_cast<size_t>(l)].view();
        v.m_levelCount = l + 1;
    }
    return v;
}

size_t GrowingPyramid::heldBytes() const
{
    size_t total = m_values.heldBytes();
    for (const auto& l : m_levels)
        total += l.heldBytes();
    return total;
}

void GrowingPyramid::View::scan(int level, int64_t first, int64_t last, Running& r) const
{
    if (first >= last)
        return;
    if (level == 0) {
        for (int64_t i = first; i < last; ++i) {
            if (m_values.has(static_cast<size_t>(i))) {
                const int64_t x = m_values[static_cast<size_t>(i)];
                r.add({i, i, x, x});
                continue;
            }
            // Evicted detail: the whole first-level block that holds i stands for it.
            const int64_t b = i >> kFirstShift;
            if (m_levelCount > 0 && b < static_cast<int64_t>(m_levels[0].size()))
                r.add(m_levels[0][static_cast<size_t>(b)]);
            i = ((b + 1) << kFirstShift) - 1;
        }
        return;
    }
    const auto& blocks = m_levels[static_cast<size_t>(level - 1)];
    const int64_t blockSize = blockSizeAt(level);
    const int64_t firstBlock = (first + blockSize - 1) / blockSize;
    const int64_t lastBlock = std::min(last / blockSize, static_cast<int64_t>(blocks.size()));
    if (firstBlock >= lastBlock) {
        scan(level - 1, first, last, r);
        return;
    }
    scan(level - 1, first, firstBlock * blockSize, r);
    for (int64_t b = firstBlock; b < lastBlock; ++b)
        r.add(blocks[static_cast<size_t>(b)]);
    scan(level - 1, lastBlock * blockSize, last, r);
}

GrowingPyramid::Extremes GrowingPyramid::View::query(int64_t first, int64_t last) const
{
    first = std::max<int64_t>(first, 0);
    last = std::min<int64_t>(last, size());
    if (first >= last)
        return {};
    int level = m_levelCount;
    while (level > 0 && blockSizeAt(level) > last - first)
        --level;
    Running r;
    scan(level, first, last, r);
    return {r.b.minIndex, r.b.maxIndex, r.b.minValue, r.b.maxValue};
}

} // namespace memscope
