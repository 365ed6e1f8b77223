#include "column_events.h"

#include <algorithm>

namespace memscope {

std::vector<int64_t> columnEvents(const DeviceModel& m, XAxisMode mode, double lo, double hi, int columns)
{
    std::vector<int64_t> out(static_cast<size_t>(std::max(columns, 0)), kNoColumnEvent);
    const int64_t n = m.eventCount();
    if (n == 0 || columns <= 0 || hi <= lo)
        return out;
    const double xFirst = m.x(0, mode);
    const double xLast = m.xMax(mode);
    int64_t first = m.firstEventAtOrAfter(lo, mode);
    for (int c = 0; c < columns; ++c) {
        const double left = lo + (hi - lo) * c / columns;
        const double right = lo + (hi - lo) * (c + 1) / columns;
        const int64_t last = std::min(m.firstEventAtOrAfter(right, mode), n);
        int64_t e;
        if (last > first)
            e = m.requested.query(first, last).maxIndex;
        else
            e = first - 1;
        if (right <= xFirst && last == 0)
            e = kNoColumnEvent; // before the first event
        if (left > xLast && first >= n)
            e = kNoColumnEvent; // after the last event
        out[static_cast<size_t>(c)] = e;
        first = std::max(first, last);
    }
    return out;
}

} // namespace memscope
