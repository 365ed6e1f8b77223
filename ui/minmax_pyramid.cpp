#include "minmax_pyramid.h"

#include <algorithm>

namespace memscope {

MinMaxPyramid::MinMaxPyramid(const std::vector<int64_t>* values) : m_values(values)
{
    const std::vector<int64_t>& v = *values;
    const int64_t n = static_cast<int64_t>(v.size());
    int64_t blockSize = int64_t{1} << kShift;
    int level = 1;
    while (blockSize <= n) {
        const int64_t blocks = n / blockSize; // only whole blocks
        std::vector<int64_t> mins(static_cast<size_t>(blocks)), maxs(static_cast<size_t>(blocks));
        for (int64_t b = 0; b < blocks; ++b) {
            int64_t mn = -1, mx = -1;
            for (int64_t c = 0; c < (int64_t{1} << kShift); ++c) {
                int64_t cmin, cmax;
                if (level == 1) {
                    cmin = cmax = b * blockSize + c;
                } else {
                    const size_t child = static_cast<size_t>(b * (int64_t{1} << kShift) + c);
                    cmin = m_min[static_cast<size_t>(level - 2)][child];
                    cmax = m_max[static_cast<size_t>(level - 2)][child];
                }
                if (mn < 0 || v[static_cast<size_t>(cmin)] < v[static_cast<size_t>(mn)])
                    mn = cmin;
                if (mx < 0 || v[static_cast<size_t>(cmax)] > v[static_cast<size_t>(mx)])
                    mx = cmax;
            }
            mins[static_cast<size_t>(b)] = mn;
            maxs[static_cast<size_t>(b)] = mx;
        }
        m_min.push_back(std::move(mins));
        m_max.push_back(std::move(maxs));
        blockSize <<= kShift;
        ++level;
    }
}

void MinMaxPyramid::take(int64_t minIndex, int64_t maxIndex, Extremes& e) const
{
    const std::vector<int64_t>& v = *m_values;
    if (e.minIndex < 0 || v[static_cast<size_t>(minIndex)] < v[static_cast<size_t>(e.minIndex)] ||
        (v[static_cast<size_t>(minIndex)] == v[static_cast<size_t>(e.minIndex)] && minIndex < e.minIndex))
        e.minIndex = minIndex;
    if (e.maxIndex < 0 || v[static_cast<size_t>(maxIndex)] > v[static_cast<size_t>(e.maxIndex)] ||
        (v[static_cast<size_t>(maxIndex)] == v[static_cast<size_t>(e.maxIndex)] && maxIndex < e.maxIndex))
        e.maxIndex = maxIndex;
}

void MinMaxPyramid::scan(int level, int64_t first, int64_t last, Extremes& e) const
{
    if (first >= last)
        return;
    if (level == 0) {
        for (int64_t i = first; i < last; ++i)
            take(i, i, e);
        return;
    }
    const int64_t blockSize = int64_t{1} << (kShift * level);
    const int64_t blocks = static_cast<int64_t>(m_min[static_cast<size_t>(level - 1)].size());
    const int64_t firstBlock = (first + blockSize - 1) / blockSize;
    const int64_t lastBlock = std::min(last / blockSize, blocks);
    if (firstBlock >= lastBlock) {
        scan(level - 1, first, last, e);
        return;
    }
    scan(level - 1, first, firstBlock * blockSize, e);
    for (int64_t b = firstBlock; b < lastBlock; ++b)
        take(m_min[static_cast<size_t>(level - 1)][static_cast<size_t>(b)],
             m_max[static_cast<size_t>(level - 1)][static_cast<size_t>(b)], e);
    scan(level - 1, lastBlock * blockSize, last, e);
}

MinMaxPyramid::Extremes MinMaxPyramid::query(int64_t first, int64_t last) const
{
    Extremes e;
    first = std::max<int64_t>(first, 0);
    last = std::min<int64_t>(last, size());
    if (first >= last)
        return e;
    int level = static_cast<int>(m_min.size());
    while (level > 0 && (int64_t{1} << (kShift * level)) > last - first)
        --level;
    scan(level, first, last, e);
    return e;
}

} // namespace memscope
