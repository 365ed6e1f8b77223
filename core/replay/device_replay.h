#pragma once

#include "common/compact_curve.h"
#include "replay/allocation.h"
#include "snapshot/snapshot.h"

#include <string>
#include <vector>

namespace memscope {

/*
 * The replay of one device's trace: one forward pass over the events.
 *
 *   requested[i]  bytes of live allocations after event i (alloc +size, free_completed -size)
 *   reserved[i]   bytes of segments after event i (segment_alloc/map +, segment_free/unmap -)
 *
 * Both start from a baseline for what existed before recording: frees with no alloc,
 * and blocks still allocated in `segments` at dump time that no traced alloc explains,
 * become allocations alive from the start.
 *
 * "What is live after event i" is answered from checkpoints: every `checkpointStride`
 * events the sorted live set is stored, and the events since the nearest checkpoint are
 * applied to it: O(stride + k) per query.
 */
struct DeviceReplay {
    int device = 0;
    int64_t eventCount = 0;
    std::vector<Allocation> allocations; // pre-existing first, then in alloc order
    std::vector<AllocationId> eventAllocation; // per event: allocation it allocates or frees
    // 4 bytes an event each (common/compact_curve.h), exact; walk long stretches with read().
    CompactCurve requested;
    CompactCurve reserved;
    int64_t requestedAtStart = 0;
    int64_t reservedAtStart = 0;
    int64_t preexistingBytes = 0; // bytes of allocations alive before the first event
    int64_t preexistingCount = 0;
    Peak peakRequested;
    Peak peakReserved;
    std::vector<EventIndex> oomEvents;
    std::vector<EventIndex> snapshotEvents;
    int64_t unmatchedFrees = 0; // free_completed with no traced alloc
    int64_t doubleAllocs = 0; // alloc at an address already live (closed at that event)
    bool truncated = false;
    std::string truncationReason;

    int64_t checkpointStride = 1024;
    std::vector<std::vector<AllocationId>> checkpoints; // checkpoints[j]: live before event j*stride

    int64_t requestedAfter(int64_t i) const { return i < 0 ? requestedAtStart : requested[static_cast<size_t>(i)]; }
    int64_t reservedAfter(int64_t i) const { return i < 0 ? reservedAtStart : reserved[static_cast<size_t>(i)]; }
    // Live allocations after event i (i = -1: before the first event), sorted by id.
    std::vector<AllocationId> activeAfter(int64_t i) const;
    const Allocation& allocation(AllocationId id) const { return allocations[static_cast<size_t>(id.value)]; }
};

// Replays one device of a snapshot.
DeviceReplay replayDevice(const Snapshot& snapshot, const DeviceTrace& trace);

} // namespace memscope
