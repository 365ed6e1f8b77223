#pragma once

#include "snapshot/snapshot.h"

#include <cstdint>
#include <limits>
#include <vector>

namespace memscope {

// One segment (cudaMalloc, or a mapped range of an expandable segment) and when it existed.
struct SegmentLife {
    uint64_t addr = 0;
    uint64_t size = 0;
    uint64_t stream = 0;
    bool largePool = true;
    bool expandable = false;
    PoolId pool; // a CUDA-graph / MemPool private pool; default: the allocator's own pools
    int64_t startEvent = -1; // -1: existed before the trace
    int64_t endEvent = std::numeric_limits<int64_t>::max(); // its segment_free; max: alive at the end
    bool activeAfter(int64_t e) const { return startEvent <= e && e < endEvent; }
};

/*
 * Every segment of one device over the trace, sorted by address (then start): opened by
 * segment_alloc / segment_map, closed by the matching segment_free / segment_unmap; a free
 * with no open segment existed before the trace; the dump-time segments no event opened
 * existed from before the trace to the end (a mapped piece of an expandable segment stands
 * for the part of it that was mapped during the trace). A 2 MiB cudaMalloc is the small pool.
 *
 * A segment's private pool (CUDA graph or MemPool) is the first of: the `pool_id` of the
 * event that opened it, the dump-time `segment_pool_id` of the segment still open at the end,
 * the `pool_id` of an `alloc` made inside it while it lived (torch writes pool ids on some
 * events only, and the segment list only at the dump).
 */
std::vector<SegmentLife> segmentLives(const Snapshot& snapshot, const DeviceTrace& trace);

} // namespace memscope
