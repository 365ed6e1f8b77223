#include "query/segment_lives.h"

#include <algorithm>
#include <unordered_map>

namespace memscope {

std::vector<SegmentLife> segmentLives(const Snapshot& s, const DeviceTrace& trace)
{
    const EventTable& ev = trace.events;
    std::vector<SegmentLife> out;
    std::unordered_map<uint64_t, size_t> open;
    for (size_t i = 0; i < ev.count(); ++i) {
        const Action a = ev.action[i];
        if (a == Action::SegmentAlloc || a == Action::SegmentMap) {
            SegmentLife l;
            l.addr = ev.addr[i];
            l.size = ev.size[i];
            l.stream = ev.stream[i];
            l.expandable = a == Action::SegmentMap;
            l.startEvent = static_cast<int64_t>(i);
            if (!ev.pool.empty()) [[unlikely]]
                l.pool = ev.poolOf(i);
            open[l.addr] = out.size();
            out.push_back(l);
        } else if (a == Action::SegmentFree || a == Action::SegmentUnmap) {
            if (auto it = open.find(ev.addr[i]); it != open.end()) {
                out[it->second].endEvent = static_cast<int64_t>(i);
                open.erase(it);
            } else {
                SegmentLife l;
                l.addr = ev.addr[i];
                l.size = ev.size[i];
                l.stream = ev.stream[i];
                l.expandable = a == Action::SegmentUnmap;
                l.endEvent = static_cast<int64_t>(i);
                out.push_back(l);
            }
        }
    }
    for (const Segment& seg : s.segments) {
        if (seg.device != trace.device)
            continue;
        const PoolId segPool{seg.poolId[0], seg.poolId[1]};
        if (auto it = open.find(seg.address); it != open.end()) {
            SegmentLife& l = out[it->second];
            l.largePool = seg.largePool;
            if (l.pool.isDefault())
                l.pool = segPool;
            continue;
        }
        if (seg.expandable) {
            // Mapped pieces of an expandable segment were opened at their own addresses.
            bool covered = false;
            for (const auto& [addr, idx] : open)
                if (addr >= seg.address && addr < seg.address + seg.totalSize) {
                    covered = true;
                    if (out[idx].pool.isDefault())
                        out[idx].pool = segPool;
                }
            if (covered)
                continue;
        }
        SegmentLife l;
        l.addr = seg.address;
        l.size = seg.totalSize;
        l.stream = seg.stream;
        l.largePool = seg.largePool;
        l.expandable = seg.expandable;
        l.pool = segPool;
        out.push_back(l);
    }
    for (SegmentLife& l : out)
        if (!l.expandable && l.startEvent >= 0 && l.size == (2u << 20))
            l.largePool = false;
    std::sort(out.begin(), out.end(), [](const SegmentLife& a, const SegmentLife& b) {
        return a.addr != b.addr ? a.addr < b.addr : a.startEvent < b.startEvent;
    });
    // A segment an alloc of a private pool was placed in belongs to that pool.
    uint64_t largest = 0;
    for (const SegmentLife& l : out)
        largest = std::max(largest, l.size);
    for (const auto& [row, pool] : ev.pool) {
        if (pool.isDefault() || ev.action[row] != Action::Alloc)
            continue;
        const uint64_t a = ev.addr[row];
        auto it = std::upper_bound(out.begin(), out.end(), a, [](uint64_t x, const SegmentLife& l) { return x < l.addr; });
        while (it != out.begin()) {
            --it;
            if (a - it->addr >= largest)
                break;
            if (a < it->addr + it->size && it->activeAfter(static_cast<int64_t>(row))) {
                if (it->pool.isDefault())
                    it->pool = pool;
                break;
            }
        }
    }
    return out;
}

} // namespace memscope
