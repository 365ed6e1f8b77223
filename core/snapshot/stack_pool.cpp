#include "snapshot/stack_pool.h"

#include <algorithm>

namespace memscope {

size_t StackPool::hashOf(std::span<const FrameId> frames) const
{
    uint64_t h = 1469598103934665603ull ^ frames.size();
    for (FrameId f : frames)
        h = (h ^ static_cast<uint32_t>(f.value)) * 1099511628211ull;
    return static_cast<size_t>(h);
}

StackId StackPool::intern(std::span<const FrameId> frames)
{
    if (frames.empty())
        return StackId{};
    const size_t h = hashOf(frames);
    auto [lo, hi] = m_index.equal_range(h);
    for (auto it = lo; it != hi; ++it) {
        auto existing = this->frames(it->second);
        if (std::equal(existing.begin(), existing.end(), frames.begin(), frames.end()))
            return it->second;
    }
    StackId id{static_cast<int32_t>(m_offsets.size())};
    m_offsets.push_back({static_cast<uint32_t>(m_flat.size()), static_cast<uint32_t>(frames.size())});
    m_flat.insert(m_flat.end(), frames.begin(), frames.end());
    m_index.emplace(h, id);
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
