#pragma once

#include "common/strong_id.h"

#include <span>
#include <unordered_map>
#include <vector>

namespace memscope {

// Distinct call stacks (innermost frame first, as PyTorch writes them), each a span
// into one flat frame-id array. StackId{} (invalid) means "no frames recorded".
class StackPool {
public:
    StackId intern(std::span<const FrameId> frames);
    std::span<const FrameId> frames(StackId id) const;
    size_t size() const { return m_offsets.size(); }

private:
    struct Key {
        uint32_t offset;
        uint32_t length;
    };
    size_t hashOf(std::span<const FrameId> frames) const;

    std::vector<FrameId> m_flat;
    std::vector<Key> m_offsets;
    std::unordered_multimap<size_t, StackId> m_index;
};

} // namespace memscope
