#include "ui/document/band_lod.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

namespace memscope {

namespace {

constexpr double kInstant = 1e-12; // an instant's share of a column, in pixels

// One key's share of one column; a column's shares are a list threaded through one pool
// (newest first), so a frame allocates two arrays, not one per column.
struct Share {
    uint32_t key = 0;
    int32_t next = -1;
    double total = 0; // the covered length of all bands of this key in the column, in pixels
    int64_t instants = 0;
    double best = 0; // the largest single band's share
    int64_t band = BandLod::kNone;
};

// The shares of every column of one frame.
class Tally {
public:
    explicit Tally(int columns) : m_head(static_cast<size_t>(columns), -1) { m_pool.reserve(static_cast<size_t>(columns) * 2); }

    void add(int c, uint32_t key, double cover, int64_t instants, double share, int64_t band)
    {
        int32_t& first = m_head[static_cast<size_t>(c)];
        for (int32_t i = first; i >= 0; i = m_pool[static_cast<size_t>(i)].next) {
            Share& s = m_pool[static_cast<size_t>(i)];
            if (s.key != key)
                continue;
            s.total += cover;
            s.instants += instants;
            if (share > s.best) {
                s.best = share;
                s.band = band;
            }
            return;
        }
        m_pool.push_back({key, first, cover, instants, share, band});
        first = static_cast<int32_t>(m_pool.size() - 1);
    }

    // One band, cut at the column edges.
    void addBand(const BandLod::Input& b, int64_t index, double lower, double scale, int columns)
    {
        const double u0 = std::clamp((b.x0 - lower) * scale, 0.0, static_cast<double>(columns));
        const double u1 = std::clamp((std::max(b.x1, b.x0) - lower) * scale, 0.0, static_cast<double>(columns));
        const int c0 = std::clamp(static_cast<int>(std::floor(u0)), 0, columns - 1);
        if (u1 <= u0) {
            add(c0, b.key, 0, 1, kInstant, index);
            return;
        }
        const int c1 = std::clamp(static_cast<int>(std::ceil(u1)) - 1, c0, columns - 1);
        for (int c = c0; c <= c1; ++c) {
            const double cover = std::min(u1, c + 1.0) - std::max(u0, static_cast<double>(c));
            if (cover > 0)
                add(c, b.key, cover, 0, cover, index);
        }
    }

    void result(std::vector<int64_t>& out) const
    {
        for (size_t c = 0; c < out.size(); ++c) {
            // Newest first: `>=` leaves the earliest of equal scores, the first in x order.
            const Share* best = nullptr;
            double bestScore = 0;
            for (int32_t i = m_head[c]; i >= 0; i = m_pool[static_cast<size_t>(i)].next) {
                const Share& s = m_pool[static_cast<size_t>(i)];
                const double score = s.total + kInstant * static_cast<double>(s.instants);
                if (!best || score >= bestScore) {
                    best = &s;
                    bestScore = score;
                }
            }
            if (best)
                out[c] = best->band;
        }
    }

private:
    std::vector<int32_t> m_head;
    std::vector<Share> m_pool;
};

bool usable(double lower, double upper, int columns, size_t bands)
{
    const double span = upper - lower;
    return columns > 0 && span > 0 && std::isfinite(span) && bands > 0;
}

} // namespace

BandLod::BandLod(std::vector<Input> bands) : m_bands(std::move(bands))
{
    const size_t n = m_bands.size();
    m_maxX1.resize(n);
    for (size_t i = 0; i < n; ++i)
        m_maxX1[i] = i == 0 ? m_bands[i].x1 : std::max(m_maxX1[i - 1], m_bands[i].x1);
    // Level 1 from the bands, each further level from 16 blocks of the one below. A key's
    // entries are appended in the order the key first appears, so merging children in x order
    // keeps that order.
    constexpr size_t fanout = size_t{1} << kShift;
    auto merge = [&](std::vector<Entry>& into, const Entry& e) {
        for (Entry& x : into)
            if (x.key == e.key) {
                x.length += e.length;
                x.instants += e.instants;
                if (e.bestLength > x.bestLength) {
                    x.bestLength = e.bestLength;
                    x.best = e.best;
                }
                return;
            }
        into.push_back(e);
    };
    std::vector<Entry> scratch;
    if (n <= 1)
        return;
    std::vector<Block> level;
    for (size_t b = 0; b < n; b += fanout) {
        Block blk{std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(), m_entries.size(), 0};
        scratch.clear();
        for (size_t i = b; i < std::min(n, b + fanout); ++i) {
            const Input& in = m_bands[i];
            if (!std::isfinite(in.x0) || !std::isfinite(in.x1) || in.x1 < in.x0)
                blk.x0 = std::numeric_limits<double>::quiet_NaN();
            blk.x0 = std::min(blk.x0, in.x0); // NaN stays NaN: std::min(NaN, v) returns NaN
            blk.x1 = std::max(blk.x1, in.x1);
            const double len = in.x1 - in.x0;
            merge(scratch, len > 0 ? Entry{in.key, 0, len, static_cast<int64_t>(i), len}
                                   : Entry{in.key, 1, 0, static_cast<int64_t>(i), 0});
        }
        m_entries.insert(m_entries.end(), scratch.begin(), scratch.end());
        blk.end = m_entries.size();
        level.push_back(blk);
    }
    m_levels.push_back(std::move(level));
    while (m_levels.back().size() > 1) {
        const std::vector<Block>& below = m_levels.back();
        std::vector<Block> up;
        for (size_t b = 0; b < below.size(); b += fanout) {
            Block blk{std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(), m_entries.size(), 0};
            scratch.clear();
            for (size_t k = b; k < std::min(below.size(), b + fanout); ++k) {
                const Block& child = below[k];
                blk.x0 = std::isnan(blk.x0) || std::isnan(child.x0) ? std::numeric_limits<double>::quiet_NaN()
                                                                    : std::min(blk.x0, child.x0);
                blk.x1 = std::max(blk.x1, child.x1);
                for (size_t e = child.begin; e < child.end; ++e)
                    merge(scratch, m_entries[e]);
            }
            m_entries.insert(m_entries.end(), scratch.begin(), scratch.end());
            blk.end = m_entries.size();
            up.push_back(blk);
        }
        m_levels.push_back(std::move(up));
    }
}

std::vector<int64_t> BandLod::columns(double lower, double upper, int columns) const
{
    std::vector<int64_t> out(static_cast<size_t>(std::max(columns, 0)), kNone);
    if (!usable(lower, upper, columns, m_bands.size()))
        return out;
    const double scale = columns / (upper - lower);
    const double width = static_cast<double>(columns);
    Tally tally(columns);
    const size_t n = m_bands.size();
    const int levels = static_cast<int>(m_levels.size());
    size_t i = static_cast<size_t>(std::lower_bound(m_maxX1.begin(), m_maxX1.end(), lower) - m_maxX1.begin());
    while (i < n) {
        const Input& b = m_bands[i];
        if (b.x0 > upper)
            break; // sorted by x0: nothing further is visible
        // The largest block starting here that lies in the view and in one column.
        const int aligned = i == 0 ? levels : std::min(levels, std::countr_zero(i) / kShift);
        bool whole = false;
        for (int l = aligned; l >= 1 && !whole; --l) {
            const Block& blk = m_levels[static_cast<size_t>(l - 1)][i >> (kShift * l)];
            if (!(blk.x0 >= lower && blk.x1 <= upper))
                continue; // also when x0 is NaN
            // Where band-by-band would put its bands: u is monotonic in x, so every band of the
            // block lies in [u0, u1] and so in column c when u1 < c + 1 (the last column takes u = columns).
            const double u0 = std::clamp((blk.x0 - lower) * scale, 0.0, width);
            const double u1 = std::clamp((blk.x1 - lower) * scale, 0.0, width);
            const int c = std::min(static_cast<int>(std::floor(u0)), columns - 1);
            if (!(u1 < c + 1.0 || c == columns - 1))
                continue;
            for (size_t e = blk.begin; e < blk.end; ++e) {
                const Entry& en = m_entries[e];
                double share = kInstant;
                if (en.bestLength > 0) {
                    const Input& bb = m_bands[static_cast<size_t>(en.best)];
                    const double s = std::clamp((bb.x1 - lower) * scale, 0.0, width) -
                                     std::clamp((bb.x0 - lower) * scale, 0.0, width);
                    share = s > 0 ? s : kInstant;
                }
                tally.add(c, en.key, en.length * scale, en.instants, share, en.best);
            }
            i = std::min(n, i + (size_t{1} << (kShift * l)));
            whole = true;
        }
        if (whole)
            continue;
        if (b.x1 >= lower && std::isfinite(b.x0) && std::isfinite(b.x1))
            tally.addBand(b, static_cast<int64_t>(i), lower, scale, columns);
        ++i;
    }
    tally.result(out);
    return out;
}

std::vector<int64_t> BandLod::columnsByBand(std::span<const Input> bands, std::span<const double> maxX1, double lower,
                                            double upper, int columns)
{
    std::vector<int64_t> out(static_cast<size_t>(std::max(columns, 0)), kNone);
    if (!usable(lower, upper, columns, bands.size()) || maxX1.size() != bands.size())
        return out;
    const double scale = columns / (upper - lower);
    Tally tally(columns);
    const size_t start = static_cast<size_t>(std::lower_bound(maxX1.begin(), maxX1.end(), lower) - maxX1.begin());
    for (size_t i = start; i < bands.size(); ++i) {
        const Input& b = bands[i];
        if (b.x0 > upper)
            break; // sorted by x0: nothing further is visible
        if (b.x1 < lower || !std::isfinite(b.x0) || !std::isfinite(b.x1))
            continue;
        tally.addBand(b, static_cast<int64_t>(i), lower, scale, columns);
    }
    tally.result(out);
    return out;
}

} // namespace memscope
