#pragma once

#include "attribute/attribution.h"

#include <ostream>

namespace memscope {

// timeline.csv: one row per event of a device, the state after it.
// Columns: time_us, event_index, requested_bytes, reserved_bytes, one column per category
// (PARAMETER, OPTIMIZER_STATE, GRADIENT, ACTIVATION, INPUT, INTERMEDIATE, OTHER), phase.
void writeTimelineCsv(std::ostream& out, const Attribution& attribution, size_t deviceIndex);

} // namespace memscope
