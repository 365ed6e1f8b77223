#include "allocator/what_if_curve.h"

#include <algorithm>

namespace memscope {

int64_t WhatIfCurve::requestedPeak() const
{
    return requested.empty() ? 0 : *std::max_element(requested.begin(), requested.end());
}
int64_t WhatIfCurve::reservedPeak() const { return reserved.empty() ? 0 : *std::max_element(reserved.begin(), reserved.end()); }

WhatIfCurve whatIfCurve(const OpStream& stream, const SimulationResult& result, const DeviceReplay& recorded, size_t columns)
{
    WhatIfCurve c;
    const int64_t events = std::max<int64_t>(1, static_cast<int64_t>(recorded.requested.size()));
    c.eventCount = events;
    const size_t n = std::max<size_t>(1, std::min(columns, static_cast<size_t>(events)));
    auto columnOf = [&](int64_t e) {
        e = std::clamp<int64_t>(e, 0, events - 1);
        return static_cast<size_t>(e * static_cast<int64_t>(n) / events);
    };
    c.x.resize(n);
    for (size_t k = 0; k < n; ++k)
        c.x[k] = static_cast<double>(static_cast<int64_t>(k) * events / static_cast<int64_t>(n));
    for (auto& v : c.byCategory)
        v.assign(n, 0);
    c.requested.assign(n, 0);
    c.reserved.assign(n, 0);
    c.recordedRequested.assign(n, 0);
    c.recordedReserved.assign(n, 0);
    c.predicted.assign(n, 0);

    const size_t simulated = std::min({stream.ops.size(), result.reserved.size(), static_cast<size_t>(result.eventsSimulated)});
    for (size_t k = 0; k < simulated; ++k) {
        const size_t col = columnOf(stream.ops[k].event);
        int64_t total = 0;
        for (size_t cat = 0; cat < kCategoryCount; ++cat)
            total += result.byCategory[cat].size() > k ? result.byCategory[cat][k] : 0;
        if (!c.predicted[col] || total > c.requested[col]) {
            c.requested[col] = total;
            for (size_t cat = 0; cat < kCategoryCount; ++cat)
                c.byCategory[cat][col] = result.byCategory[cat].size() > k ? result.byCategory[cat][k] : 0;
        }
        c.reserved[col] = std::max(c.reserved[col], result.reserved[k]);
        c.predicted[col] = 1;
    }
    const size_t recordedEvents = recorded.requested.size();
    std::vector<int64_t> buf;
    for (size_t col = 0; col < n && recordedEvents > 0; ++col) {
        const size_t first = static_cast<size_t>(c.x[col]);
        const size_t last = col + 1 < n ? static_cast<size_t>(c.x[col + 1]) : recordedEvents;
        if (last <= first)
            continue;
        buf.resize(last - first);
        recorded.requested.read(first, last - first, buf.data());
        c.recordedRequested[col] = *std::max_element(buf.begin(), buf.end());
        recorded.reserved.read(first, last - first, buf.data());
        c.recordedReserved[col] = *std::max_element(buf.begin(), buf.end());
    }
    return c;
}

} // namespace memscope
