#pragma once

#include "allocator/trace_ops.h"

#include <array>
#include <cstdint>
#include <vector>

namespace memscope {

/*
 * A what-if's predicted curve next to the recorded one, in columns of recorded events, for
 * the window's what-if chart. An edited stream's operations stand for recorded events
 * (TraceOp::event), but not one to one: accumulation repeats a step's events once per
 * micro-batch, checkpointing recomputes a block's forward in the backward. So the x axis is
 * the recorded event index, cut into `columns` equal columns; each column keeps, of the
 * predicted operations standing for its events, the one with the most requested bytes (its
 * bytes by category, so the stacked areas reach the predicted requested peak exactly) and the
 * most reserved bytes, and of the recording the highest requested and reserved values. The
 * peaks survive the binning: the highest column is the peak.
 */
struct WhatIfCurve {
    int64_t eventCount = 0;
    std::vector<double> x; // the first recorded event of each column
    std::array<std::vector<int64_t>, kCategoryCount> byCategory; // predicted requested bytes, per column
    std::vector<int64_t> requested; // predicted, the sum of byCategory
    std::vector<int64_t> reserved; // predicted
    std::vector<int64_t> recordedRequested;
    std::vector<int64_t> recordedReserved;
    std::vector<uint8_t> predicted; // whether any predicted operation fell in the column (up to an OOM)
    int64_t requestedPeak() const;
    int64_t reservedPeak() const;
};

// `result` is simulateOps(stream, …) with options.keepCurve; `recorded` the device's replay.
WhatIfCurve whatIfCurve(const OpStream& stream, const SimulationResult& result, const DeviceReplay& recorded,
                        size_t columns = 1200);

} // namespace memscope
