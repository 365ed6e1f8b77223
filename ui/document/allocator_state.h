#pragma once

#include "ui/document/device_model.h"

#include <cstdint>
#include <vector>

namespace memscope {

/*
 * The caching allocator's segments at one event and what fills them: each live allocation
 * placed in the segment holding its address, and the gaps between them. A gap is reserved
 * memory no live request covers: free blocks the allocator keeps cached, plus the rounding
 * of each block (a snapshot records requested sizes, not the rounded ones). Fragmentation
 * is 1 - largest gap / all gap bytes: 0 when the free space is one piece, near 1 when it is
 * scattered in many small pieces no large request can use.
 */
struct SegmentState {
    const SegmentLife* segment = nullptr;
    struct Piece {
        AllocationId id;
        uint64_t offset = 0;
        uint64_t size = 0;
    };
    std::vector<Piece> blocks; // by offset
    uint64_t used = 0;
    uint64_t gapBytes = 0;
    uint64_t largestGap = 0;
    int64_t gapCount = 0;
};

struct AllocatorState {
    int64_t event = -1;
    std::vector<SegmentState> segments; // by address
    uint64_t reserved = 0;
    uint64_t requested = 0; // live requested bytes inside segments
    uint64_t gapBytes = 0;
    uint64_t largestGap = 0;
    int64_t gapCount = 0;
    int64_t liveCount = 0;
    int64_t unplacedCount = 0; // live allocations in no known segment
    uint64_t unplacedBytes = 0;

    double fragmentation() const
    {
        return gapBytes ? 1.0 - static_cast<double>(largestGap) / static_cast<double>(gapBytes) : 0.0;
    }
};

AllocatorState computeAllocatorState(const DeviceModel& model, int64_t event);

} // namespace memscope
