#pragma once

#include "allocator/allocator_settings.h"
#include "allocator/caching_allocator_model.h"
#include "attribute/attribution.h"

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace memscope {

/*
 * One device's recorded alloc/free stream run through CachingAllocatorModel.
 *
 * Exact replay (`followRecording`, with the recorded settings): new segments take the
 * recorded addresses, a cudaMalloc fails where the trace shows that it failed (the
 * segment_free/unmap entries right before an alloc or oom entry; a failed attempt is
 * repeated while the model has released fewer segments than the trace did), and a run of
 * segment_free entries that no allocation explains is an empty_cache() call. Every alloc's
 * address and every segment event is then compared with the trace: `exact` says all agreed.
 *
 * What-if (other settings, a capacity, other sizes): the same stream, with the model picking
 * addresses and the capacity deciding cudaMalloc; empty_cache() calls the trace shows for
 * certain (releases that no allocation follows) are kept. The first allocation the model
 * cannot place is the out-of-memory (the program would have stopped there); a recorded
 * `oom` entry is retried, and if it now fits the run goes on.
 *
 * State from before the recording (allocations the trace never saw allocated, segments it
 * never saw created) is rebuilt from the dump-time segments and the frees, and the result
 * says so (`startStateGuessed`); an overflowed ring buffer is reported the same way.
 */
struct SimulationOptions {
    AllocatorSettings settings;
    uint64_t capacity = AllocatorSettings::kNoLimit; // bytes the allocator may reserve
    uint64_t deviceTotal = 0; // 0: capacity, else 150 GB (expandable ranges)
    bool followRecording = false;
    // The size of each allocation (for the batch what-if); empty: as recorded.
    std::function<uint64_t(AllocationId id, uint64_t recorded)> sizeOf;
    // Allocations the program does without when they do not fit (convolution workspaces,
    // conv_workspaces.h): dropped with their frees instead of failing; empty: none.
    std::function<bool(AllocationId id)> optional;
    bool keepCurve = false; // fill SimulationResult::reserved
};

struct SimulatedOom {
    int64_t event = -1; // the alloc (or oom) entry of the trace
    int64_t timeUs = 0;
    uint64_t size = 0; // bytes asked (as the program asked them)
    uint64_t roundedSize = 0; // as the allocator rounds them
    Phase phase = Phase::Other;
    int64_t reserved = 0; // bytes reserved when it failed
    int64_t allocated = 0;
};

struct SimulationResult {
    int device = 0;
    AllocatorSettings settings;
    uint64_t capacity = AllocatorSettings::kNoLimit;
    int64_t eventCount = 0;
    int64_t eventsSimulated = 0;

    int64_t reservedPeak = 0;
    int64_t allocatedPeak = 0; // rounded block sizes, as torch's allocated_bytes
    int64_t requestedPeak = 0;
    int64_t reservedPeakEvent = -1;
    int64_t allocatedAtReservedPeak = 0;
    int64_t largestFreeAtReservedPeak = 0;
    // At the reserved peak's first event (kept for callers of the reserved peak; the what-if
    // reports read the figures at the allocated peak below).
    int64_t fragmentationAtPeak() const { return reservedPeak - allocatedAtReservedPeak; }
    double fragmentationFraction() const
    {
        return reservedPeak > 0 ? static_cast<double>(fragmentationAtPeak()) / static_cast<double>(reservedPeak) : 0.0;
    }
    // Taken at the allocated peak (the first event where the rounded blocks reach their
    // highest), not at the reserved peak: with expandable segments the reserved plateau begins
    // long before the blocks fill it, so its first or last event says little about the peak.
    // The event's reserved bytes and what is free in them: reserved − allocated, and the
    // largest free block. "Fragmentation" is core/query's one definition (free_space.h):
    // 1 − largest free block / free bytes.
    int64_t allocatedPeakEvent = -1;
    int64_t reservedAtAllocatedPeak = 0;
    int64_t largestFreeAtAllocatedPeak = 0;
    // Reserved but not allocated at the allocated peak, and its share of the reserved bytes.
    int64_t unallocatedAtAllocatedPeak() const { return reservedAtAllocatedPeak - allocatedPeak; }
    double unallocatedFractionAtAllocatedPeak() const
    {
        return reservedAtAllocatedPeak > 0
                   ? static_cast<double>(unallocatedAtAllocatedPeak()) / static_cast<double>(reservedAtAllocatedPeak)
                   : 0.0;
    }
    // 1 − largest free block / free bytes at the allocated peak (0 with nothing free).
    double fragmentationAtAllocatedPeak() const
    {
        const int64_t free = unallocatedAtAllocatedPeak();
        return free > 0 ? 1.0 - static_cast<double>(largestFreeAtAllocatedPeak) / static_cast<double>(free) : 0.0;
    }
    int64_t segmentsCreated = 0;
    int64_t segmentsReleased = 0;
    std::optional<SimulatedOom> oom;
    int64_t recordedOomsAvoided = 0; // recorded oom entries that fit under these settings
    int64_t workspacesDropped = 0; // optional workspaces (TraceOp::optional) that did not fit, done without

    // Exact replay: how the model agreed with the trace.
    bool exact = false;
    int64_t allocsChecked = 0;
    int64_t addressMismatches = 0;
    int64_t segmentRunsChecked = 0;
    int64_t segmentRunMismatches = 0;
    int64_t firstMismatchEvent = -1;
    std::string firstMismatch;
    bool layoutChecked = false;
    bool layoutMatches = false; // dump-time segments and blocks equal the model's at the end
    std::string layoutMismatch;
    // Why an exact replay cannot be promised: "" when the trace holds the whole run.
    bool startStateGuessed = false;
    bool truncated = false;
    std::string caveat;

    std::vector<int64_t> reserved; // per event, with keepCurve
    // simulateOps() with keepCurve: requested bytes live after each op, by category
    std::array<std::vector<int64_t>, kCategoryCount> byCategory;
};

// Runs device `deviceIndex` (an index into replay.devices). `attribution` (may be null) names
// the phase of an out-of-memory event.
SimulationResult simulateDevice(const Replay& replay, size_t deviceIndex, const DeviceAttribution* attribution,
                                const SimulationOptions& options);

} // namespace memscope
