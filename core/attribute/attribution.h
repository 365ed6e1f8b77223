#pragma once

#include "attribute/category.h"
#include "common/compact_curve.h"
#include "replay/replay.h"

#include <array>
#include <memory>
#include <string>
#include <vector>

namespace memscope {

// One training iteration: [firstEvent, lastEvent] and its phases.
struct PhaseRange {
    Phase phase = Phase::Other;
    int64_t firstEvent = 0;
    int64_t lastEvent = -1; // inclusive
};

struct IterationPeak {
    int64_t bytes = 0;
    EventIndex event;
    int64_t timeUs = 0;
    Phase phase = Phase::Other;
    std::array<int64_t, kCategoryCount> byCategory{}; // bytes live at the peak, by category
};

struct Iteration {
    int index = 0;
    int64_t firstEvent = 0;
    int64_t lastEvent = -1; // inclusive
    std::vector<PhaseRange> phases;
    IterationPeak peak;
};

/*
 * Attribution of one device: a phase for every event, a category and the phase of its
 * alloc for every allocation, iterations with their peaks, and the per-category curves.
 * Filled by attributeDevice(); see attribute/attributor.h for how.
 */
struct DeviceAttribution {
    int device = 0;
    std::vector<Phase> eventPhase; // per event
    std::vector<Category> allocationCategory; // per AllocationId
    std::vector<Phase> allocationPhase; // phase in which it was allocated (Other for pre-existing)
    std::vector<int32_t> allocationIteration; // iteration of its alloc; -1 outside any (and pre-existing)
    std::vector<Iteration> iterations;
    // Bytes live per category after each event: categoryBytes[c][i] (4 bytes a value, see
    // common/compact_curve.h).
    std::array<CompactCurve, kCategoryCount> categoryBytes;
    std::array<int64_t, kCategoryCount> categoryAtStart{};
    // The global peak of requested bytes split by category, and its phase.
    std::array<int64_t, kCategoryCount> peakByCategory{};
    Phase peakPhase = Phase::Other;

    Category category(AllocationId id) const { return allocationCategory[static_cast<size_t>(id.value)]; }
};

struct Attribution {
    std::shared_ptr<const Replay> replay;
    std::vector<DeviceAttribution> devices; // same order as replay->devices
    const DeviceAttribution* device(int ordinal) const;
};

} // namespace memscope
