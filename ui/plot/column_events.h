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

// A step line drawn from column events (columnEvents() over the same range and columns):
// a point at the left edge of each column whose event differs from the column before, and
// one at the right edge of the last column inside the trace. Drawn as left steps, its value
// over each column is that column's event's: the same per-pixel reduction as the stacked
// areas, so the line lies on the top of the stack at every pixel (reducing the line from
// its own samples left it at a pixel's highest across the empty pixels after a fast drop,
// over the areas, which show the state after it).
struct ColumnLine {
    std::vector<double> keys;
    std::vector<int64_t> events;
};
ColumnLine columnLine(const std::vector<int64_t>& columnEvents, double lo, double hi);

} // namespace memscope
