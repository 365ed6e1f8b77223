#pragma once

#include "allocator/allocator_simulation.h"

#include <cstdint>
#include <vector>

namespace memscope {

/*
 * A device's alloc/free stream as an editable list of operations, for what-ifs that change
 * the program rather than the allocator (model_what_if.h): an edit adds, drops, resizes or
 * moves operations, and simulateOps() replays the result through CachingAllocatorModel the
 * way simulateDevice() replays a what-if (the model picks addresses, reusing the recorded
 * segment addresses in their order for sizes the recording also got; empty_cache() calls
 * the trace shows for certain are kept; the first allocation that does not fit is the
 * out-of-memory). opsFromRecording() of an unedited trace replays to the same result as
 * simulateDevice() with the same options.
 *
 * Keys name allocations: a recorded AllocationId is its own key, copies an edit adds take
 * keys from `keyCount` on and remember the allocation they copy in `origin`.
 */
struct TraceOp {
    enum class Kind : uint8_t { Alloc, FreeRequested, Free, EmptyCache, Probe };
    Kind kind = Kind::Alloc;
    Category category = Category::Other; // what the bytes are for (Alloc), for the curves
    uint32_t key = 0;
    int32_t origin = -1; // the recorded allocation (AllocationId) it stands for; -1: none
    uint64_t size = 0; // bytes asked (Alloc, Probe)
    uint64_t stream = 0;
    int64_t event = -1; // the trace entry it comes from or stands next to
    // Alloc: a convolution's workspace, which the program does without when it does not fit
    // (cuDNN tries its plans in order, and torch takes the next plan when the allocator
    // throws out-of-memory for one's workspace): dropped, with its frees, instead of failing.
    bool optional = false;
};

struct OpStream {
    std::vector<TraceOp> ops;
    uint32_t keyCount = 0;
    // segment_alloc entries of the recording (size, address) in order, for address reuse
    std::vector<std::pair<uint64_t, uint64_t>> recordedSegments;
    int64_t eventCount = 0;
    int device = 0;

    uint32_t newKey() { return keyCount++; }
};

// The recorded stream of device `deviceIndex` (allocations from before the trace are
// allocated first).
OpStream opsFromRecording(const Replay& replay, size_t deviceIndex);

// Replays `stream` (options.followRecording and options.sizeOf are ignored). `attribution`
// (may be null) names the phase of an out-of-memory by the event of the failing op. With
// options.keepCurve, SimulationResult::reserved and ::byCategory hold one value per op.
SimulationResult simulateOps(const OpStream& stream, const DeviceAttribution* attribution, const SimulationOptions& options);

} // namespace memscope
