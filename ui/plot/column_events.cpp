#include "ui/plot/column_events.h"

#include <algorithm>

namespace memscope {

std::vector<int64_t> columnEvents(const DeviceModel& m, XAxisMode mode, double lo, double hi, int columns,
                                  std::vector<int64_t>* lowest)
{
    std::vector<int64_t> out(static_cast<size_t>(std::max(columns, 0)), kNoColumnEvent);
    if (lowest)
        lowest->assign(out.size(), kNoColumnEvent);
    const int64_t n = m.eventCount();
    if (n == 0 || columns <= 0 || hi <= lo)
        return out;
    const double xFirst = m.x(0, mode);
    const double xLast = m.xMax(mode);
    std::vector<double> edges(static_cast<size_t>(columns) + 1);
    edges[0] = lo;
    for (int c = 0; c < columns; ++c)
        edges[static_cast<size_t>(c) + 1] = lo + (hi - lo) * (c + 1) / columns;
    const std::vector<int64_t> at = m.firstEventsAtOrAfter(edges, mode);
    int64_t first = at[0];
    for (int c = 0; c < columns; ++c) {
        const double left = lo + (hi - lo) * c / columns;
        const double right = edges[static_cast<size_t>(c) + 1];
        const int64_t last = std::min(at[static_cast<size_t>(c) + 1], n);
        int64_t e, low;
        if (last > first) {
            const MinMaxPyramid::Extremes x = m.requested.query(first, last);
            e = x.maxIndex;
            low = x.minIndex;
        } else {
            e = low = first - 1;
        }
        if ((right <= xFirst && last == 0) || (left > xLast && first >= n))
            e = low = kNoColumnEvent; // before the first event, after the last
        out[static_cast<size_t>(c)] = e;
        if (lowest)
            (*lowest)[static_cast<size_t>(c)] = low;
        first = std::max(first, last);
    }
    return out;
}

ColumnLine columnLine(const std::vector<int64_t>& columns, double lo, double hi)
{
    ColumnLine out;
    const size_t n = columns.size();
    if (n == 0 || hi <= lo)
        return out;
    const auto edge = [&](size_t c) { return c == n ? hi : lo + (hi - lo) * static_cast<double>(c) / static_cast<double>(n); };
    size_t last = n;
    for (size_t c = 0; c < n; ++c) {
        const int64_t e = columns[c];
        if (e < 0) // before the first event, or after the last
            continue;
        if (out.events.empty() || out.events.back() != e || last + 1 != c) {
            out.keys.push_back(edge(c));
            out.events.push_back(e);
        }
        last = c;
    }
    if (!out.events.empty()) {
        out.keys.push_back(edge(last + 1));
        out.events.push_back(out.events.back());
    }
    return out;
}

} // namespace memscope
