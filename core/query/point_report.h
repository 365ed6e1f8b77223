#pragma once

#include "attribute/attribution.h"

#include <array>
#include <cstdint>
#include <vector>

namespace memscope {

/*
 * What is in memory at one point of a device's trace (by default its global peak): the
 * totals, the bytes of each category, every live allocation and the call sites that made
 * them, grouped by stack. The peak panel shows it; peak_report.csv and report.json write
 * it. Category bytes come from the attribution's curves; the live set from the replay.
 */
struct ActiveAllocation {
    AllocationId id;
    uint64_t addr = 0;
    int64_t size = 0;
    Category category = Category::Other;
    Phase phase = Phase::Other; // phase of its alloc
    int64_t allocEvent = -1; // -1: existed before the trace
    int64_t freeEvent = -1; // -1: alive at the end
    int64_t allocTimeUs = 0; // 0 when allocEvent is -1
    int64_t freeTimeUs = 0; // 0 when freeEvent is -1
    StackId stack;
};

struct CallSite {
    StackId stack; // invalid: allocations with no frames recorded
    int64_t bytes = 0;
    int64_t count = 0;
    Category category = Category::Other; // the category holding most of its bytes
    std::array<int64_t, kCategoryCount> byCategory{};
};

struct PointReport {
    size_t deviceIndex = 0;
    int device = 0;
    int64_t event = -1; // -1: before the first event
    int64_t timeUs = 0;
    int64_t relativeUs = 0; // since the first event
    bool globalPeak = false;
    int64_t requested = 0;
    int64_t reserved = 0;
    Phase phase = Phase::Other;
    int iteration = -1; // index into DeviceAttribution::iterations, -1 outside any
    std::array<int64_t, kCategoryCount> byCategory{};
    std::array<int64_t, kCategoryCount> countByCategory{};
    std::vector<ActiveAllocation> live; // largest first
    std::vector<CallSite> callSites; // most bytes first
};

PointReport buildPointReport(const Attribution& attribution, size_t deviceIndex, int64_t event);

// The last event at or before `timeUs` (-1 when it is before the first event).
int64_t eventAtTime(const EventTable& events, int64_t timeUs);

// The event of a device's global requested peak (-1 when the peak is the initial state).
int64_t peakEvent(const DeviceReplay& replay);

} // namespace memscope
