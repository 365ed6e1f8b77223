#pragma once

#include "common/strong_id.h"

#include <cstdint>
#include <vector>

namespace memscope {

enum class BlockState : uint8_t { ActiveAllocated, ActivePendingFree, Inactive, Unknown };

struct Block {
    uint64_t address = 0;
    uint64_t size = 0; // rounded size the allocator carved
    uint64_t requestedSize = 0; // what the program asked for
    BlockState state = BlockState::Unknown;
    StackId stack;
};

// One cudaMalloc (or expandable segment) as it was when the snapshot was taken.
struct Segment {
    int device = 0;
    uint64_t address = 0;
    uint64_t totalSize = 0;
    uint64_t allocatedSize = 0;
    uint64_t activeSize = 0;
    uint64_t requestedSize = 0;
    uint64_t stream = 0;
    bool largePool = true;
    bool expandable = false;
    int64_t poolId[2] = {0, 0};
    StackId stack;
    std::vector<Block> blocks;
};

} // namespace memscope
