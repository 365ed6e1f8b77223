#pragma once

#include "ui/document/device_model.h"

#include <vector>

namespace memscope {

inline constexpr int64_t kNoColumnEvent = -2; // a column before the first or after the last event

// The event each of `columns` pixel columns over [lo, hi] shows: the event with the most
// requested bytes among those falling in the column (so no peak is ever lost between
// pixels), or, for a column no event falls in, the last event before it (its state holds).
// Columns outside the trace get kNoColumnEvent. With `lowest`, also the event with the fewest
// requested bytes in each column (the column's event where one or none falls in it).
std::vector<int64_t> columnEvents(const DeviceModel& model, XAxisMode mode, double lo, double hi, int columns,
                                  std::vector<int64_t>* lowest = nullptr);

} // namespace memscope
