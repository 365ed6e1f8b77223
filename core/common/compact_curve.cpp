#include "common/compact_curve.h"

#include "common/huge_pages.h"

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
