#include "replay/curve_lod.h"

#include <algorithm>
#include <cmath>

namespace memscope {

namespace {

CurveLod::Range merge(CurveLod::Range a, CurveLod::Range b)
{
    return {std::min(a.min, b.min), std::max(a.max, b.max)};
}

} // namespace

CurveLod::CurveLod(std::span<const int64_t> curve, int64_t atStart)
    : m_curve(curve)
    , m_atStart(atStart)
{
    const size_t n = curve.size();
    if (n < static_cast<size_t>(kBlock))
        return;
    std::vector<Range> level(n / static_cast<size_t>(kBlock));
    for (size_t b = 0; b < level.size(); ++b) {
        const int64_t* v = curve.data() + b * static_cast<size_t>(kBlock);
        Range r{v[0], v[0]};
        for (int64_t k = 1; k < kBlock; ++k) {
            r.min = std::min(r.min, v[k]);
            r.max = std::max(r.max, v[k]);
        }
        level[b] = r;
    }
    m_levels.push_back(std::move(level));
    while (m_levels.back().size() >= 2) {
        const std::vector<Range>& below = m_levels.back();
        std::vector<Range> up(below.size() / 2);
        for (size_t b = 0; b < up.size(); ++b)
            up[b] = merge(below[2 * b], below[2 * b + 1]);
        m_levels.push_back(std::move(up));
    }
}

int64_t CurveLod::valueAt(int64_t i) const
{
    if (i < 0 || m_curve.empty())
        return m_atStart;
    return m_curve[static_cast<size_t>(std::min(i, size() - 1))];
}

CurveLod::Range CurveLod::range(int64_t first, int64_t last) const
{
    const int64_t n = size();
    if (last < first || n == 0 || last < 0 || first >= n) {
        const int64_t v = valueAt(std::min(first, n - 1));
        return {v, v};
    }
    Range r{INT64_MAX, INT64_MIN};
    if (first < 0) {
        r = {m_atStart, m_atStart};
        first = 0;
    }
    last = std::min(last, n - 1);
    int64_t i = first;
    const int64_t end = last + 1;
    auto raw = [&](int64_t from, int64_t to) {
        for (int64_t k = from; k < to; ++k) {
            const int64_t v = m_curve[static_cast<size_t>(k)];
            r.min = std::min(r.min, v);
            r.max = std::max(r.max, v);
        }
    };
    const int64_t aligned = std::min(end, (i + kBlock - 1) / kBlock * kBlock);
    raw(i, aligned);
    i = aligned;
    const int levels = static_cast<int>(m_levels.size());
    while (levels > 0 && i + kBlock <= end) {
        int k = 0;
        while (k + 1 < levels && i % (kBlock << (k + 1)) == 0 && i + (kBlock << (k + 1)) <= end &&
               static_cast<size_t>(i / (kBlock << (k + 1))) < m_levels[static_cast<size_t>(k + 1)].size())
            ++k;
        const size_t b = static_cast<size_t>(i / (kBlock << k));
        if (b >= m_levels[static_cast<size_t>(k)].size())
            break; // the tail shorter than a block
        r = merge(r, m_levels[static_cast<size_t>(k)][b]);
        i += kBlock << k;
    }
    raw(i, end);
    return r;
}

void CurveLod::query(double x0, double x1, int pixels, std::vector<Range>& out) const
{
    out.resize(static_cast<size_t>(std::max(pixels, 0)));
    if (pixels <= 0)
        return;
    const double w = (x1 - x0) / pixels;
    for (int j = 0; j < pixels; ++j) {
        const double a = x0 + w * j;
        const double b = x0 + w * (j + 1);
        const int64_t first = static_cast<int64_t>(std::floor(a));
        const int64_t last = std::max(first, static_cast<int64_t>(std::ceil(b)) - 1);
        out[static_cast<size_t>(j)] = range(first, last);
    }
}

void CurveLod::query(std::span<const int64_t> edges, std::vector<Range>& out) const
{
    out.resize(edges.size() > 1 ? edges.size() - 1 : 0);
    for (size_t j = 0; j + 1 < edges.size(); ++j) {
        const int64_t first = edges[j];
        const int64_t last = edges[j + 1] - 1;
        // No event in the bucket: the value in force is that after the previous event.
        out[j] = last < first ? range(first - 1, first - 1) : range(first, last);
    }
}

size_t CurveLod::bytes() const
{
    size_t b = 0;
    for (const auto& l : m_levels)
        b += l.capacity() * sizeof(Range);
    return b;
}

} // namespace memscope
