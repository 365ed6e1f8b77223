#pragma once

#include "query/segment_lives.h"
#include "replay/device_replay.h"

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace memscope {

/*
 * Private memory pools of one device over the trace: CUDA graphs (torch.cuda.graph,
 * torch.compile's cudagraph trees) and torch.cuda.MemPool keep their own segments, which
 * only allocations of that pool can use. Their reserved bytes are not free cache: the
 * default allocator cannot hand them out, and a graph's replays reuse them without any
 * allocator event.
 *
 * A pool's segments are those segmentLives() gave its id. An allocation is the pool's when
 * its `alloc` carries the pool's `pool_id`, or else when it lies in one of the pool's
 * segments alive at its alloc (at the start, for one that existed before recording).
 * Both curves are steps stored at their changes only (a few per pool event, not one value per
 * event of the trace): reserved, the pool's live segments; used, its live allocations'
 * requested bytes. held = reserved - used is what the pool keeps but nothing uses.
 */
struct PoolUsage {
    PoolId id;
    int number = 0; // 1, 2, … in the order the pools first hold memory
    // (event, bytes after it), events ascending; before the first change: the *AtStart value.
    std::vector<std::pair<int64_t, int64_t>> reserved;
    std::vector<std::pair<int64_t, int64_t>> used;
    int64_t reservedAtStart = 0;
    int64_t usedAtStart = 0;
    int64_t peakReserved = 0;
    int64_t segmentCount = 0; // over the trace
    int64_t allocationCount = 0;

    // A pool of one CUDA graph's capture has its first id set; MemPool() and
    // torch.cuda.graph_pool_handle() (pools shared by graphs, as torch.compile makes) the second.
    bool graphCapture() const { return id.first != 0; }
    std::string kindText() const; // "CUDA graph" or "MemPool / shared graph pool"
    std::string idText() const; // "(1, 0)"
    int64_t reservedAfter(int64_t event) const; // event -1: at the start
    int64_t usedAfter(int64_t event) const;
    int64_t heldAfter(int64_t event) const { return reservedAfter(event) - usedAfter(event); }
};

struct DevicePools {
    std::vector<PoolUsage> pools; // empty when the device used no private pool
    std::vector<int32_t> allocationPool; // per allocation: index into pools, -1 for none (empty when no pools)

    bool empty() const { return pools.empty(); }
    const PoolUsage* poolOf(AllocationId id) const;
    int64_t heldAfter(int64_t event) const; // all pools
};

// `segments`: segmentLives() of the replay's device.
DevicePools poolUsage(const DeviceReplay& replay, const EventTable& events, std::span<const SegmentLife> segments);

} // namespace memscope
