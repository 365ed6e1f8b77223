#pragma once

#include "query/free_space.h"
#include "query/segment_lives.h"
#include "replay/device_replay.h"

#include <cstdint>
#include <span>
#include <vector>

namespace memscope {

/*
 * The caching allocator's segments after one event and what fills them: each live
 * allocation placed in the segment holding its address, its block (the request rounded up
 * to 512 bytes, query/free_space.h), and the free space between blocks. A snapshot records
 * requested sizes; the rounding is reported apart (inUse - requested), not as free space.
 */
struct SegmentState {
    const SegmentLife* segment = nullptr;
    struct Piece {
        AllocationId id;
        uint64_t offset = 0;
        uint64_t size = 0; // requested
    };
    std::vector<Piece> blocks; // by offset
    uint64_t requested = 0; // the blocks' requested bytes
    uint64_t inUse = 0; // bytes the blocks cover, rounded
    FreeSpace free;
};

struct AllocatorState {
    int64_t event = -1;
    std::vector<SegmentState> segments; // by address
    uint64_t reserved = 0;
    uint64_t requested = 0; // live requested bytes inside segments
    uint64_t inUse = 0; // what their blocks cover (reserved = inUse + free.bytes)
    FreeSpace free;
    int64_t activeCount = 0;
    int64_t unplacedCount = 0; // live allocations in no known segment
    uint64_t unplacedBytes = 0;

    double fragmentation() const { return free.fragmentation(); }
};

// `segments`: segmentLives() of the replay's device, sorted by address; the state points into it.
AllocatorState computeAllocatorState(const DeviceReplay& replay, std::span<const SegmentLife> segments, int64_t event);

} // namespace memscope
