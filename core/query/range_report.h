#pragma once

#include "query/point_report.h"
#include "query/range_summary.h"

namespace memscope {

/*
 * What was active during an inclusive range of one device's events (the timeline's range
 * selection): every allocation active after at least one event of the range (made at or before
 * its last event, freed after its first or never), each counted once, grouped by category and
 * call site as point_report.h does for one event. `active` has the PointReport's shape so the
 * breakdown's tables show it: its byCategory and countByCategory sum those allocations (bytes
 * that were not all active at once), its `requested` is their total, and its event is the
 * range's peak. `byteSecondsByCategory` weighs each by size × its lifetime clipped to the range,
 * in byte-seconds of time_us (stack_tree.h's ByteSeconds weight; byte-events without times).
 */
struct RangeReport {
    RangeSummary summary; // the range's peak, allocs and frees
    PointReport active;
    std::array<double, kCategoryCount> byteSecondsByCategory{};
    double byteSeconds = 0;
    bool timed = true; // false: the weights are byte-events
};

RangeReport buildRangeReport(const Attribution& attribution, size_t deviceIndex, int64_t firstEvent, int64_t lastEvent);

} // namespace memscope
