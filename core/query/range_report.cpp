#include "query/range_report.h"

#include <algorithm>
#include <unordered_map>

namespace memscope {

RangeReport buildRangeReport(const Attribution& attribution, size_t deviceIndex, int64_t firstEvent, int64_t lastEvent)
{
    const Replay& replay = *attribution.replay;
    const DeviceReplay& d = replay.devices.at(deviceIndex);
    const DeviceAttribution& a = attribution.devices.at(deviceIndex);
    const EventTable& ev = replay.snapshot->devices.at(deviceIndex).events;

    RangeReport out;
    out.summary = summarizeRange(d, ev, std::min(firstEvent, lastEvent), std::max(firstEvent, lastEvent));
    const int64_t first = out.summary.firstEvent;
    const int64_t last = out.summary.lastEvent;
    out.timed = ev.hasTime;
    PointReport& r = out.active;
    r.deviceIndex = deviceIndex;
    r.device = d.device;
    r.event = out.summary.peakEvent;
    const int64_t t0 = ev.count() ? ev.timeUs.front() : 0;
    r.timeUs = r.event >= 0 ? ev.timeUs[static_cast<size_t>(r.event)] : t0;
    r.relativeUs = r.timeUs - t0;
    r.globalPeak = r.event == peakEvent(d);
    r.reserved = r.event >= 0 ? d.reservedAfter(r.event) : 0;
    if (r.event >= 0 && static_cast<size_t>(r.event) < a.eventPhase.size())
        r.phase = a.eventPhase[static_cast<size_t>(r.event)];
    if (d.eventCount == 0)
        return out;

    auto clock = [&](int64_t e) {
        return out.timed ? static_cast<double>(ev.timeUs[static_cast<size_t>(e)]) : static_cast<double>(e);
    };
    const double scale = out.timed ? 1e-6 : 1.0;
    const double c0 = clock(first), c1 = clock(last);
    auto timeOf = [&](EventIndex e) { return e.valid() ? ev.timeUs[static_cast<size_t>(e.value)] : 0; };
    std::unordered_map<int32_t, size_t> siteIndex;
    for (size_t i = 0; i < d.allocations.size(); ++i) {
        const Allocation& al = d.allocations[i];
        if ((al.allocEvent.valid() && al.allocEvent.value > last) || (al.freeEvent.valid() && al.freeEvent.value <= first))
            continue;
        const AllocationId id{static_cast<int32_t>(i)};
        ActiveAllocation l;
        l.id = id;
        l.addr = al.addr;
        l.size = static_cast<int64_t>(al.size);
        l.category = i < a.allocationCategory.size() ? a.category(id) : Category::Other;
        l.phase = i < a.allocationPhase.size() ? a.allocationPhase[i] : Phase::Other;
        l.allocEvent = al.allocEvent.valid() ? al.allocEvent.value : -1;
        l.freeEvent = al.freeEvent.valid() ? al.freeEvent.value : -1;
        l.allocTimeUs = timeOf(al.allocEvent);
        l.freeTimeUs = timeOf(al.freeEvent);
        l.stack = al.stack;
        const size_t c = static_cast<size_t>(l.category);
        r.byCategory[c] += l.size;
        r.countByCategory[c] += 1;
        r.requested += l.size;
        const double start = std::max(c0, al.allocEvent.valid() ? clock(al.allocEvent.value) : c0);
        const double end = std::min(c1, al.freeEvent.valid() ? clock(al.freeEvent.value) : c1);
        const double w = static_cast<double>(l.size) * std::max(0.0, end - start) * scale;
        out.byteSecondsByCategory[c] += w;
        out.byteSeconds += w;

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
    for (CallSite& s : r.callSites)
        s.category = static_cast<Category>(std::max_element(s.byCategory.begin(), s.byCategory.end()) - s.byCategory.begin());
    std::stable_sort(r.live.begin(), r.live.end(), [](const ActiveAllocation& x, const ActiveAllocation& y) {
        return x.size != y.size ? x.size > y.size : x.id < y.id;
    });
    std::stable_sort(r.callSites.begin(), r.callSites.end(),
                     [](const CallSite& x, const CallSite& y) { return x.bytes > y.bytes; });
    return out;
}

} // namespace memscope
