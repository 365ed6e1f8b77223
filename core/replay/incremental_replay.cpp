#include "replay/incremental_replay.h"

#include <algorithm>

namespace memscope {

IncrementalDeviceReplay::IncrementalDeviceReplay(int device) : m_device(device) { }

int32_t IncrementalDeviceReplay::earlyAlloc(uint64_t addr, uint64_t size, uint64_t stream)
{
    Allocation a;
    a.addr = addr;
    a.size = size;
    a.stream = stream;
    m_early.push_back(a);
    m_earlyBytes += static_cast<int64_t>(size);
    return ~static_cast<int32_t>(m_early.size() - 1);
}

Allocation& IncrementalDeviceReplay::at(int32_t ref)
{
    return ref >= 0 ? m_traced[static_cast<size_t>(ref)] : m_early[static_cast<size_t>(~ref)];
}

void IncrementalDeviceReplay::closeTraced(int32_t ref)
{
    if (ref >= 0)
        --m_tracedLiveByChunk[static_cast<size_t>(ref) >> ChunkedSeries<Allocation>::kShift];
}

void IncrementalDeviceReplay::append(const EventTable& ev, size_t rowBase, size_t last)
{
    const size_t first = static_cast<size_t>(eventCount());
    if (first == 0 && last > 0) {
        m_firstAction = ev.action[0];
        m_firstTime = ev.timeUs[0];
    }
    for (size_t abs = first; abs < last; ++abs) {
        const int64_t i = static_cast<int64_t>(abs);
        const size_t k = abs - rowBase;
        const uint64_t addr = ev.addr[k];
        const int64_t size = static_cast<int64_t>(ev.size[k]);
        int32_t eventRef = INT32_MIN;
        switch (ev.action[k]) {
        case Action::Alloc: {
            if (int32_t* old = m_live.find(addr)) {
                // The trace lost this block's free: it closes here (replayDevice's doubleAllocs).
                Allocation& o = at(*old);
                o.freeEvent = EventIndex{i};
                if (*old >= 0) // as replayDevice: only a traced block's bytes leave here
                    m_req -= static_cast<int64_t>(o.size);
                closeTraced(*old);
                ++m_doubleAllocs;
                m_live.erase(addr);
            }
            Allocation a;
            a.allocEvent = EventIndex{i};
            a.addr = addr;
            a.size = ev.size[k];
            a.stream = ev.stream[k];
            a.stack = ev.stack[k];
            const int32_t ref = static_cast<int32_t>(m_traced.size());
            m_traced.push_back(a);
            const size_t chunk = static_cast<size_t>(ref) >> ChunkedSeries<Allocation>::kShift;
            if (m_tracedLiveByChunk.size() <= chunk)
                m_tracedLiveByChunk.resize(chunk + 1, 0);
            ++m_tracedLiveByChunk[chunk];
            m_live.insert(addr, ref);
            eventRef = ref;
            m_req += size;
            break;
        }
        case Action::FreeRequested: {
            int32_t ref;
            if (const int32_t* found = m_live.find(addr)) {
                ref = *found;
            } else {
                ref = earlyAlloc(addr, ev.size[k], ev.stream[k]);
                m_live.insert(addr, ref);
                ++m_unmatchedFrees;
            }
            at(ref).freeRequestedEvent = EventIndex{i};
            eventRef = ref;
            break;
        }
        case Action::FreeCompleted: {
            int32_t ref;
            if (const int32_t* found = m_live.find(addr)) {
                ref = *found;
                m_live.erase(addr);
                closeTraced(ref);
            } else {
                ref = earlyAlloc(addr, ev.size[k], ev.stream[k]);
                ++m_unmatchedFrees;
            }
            Allocation& a = at(ref);
            a.freeEvent = EventIndex{i};
            m_req -= static_cast<int64_t>(a.size);
            eventRef = ref;
            break;
        }
        case Action::SegmentAlloc:
        case Action::SegmentMap: m_res += size; break;
        case Action::SegmentFree:
        case Action::SegmentUnmap: m_res -= size; break;
        case Action::Oom: m_oom.push_back(EventIndex{i}); break;
        case Action::Snapshot: m_snapshots.push_back(EventIndex{i}); break;
        case Action::Annotate:
        case Action::Unknown: break;
        }
        m_eventRef.push_back(eventRef);
        m_requested.push_back(m_req);
        m_reserved.push_back(m_res);
        m_minRes = std::min(m_minRes, m_res);
        if (m_req > m_maxReq) {
            m_maxReq = m_req;
            m_maxReqEvent = i;
            m_maxReqTime = ev.timeUs[k];
        }
        if (m_maxResEvent < 0 || m_res > m_maxRes) {
            m_maxRes = m_res;
            m_maxResEvent = i;
            m_maxResTime = ev.timeUs[k];
        }
    }
    if (m_detailEvents > 0)
        evict();
}

void IncrementalDeviceReplay::evict()
{
    const int64_t keepFrom = eventCount() - m_detailEvents;
    if (keepFrom <= 0)
        return;
    m_requested.evictValuesBefore(static_cast<size_t>(keepFrom));
    m_reserved.evictValuesBefore(static_cast<size_t>(keepFrom));
    m_eventRef.evictBefore(static_cast<size_t>(keepFrom));
    // Chunks of allocations all made before the window and all freed: nothing refers to them
    // (a free finds its allocation through the live set). A chunk that still holds a
    // long-lived allocation (a parameter) is pinned and looked at again later; the chunks
    // after it go regardless.
    constexpr size_t kShift = ChunkedSeries<Allocation>::kShift;
    const size_t fullChunks = m_traced.size() >> kShift;
    std::erase_if(m_pinnedChunks, [&](size_t c) {
        if (m_tracedLiveByChunk[c] != 0)
            return false;
        m_traced.evictChunk(c);
        return true;
    });
    for (; m_allocScan < fullChunks; ++m_allocScan) {
        const size_t c = m_allocScan;
        if (m_traced[((c + 1) << kShift) - 1].allocEvent.value >= keepFrom)
            break;
        if (m_tracedLiveByChunk[c] != 0)
            m_pinnedChunks.push_back(c);
        else
            m_traced.evictChunk(c);
    }
}

void IncrementalDeviceReplay::setSegments(const std::vector<Segment>& allSegments)
{
    m_segments.clear();
    m_anySegment = false;
    for (const Segment& s : allSegments)
        if (s.device == m_device) {
            m_segments.push_back(s);
            m_anySegment = true;
        }
}

void IncrementalDeviceReplay::setTraceLimits(bool overflowed, int64_t maxEntries)
{
    m_overflowed = overflowed;
    m_maxEntries = maxEntries;
}

IncrementalDeviceReplay::Baselines IncrementalDeviceReplay::baselines() const
{
    // replayDevice's end of pass: blocks allocated at dump time that are not live existed
    // before the first event. Segments are few; this is O(blocks).
    Baselines b;
    uint64_t finalReserved = 0;
    auto& live = const_cast<AddressMap&>(m_live); // find() does not change the map
    std::vector<uint64_t> seen;
    for (const Segment& seg : m_segments) {
        finalReserved += seg.totalSize;
        for (const Block& blk : seg.blocks) {
            if (blk.state != BlockState::ActiveAllocated && blk.state != BlockState::ActivePendingFree)
                continue;
            if (live.contains(blk.address) || std::find(seen.begin(), seen.end(), blk.address) != seen.end())
                continue;
            seen.push_back(blk.address);
            b.segmentEarlyBytes += static_cast<int64_t>(blk.requestedSize);
            ++b.segmentEarlyCount;
        }
    }
    int64_t base = -m_minRes;
    if (m_anySegment)
        base = std::max(base, static_cast<int64_t>(finalReserved) - m_res);
    b.reservedAtStart = std::max<int64_t>(base, 0);
    return b;
}

DeviceReplayView IncrementalDeviceReplay::view() const
{
    DeviceReplayView v;
    const Baselines b = baselines();
    const int64_t n = eventCount();
    v.device = m_device;
    v.eventCount = n;
    v.preexistingBytes = m_earlyBytes + b.segmentEarlyBytes;
    v.preexistingCount = static_cast<int64_t>(m_early.size()) + b.segmentEarlyCount;
    v.allocationCount = v.preexistingCount + static_cast<int64_t>(m_traced.size());
    v.requestedAtStart = v.preexistingBytes;
    v.reservedAtStart = b.reservedAtStart;
    v.requested = m_requested.view();
    v.reserved = m_reserved.view();
    v.peakRequested = Peak{v.requestedAtStart + std::max<int64_t>(m_maxReq, 0), EventIndex{}, 0};
    if (m_maxReqEvent >= 0) {
        v.peakRequested.event = EventIndex{m_maxReqEvent};
        v.peakRequested.timeUs = m_maxReqTime;
    } else if (n > 0) {
        v.peakRequested.timeUs = m_firstTime;
    }
    v.peakReserved = Peak{v.reservedAtStart, EventIndex{}, 0};
    if (m_maxResEvent >= 0 && m_maxRes > 0) {
        v.peakReserved = Peak{m_maxRes + v.reservedAtStart, EventIndex{m_maxResEvent}, m_maxResTime};
    } else if (n > 0) {
        v.peakReserved.timeUs = m_firstTime;
    }
    v.oomEvents = m_oom;
    v.snapshotEvents = m_snapshots;
    v.unmatchedFrees = m_unmatchedFrees;
    v.doubleAllocs = m_doubleAllocs;
    // replayDevice's detectTruncation(), on the same figures.
    if (m_overflowed) {
        v.truncated = true;
        v.truncationReason = "the allocator reports its trace ring buffer overflowed (trace_alloc_overflowed)";
    } else if (m_maxEntries > 0 && n >= m_maxEntries) {
        v.truncated = true;
        v.truncationReason = "the trace holds " + std::to_string(n) +
                             " entries, the ring buffer's capacity "
                             "(trace_alloc_max_entries): older entries were dropped";
    } else if (n > 0 && m_unmatchedFrees > 0) {
        const bool opensWithFree = m_firstAction == Action::FreeRequested || m_firstAction == Action::FreeCompleted;
        const bool roundLength = n % 1000 == 0 || (n & (n - 1)) == 0;
        if (opensWithFree || roundLength) {
            v.truncated = true;
            v.truncationReason = "the trace opens mid-run (" + std::to_string(m_unmatchedFrees) +
                                 " frees of allocations it never saw" +
                                 (roundLength ? ", and exactly " + std::to_string(n) + " entries" : std::string()) +
                                 "): the allocator's ring buffer (max_entries) most likely dropped the oldest entries";
        }
    }
    return v;
}

std::vector<Allocation> IncrementalDeviceReplay::allocations() const
{
    std::vector<Allocation> out(m_early);
    auto& live = const_cast<AddressMap&>(m_live);
    std::vector<uint64_t> seen;
    for (const Segment& seg : m_segments)
        for (const Block& blk : seg.blocks) {
            if (blk.state != BlockState::ActiveAllocated && blk.state != BlockState::ActivePendingFree)
                continue;
            if (live.contains(blk.address) || std::find(seen.begin(), seen.end(), blk.address) != seen.end())
                continue;
            seen.push_back(blk.address);
            Allocation a;
            a.addr = blk.address;
            a.size = blk.requestedSize;
            a.stream = seg.stream;
            a.stack = blk.stack;
            out.push_back(a);
        }
    out.reserve(out.size() + m_traced.size());
    for (size_t i = 0; i < m_traced.size(); ++i)
        out.push_back(m_traced.holds(i) ? m_traced[i] : Allocation{});
    return out;
}

std::vector<AllocationId> IncrementalDeviceReplay::eventAllocation() const
{
    const int32_t earlyCount = static_cast<int32_t>(view().preexistingCount);
    std::vector<AllocationId> out(m_eventRef.size());
    for (size_t i = m_eventRef.firstHeld(); i < m_eventRef.size(); ++i) {
        const int32_t ref = m_eventRef[i];
        out[i] = ref == INT32_MIN ? AllocationId{} : AllocationId{ref >= 0 ? ref + earlyCount : ~ref};
    }
    return out;
}

size_t IncrementalDeviceReplay::heldBytes() const
{
    return m_requested.heldBytes() + m_reserved.heldBytes() + m_eventRef.heldBytes() + m_traced.heldBytes() +
           m_early.capacity() * sizeof(Allocation) + m_live.size() * 32;
}

} // namespace memscope
