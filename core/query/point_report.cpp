#include "query/point_report.h"

#include <algorithm>
#include <unordered_map>

namespace memscope {

int64_t eventAtTime(const EventTable& events, int64_t timeUs)
{
    // time_us is a wall clock and may step back by a few microseconds: take the last event
    // whose running maximum is at or before the time.
    int64_t found = -1;
    int64_t runningMax = INT64_MIN;
    for (size_t i = 0; i < events.count(); ++i) {
        runningMax = std::max(runningMax, events.timeUs[i]);
        if (runningMax > timeUs)
            break;
        found = static_cast<int64_t>(i);
    }
    return found;
}

int64_t peakEvent(const DeviceReplay& replay)
{
    return replay.peakRequested.event.valid() ? replay.peakRequested.event.value : -1;
}

PointReport buildPointReport(const Attribution& attribution, size_t deviceIndex, int64_t event)
{
    const Replay& replay = *attribution.replay;
    const DeviceReplay& d = replay.devices.at(deviceIndex);
    const DeviceAttribution& a = attribution.devices.at(deviceIndex);
    const EventTable& ev = replay.snapshot->devices.at(deviceIndex).events;
    event = std::clamp<int64_t>(event, -1, d.eventCount - 1);

    PointReport r;
    r.deviceIndex = deviceIndex;
    r.device = d.device;
    r.event = event;
    const int64_t t0 = ev.count() ? ev.timeUs.front() : 0;
    r.timeUs = event >= 0 ? ev.timeUs[static_cast<size_t>(event)] : t0;
    r.relativeUs = r.timeUs - t0;
    r.globalPeak = event == peakEvent(d);
    r.requested = d.requestedAfter(event);
    r.reserved = d.reservedAfter(event);
    if (event >= 0 && static_cast<size_t>(event) < a.eventPhase.size())
        r.phase = a.eventPhase[static_cast<size_t>(event)];
    for (size_t i = 0; i < a.iterations.size(); ++i)
        if (a.iterations[i].firstEvent <= event && event <= a.iterations[i].lastEvent) {
            r.iteration = static_cast<int>(i);
            break;
        }

    auto timeOf = [&](EventIndex e) { return e.valid() ? ev.timeUs[static_cast<size_t>(e.value)] : 0; };
    std::unordered_map<int32_t, size_t> siteIndex;
    for (AllocationId id : d.activeAfter(event)) {
        const Allocation& al = d.allocation(id);
        ActiveAllocation l;
        l.id = id;
        l.addr = al.addr;
        l.size = static_cast<int64_t>(al.size);
        l.category = static_cast<size_t>(id.value) < a.allocationCategory.size() ? a.category(id) : Category::Other;
        l.phase = static_cast<size_t>(id.value) < a.allocationPhase.size() ? a.allocationPhase[static_cast<size_t>(id.value)]
                                                                           : Phase::Other;
        l.allocEvent = al.allocEvent.valid() ? al.allocEvent.value : -1;
        l.freeEvent = al.freeEvent.valid() ? al.freeEvent.value : -1;
        l.allocTimeUs = timeOf(al.allocEvent);
        l.freeTimeUs = timeOf(al.freeEvent);
        l.stack = al.stack;
        const size_t c = static_cast<size_t>(l.category);
        r.countByCategory[c] += 1;

        auto [it, inserted] = siteIndex.emplace(al.stack.value, r.callSites.size());
        if (inserted) {
            CallSite s;
            s.stack = al.stack;
            r.callSites.push_back(s);
        }
        CallSite& site = r.callSites[it->second];
        site.bytes += l.size;
        site.count += 1;
        site.byCategory[c] += l.size;
        r.live.push_back(l);
    }

    bool haveCurves = true;
    for (const auto& curve : a.categoryBytes)
        haveCurves = haveCurves && curve.size() == static_cast<size_t>(d.eventCount);
    for (size_t c = 0; c < kCategoryCount; ++c) {
        if (haveCurves)
            r.byCategory[c] = event >= 0 ? a.categoryBytes[c][static_cast<size_t>(event)] : a.categoryAtStart[c];
        else
            r.byCategory[c] = 0;
    }
    if (!haveCurves)
        for (const ActiveAllocation& l : r.live)
            r.byCategory[static_cast<size_t>(l.category)] += l.size;

    for (CallSite& s : r.callSites)
        s.category = static_cast<Category>(std::max_element(s.byCategory.begin(), s.byCategory.end()) - s.byCategory.begin());
    std::stable_sort(r.live.begin(), r.live.end(), [](const ActiveAllocation& x, const ActiveAllocation& y) {
        return x.size != y.size ? x.size > y.size : x.id < y.id;
    });
    std::stable_sort(r.callSites.begin(), r.callSites.end(),
                     [](const CallSite& x, const CallSite& y) { return x.bytes > y.bytes; });
    return r;
}

} // namespace memscope
