#include "query/range_summary.h"

#include <algorithm>

namespace memscope {

RangeSummary summarizeRange(const DeviceReplay& replay, const EventTable& events, int64_t first, int64_t last,
                            const MinMaxPyramid* requested)
{
    RangeSummary s;
    const int64_t n = std::min<int64_t>(replay.eventCount, static_cast<int64_t>(events.count()));
    const int64_t lastIndex = std::max<int64_t>(n - 1, 0);
    s.firstEvent = std::clamp<int64_t>(first, 0, lastIndex);
    s.lastEvent = std::clamp<int64_t>(last, s.firstEvent, lastIndex);
    if (n == 0)
        return s;
    if (requested) {
        s.peakEvent = requested->query(s.firstEvent, s.lastEvent + 1).maxIndex;
    } else {
        const auto begin = replay.requested.begin();
        s.peakEvent = std::max_element(begin + s.firstEvent, begin + s.lastEvent + 1) - begin; // the first of ties
    }
    s.peakBytes = s.peakEvent >= 0 ? replay.requestedAfter(s.peakEvent) : 0;
    for (int64_t i = s.firstEvent; i <= s.lastEvent; ++i) {
        const size_t k = static_cast<size_t>(i);
        if (events.action[k] == Action::Alloc) {
            s.allocatedBytes += static_cast<int64_t>(events.size[k]);
            ++s.allocCount;
        } else if (events.action[k] == Action::FreeCompleted) {
            s.freedBytes += static_cast<int64_t>(events.size[k]);
            ++s.freeCount;
        }
    }
    return s;
}

} // namespace memscope
