#include "query/allocator_state.h"

#include <algorithm>

namespace memscope {

AllocatorState computeAllocatorState(const DeviceReplay& replay, std::span<const SegmentLife> segments, int64_t event)
{
    AllocatorState st;
    st.event = event;
    for (const SegmentLife& s : segments)
        if (s.activeAfter(event)) {
            SegmentState ss;
            ss.segment = &s;
            st.segments.push_back(ss);
            st.reserved += s.size;
        }
    for (AllocationId id : replay.activeAfter(event)) {
        const Allocation& a = replay.allocation(id);
        ++st.activeCount;
        auto it = std::upper_bound(st.segments.begin(), st.segments.end(), a.addr,
                                   [](uint64_t addr, const SegmentState& s) { return addr < s.segment->addr; });
        if (it == st.segments.begin() || a.addr >= std::prev(it)->segment->addr + std::prev(it)->segment->size) {
            ++st.unplacedCount;
            st.unplacedBytes += a.size;
            continue;
        }
        SegmentState& seg = *std::prev(it);
        seg.blocks.push_back({id, a.addr - seg.segment->addr, a.size});
        seg.requested += a.size;
        st.requested += a.size;
    }
    for (SegmentState& seg : st.segments) {
        std::sort(seg.blocks.begin(), seg.blocks.end(),
                  [](const SegmentState::Piece& x, const SegmentState::Piece& y) { return x.offset < y.offset; });
        const uint64_t size = seg.segment->size;
        uint64_t cursor = 0;
        for (const SegmentState::Piece& p : seg.blocks) {
            if (p.offset > cursor)
                seg.free.add(p.offset - cursor);
            const uint64_t end = std::min(size, p.offset + roundToAllocatorBlock(p.size));
            if (end > cursor) {
                seg.inUse += end - std::max(cursor, p.offset);
                cursor = end;
            }
        }
        if (size > cursor)
            seg.free.add(size - cursor);
        st.inUse += seg.inUse;
        st.free.add(seg.free);
    }
    return st;
}

} // namespace memscope
