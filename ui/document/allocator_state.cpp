#include "ui/document/allocator_state.h"

#include <algorithm>

namespace memscope {

AllocatorState computeAllocatorState(const DeviceModel& model, int64_t event)
{
    AllocatorState st;
    st.event = event;
    for (const SegmentLife& s : model.segments)
        if (s.liveAfter(event)) {
            SegmentState ss;
            ss.segment = &s;
            st.segments.push_back(ss);
            st.reserved += s.size;
        }
    for (AllocationId id : model.replay->liveAfter(event)) {
        const Allocation& a = model.replay->allocation(id);
        ++st.liveCount;
        auto it = std::upper_bound(st.segments.begin(), st.segments.end(), a.addr,
                                   [](uint64_t addr, const SegmentState& s) { return addr < s.segment->addr; });
        if (it == st.segments.begin() || a.addr >= std::prev(it)->segment->addr + std::prev(it)->segment->size) {
            ++st.unplacedCount;
            st.unplacedBytes += a.size;
            continue;
        }
        SegmentState& seg = *std::prev(it);
        seg.blocks.push_back({id, a.addr - seg.segment->addr, a.size});
        seg.used += a.size;
        st.requested += a.size;
    }
    for (SegmentState& seg : st.segments) {
        std::sort(seg.blocks.begin(), seg.blocks.end(),
                  [](const SegmentState::Piece& x, const SegmentState::Piece& y) { return x.offset < y.offset; });
        uint64_t cursor = 0;
        auto gap = [&](uint64_t bytes) {
            if (bytes == 0)
                return;
            seg.gapBytes += bytes;
            seg.largestGap = std::max(seg.largestGap, bytes);
            ++seg.gapCount;
        };
        for (const SegmentState::Piece& p : seg.blocks) {
            if (p.offset > cursor)
                gap(p.offset - cursor);
            cursor = std::max(cursor, p.offset + p.size);
        }
        if (seg.segment->size > cursor)
            gap(seg.segment->size - cursor);
        st.gapBytes += seg.gapBytes;
        st.largestGap = std::max(st.largestGap, seg.largestGap);
        st.gapCount += seg.gapCount;
    }
    return st;
}

} // namespace memscope
