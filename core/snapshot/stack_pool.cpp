#include "snapshot/stack_pool.h"

#include <algorithm>

namespace memscope {

uint64_t StackPool::hashOf(std::span<const FrameId> frames)
{
    uint64_t h = 1469598103934665603ull ^ frames.size();
    for (FrameId f : frames)
        h = (h ^ static_cast<uint32_t>(f.value)) * 1099511628211ull;
    return h ^ (h >> 32);
}

void StackPool::grow()
{
    std::vector<int32_t> table(m_table.empty() ? 64 : m_table.size() * 2, -1);
    const size_t mask = table.size() - 1;
    for (size_t id = 0; id < m_hashes.size(); ++id) {
        size_t slot = m_hashes[id] & mask;
        while (table[slot] >= 0)
            slot = (slot + 1) & mask;
        table[slot] = static_cast<int32_t>(id);
    }
    m_table.swap(table);
}

StackId StackPool::intern(std::span<const FrameId> frames)
{
    if (frames.empty())
        return StackId{};
    if (2 * (m_offsets.size() + 1) > m_table.size())
        grow();
    const uint64_t h = hashOf(frames);
    const size_t mask = m_table.size() - 1;
    size_t slot = h & mask;
    for (; m_table[slot] >= 0; slot = (slot + 1) & mask) {
        const int32_t id = m_table[slot];
        if (m_hashes[static_cast<size_t>(id)] != h)
            continue;
        auto existing = this->frames(StackId{id});
        if (std::equal(existing.begin(), existing.end(), frames.begin(), frames.end()))
            return StackId{id};
    }
    const StackId id{static_cast<int32_t>(m_offsets.size())};
    m_offsets.push_back({static_cast<uint32_t>(m_flat.size()), static_cast<uint32_t>(frames.size())});
    m_flat.insert(m_flat.end(), frames.begin(), frames.end());
    m_hashes.push_back(h);
    m_table[slot] = id.value;
    return id;
}

std::span<const FrameId> StackPool::frames(StackId id) const
{
    if (!id.valid() || static_cast<size_t>(id.value) >= m_offsets.size())
        return {};
    const Key k = m_offsets[static_cast<size_t>(id.value)];
    return {m_flat.data() + k.offset, k.length};
}

} // namespace memscope
