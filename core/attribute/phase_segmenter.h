#pragma once

#include "attribute/attribution.h"
#include "attribute/stack_hints.h"

#include <vector>

namespace memscope {

// Phases of every event of one device and the iterations they form; see attributor.h.
struct PhaseSegmentation {
    std::vector<Phase> eventPhase;
    std::vector<Iteration> iterations; // peaks not filled
    std::vector<int64_t> firstForward; // per iteration: its first Forward event, -1 if none
    std::vector<uint8_t> iterationHasBackward;

    // The iteration holding event i, -1 when it lies before the first one.
    int iterationOf(int64_t i) const;
};

// opensMidRun: the trace lacks its beginning (frees of allocations it never saw, a full ring buffer).
PhaseSegmentation segmentPhases(const Snapshot& snapshot, const DeviceTrace& trace, StackHints& hints, bool opensMidRun);

} // namespace memscope
