#include "common/compact_curve.h"

#include "common/huge_pages.h"

#include <array>
#include <limits>

namespace memscope {

void CompactCurve::clear()
{
    m_blocks.clear();
    m_narrow.clear();
    m_wide.clear();
    m_size = 0;
}

void CompactCurve::reserve(size_t n)
{
    m_blocks.reserve((n + kBlock - 1) >> kShift);
    if (m_narrow.capacity() < n) {
        // A fresh buffer, advised before its first write; what was pushed is kept.
        std::vector<int32_t> fresh;
        reserveHuge(fresh, n);
        fresh.insert(fresh.end(), m_narrow.begin(), m_narrow.end());
        m_narrow.swap(fresh);
    }
}

void CompactCurve::append(const int64_t* values, size_t n)
{
    // Values up to the next block boundary go one by one; whole blocks in one pass.
    while (n > 0 && (m_size & (kBlock - 1)) != 0) {
        push_back(*values++);
        --n;
    }
    while (n > 0) {
        const size_t count = n < kBlock ? n : kBlock;
        const int64_t base = values[0];
        int64_t lo = base;
        int64_t hi = base;
        for (size_t k = 0; k < count; ++k) {
            lo = values[k] < lo ? values[k] : lo;
            hi = values[k] > hi ? values[k] : hi;
        }
        // lo <= base <= hi, so both distances are exact as unsigned.
        const bool narrow = static_cast<uint64_t>(hi) - static_cast<uint64_t>(base) <= uint64_t(INT32_MAX) &&
                            static_cast<uint64_t>(base) - static_cast<uint64_t>(lo) <= uint64_t(-int64_t(INT32_MIN));
        if (narrow) {
            m_blocks.push_back({base, m_narrow.size(), false});
            const size_t at = m_narrow.size();
            m_narrow.resize(at + count);
            int32_t* out = m_narrow.data() + at;
            for (size_t k = 0; k < count; ++k)
                out[k] = static_cast<int32_t>(values[k] - base);
        } else {
            m_blocks.push_back({base, m_wide.size(), true});
            m_wide.insert(m_wide.end(), values, values + count);
        }
        m_size += count;
        values += count;
        n -= count;
    }
}

void CompactCurve::read(size_t first, size_t count, int64_t* out) const
{
    while (count > 0) {
        const Block& b = m_blocks[first >> kShift];
        const size_t in = first & (kBlock - 1);
        const size_t take = std::min(count, kBlock - in);
        if (b.wide) {
            std::copy_n(m_wide.data() + b.offset + in, take, out);
        } else {
            const int32_t* d = m_narrow.data() + b.offset + in;
            const int64_t base = b.base;
            for (size_t k = 0; k < take; ++k)
                out[k] = base + d[k];
        }
        first += take;
        count -= take;
        out += take;
    }
}

size_t CompactCurve::firstMaxIndex(size_t first, size_t last) const
{
    size_t best = first;
    int64_t bestValue = std::numeric_limits<int64_t>::min();
    std::array<int64_t, kBlock> chunk;
    for (size_t from = first; from < last; from += kBlock) {
        const size_t count = std::min(kBlock, last - from);
        read(from, count, chunk.data());
        for (size_t k = 0; k < count; ++k)
            if (chunk[k] > bestValue) {
                bestValue = chunk[k];
                best = from + k;
            }
    }
    return best;
}

void CompactCurve::widen()
{
    Block& b = m_blocks.back();
    const size_t from = b.offset;
    const size_t wideAt = m_wide.size();
    for (size_t k = from; k < m_narrow.size(); ++k)
        m_wide.push_back(b.base + m_narrow[k]);
    m_narrow.resize(from);
    b.offset = wideAt;
    b.wide = true;
}

void CompactCurve::addToAll(int64_t delta)
{
    for (Block& b : m_blocks)
        if (!b.wide)
            b.base += delta;
    for (int64_t& v : m_wide)
        v += delta;
}

void CompactCurve::shrinkToFit()
{
    m_blocks.shrink_to_fit();
    m_narrow.shrink_to_fit();
    m_wide.shrink_to_fit();
}

size_t CompactCurve::bytes() const
{
    return m_blocks.capacity() * sizeof(Block) + m_narrow.capacity() * sizeof(int32_t) + m_wide.capacity() * sizeof(int64_t);
}

size_t CompactCurve::wideBlocks() const
{
    size_t n = 0;
    for (const Block& b : m_blocks)
        n += b.wide;
    return n;
}

} // namespace memscope
