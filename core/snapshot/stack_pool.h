#pragma once

#include "common/strong_id.h"

#include <cstdint>
#include <span>
#include <vector>

namespace memscope {

// Distinct call stacks (innermost frame first, as PyTorch writes them), each a span
// into one flat frame-id array. StackId{} (invalid) means "no frames recorded".
// Interning is an open-addressing table of ids keyed by a hash of the frame ids.
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
    static uint64_t hashOf(std::span<const FrameId> frames);
    void grow();

    std::vector<FrameId> m_flat;
    std::vector<Key> m_offsets;
    std::vector<uint64_t> m_hashes; // per stack
    std::vector<int32_t> m_table; // stack ids, -1 = empty; size a power of two
};

} // namespace memscope
