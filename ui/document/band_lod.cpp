#include "ui/document/band_lod.h"

#include <algorithm>
#include <cmath>

namespace memscope {

namespace {

// One key's share of one column; a column's shares are a list threaded through one pool
// (newest first), so a frame allocates two arrays, not one per column.
struct Share {
    uint32_t key = 0;
    int32_t next = -1;
    double total = 0; // all bands of this key in the column
    double best = 0; // the largest single band of this key
    int64_t band = BandLod::kNone;
};

} // namespace

std::vector<int64_t> BandLod::columns(std::span<const Input> bands, std::span<const double> maxX1, double lower, double upper,
                                      int columns)
{
    std::vector<int64_t> out(static_cast<size_t>(std::max(columns, 0)), kNone);
    const double span = upper - lower;
    if (columns <= 0 || !(span > 0) || !std::isfinite(span) || bands.empty() || maxX1.size() != bands.size())
        return out;
    const double scale = columns / span;
    std::vector<int32_t> head(static_cast<size_t>(columns), -1);
    std::vector<Share> pool;
    pool.reserve(static_cast<size_t>(columns) * 2);
    auto add = [&](int c, uint32_t key, double cover, int64_t band) {
        int32_t& first = head[static_cast<size_t>(c)];
        for (int32_t i = first; i >= 0; i = pool[static_cast<size_t>(i)].next) {
            Share& s = pool[static_cast<size_t>(i)];
            if (s.key != key)
                continue;
            s.total += cover;
            if (cover > s.best) {
                s.best = cover;
                s.band = band;
            }
            return;
        }
        pool.push_back({key, first, cover, cover, band});
        first = static_cast<int32_t>(pool.size() - 1);
    };
    const size_t start = static_cast<size_t>(std::lower_bound(maxX1.begin(), maxX1.end(), lower) - maxX1.begin());
    for (size_t i = start; i < bands.size(); ++i) {
        const Input& b = bands[i];
        if (b.x0 > upper)
            break; // sorted by x0: nothing further is visible
        if (b.x1 < lower || !std::isfinite(b.x0) || !std::isfinite(b.x1))
            continue;
        const double u0 = std::clamp((b.x0 - lower) * scale, 0.0, static_cast<double>(columns));
        const double u1 = std::clamp((std::max(b.x1, b.x0) - lower) * scale, 0.0, static_cast<double>(columns));
        const int c0 = std::clamp(static_cast<int>(std::floor(u0)), 0, columns - 1);
        if (u1 <= u0) {
            add(c0, b.key, 1e-12, static_cast<int64_t>(i));
            continue;
        }
        const int c1 = std::clamp(static_cast<int>(std::ceil(u1)) - 1, c0, columns - 1);
        for (int c = c0; c <= c1; ++c) {
            const double cover = std::min(u1, c + 1.0) - std::max(u0, static_cast<double>(c));
            if (cover > 0)
                add(c, b.key, cover, static_cast<int64_t>(i));
        }
    }
    for (size_t c = 0; c < out.size(); ++c) {
        // Newest first: `>=` leaves the earliest of equal shares, the first in x order.
        const Share* best = nullptr;
        for (int32_t i = head[c]; i >= 0; i = pool[static_cast<size_t>(i)].next)
            if (!best || pool[static_cast<size_t>(i)].total >= best->total)
                best = &pool[static_cast<size_t>(i)];
        if (best)
            out[c] = best->band;
    }
    return out;
}

} // namespace memscope
