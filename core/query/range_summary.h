#pragma once

#include "replay/minmax_pyramid.h"
#include "replay/replay.h"

#include <cstdint>

namespace memscope {

/*
 * What happened over an inclusive range of one device's events (a selection in the GUI's
 * timeline, a phase band clicked): the requested peak inside it (its first event on ties) and
 * the bytes and counts of the allocs and of the completed frees. The range is clamped to the
 * trace. The peak comes from `requested` (a pyramid over the device's requested curve) when
 * given, in O(16 · levels), else from a scan of the curve; the sums always scan the range.
 */
struct RangeSummary {
    int64_t firstEvent = 0;
    int64_t lastEvent = 0;
    int64_t peakEvent = -1; // -1: empty trace
    int64_t peakBytes = 0;
    int64_t allocatedBytes = 0;
    int64_t freedBytes = 0;
    int64_t allocCount = 0;
    int64_t freeCount = 0;
};

RangeSummary summarizeRange(const DeviceReplay& replay, const EventTable& events, int64_t first, int64_t last,
                            const MinMaxPyramid* requested = nullptr);

} // namespace memscope
