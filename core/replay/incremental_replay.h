#pragma once

#include <cstddef> // before address_map.h, which uses size_t

#include "replay/address_map.h"
#include "replay/allocation.h"
#include "replay/chunked_series.h"
#include "replay/growing_pyramid.h"
#include "snapshot/snapshot.h"

#include <cstdint>
#include <string>
#include <vector>

namespace memscope {

/*
 * What the live tab draws of one device, as published after an update: immutable, shared
 * with the replay that keeps growing (see ChunkedSeries), so taking it costs one pointer
 * per 16,384 events and reading it needs no lock.
 *
 * The curves are stored relative to their baselines: requestedAfter(i) = requested value i +
 * requestedAtStart. A whole-file replay (replay/device_replay.h) starts both curves from a
 * baseline that events arriving later can raise (a free of an allocation the trace never saw
 * was alive from the start; the reserved baseline is the lowest running sum), so storing the
 * baseline apart keeps every stored value final. Min/max indexes do not depend on it.
 */
struct DeviceReplayView {
    int device = 0;
    int64_t eventCount = 0;
    int64_t requestedAtStart = 0;
    int64_t reservedAtStart = 0;
    int64_t preexistingBytes = 0;
    int64_t preexistingCount = 0;
    int64_t allocationCount = 0; // pre-existing + traced, as a whole-file replay numbers them
    Peak peakRequested;
    Peak peakReserved;
    GrowingPyramid::View requested; // relative values and their min/max pyramid
    GrowingPyramid::View reserved;
    std::vector<EventIndex> oomEvents;
    std::vector<EventIndex> snapshotEvents;
    int64_t unmatchedFrees = 0;
    int64_t doubleAllocs = 0;
    bool truncated = false;
    std::string truncationReason;

    // Requires the event's detail to be held (requested.values().has(i)) or i < 0.
    int64_t requestedAfter(int64_t i) const
    {
        return i < 0 ? requestedAtStart : requested.values()[static_cast<size_t>(i)] + requestedAtStart;
    }
    int64_t reservedAfter(int64_t i) const
    {
        return i < 0 ? reservedAtStart : reserved.values()[static_cast<size_t>(i)] + reservedAtStart;
    }
};

/*
 * The replay of one device continued event by event: the state a whole-file replay
 * (replayDevice) holds in its single pass — the live set by address, the running requested
 * and reserved sums, the lowest reserved sum, the allocations and which event made or freed
 * each — is kept between calls, so append() costs O(new events) and view() O(chunks), never
 * O(history). After any append, view() equals replayDevice() of the same prefix: every
 * curve value, both peaks with their events, the baselines, the allocations and their
 * numbering (allocations(), eventAllocation()), the OOM and snapshot events, the truncation
 * verdict (tests/live/tst_incremental_replay.cpp cuts real recordings at random points).
 *
 * Bounded mode (setDetailEvents): per-event detail older than the newest N events is let go
 * a chunk at a time, and so are chunks of allocations all freed before it; the pyramids keep
 * the whole run's overview. The on-disk recording holds the rest.
 */
class IncrementalDeviceReplay {
public:
    explicit IncrementalDeviceReplay(int device = 0);

    // Applies rows [eventCount(), last) of the device's table (columns action, addr, size,
    // stream, timeUs, stack). The table may have grown by any amount since the last call.
    void append(const EventTable& events, size_t last) { append(events, 0, last); }
    // The same for a table whose row r is event rowBase + r (LiveRecording::releaseEvents).
    void append(const EventTable& events, size_t rowBase, size_t last);
    // The dump-time segments of the recording (the agent sends them at the end), which raise
    // the baselines like a whole-file replay's; and the ring buffer's figures.
    void setSegments(const std::vector<Segment>& allSegments);
    void setTraceLimits(bool overflowed, int64_t maxEntries);
    // 0 (the default): keep every event's detail.
    void setDetailEvents(int64_t events) { m_detailEvents = events; }

    int device() const { return m_device; }
    int64_t eventCount() const { return m_requested.size(); }
    DeviceReplayView view() const;

    // As a whole-file replay numbers them (pre-existing first, then traced in alloc order):
    // O(allocations), for tests and for materialising a full replay; evicted ones are default.
    std::vector<Allocation> allocations() const;
    std::vector<AllocationId> eventAllocation() const;
    size_t heldBytes() const;

private:
    int32_t earlyAlloc(uint64_t addr, uint64_t size, uint64_t stream);
    Allocation& at(int32_t ref);
    void closeTraced(int32_t ref);
    void evict();
    struct Baselines {
        int64_t segmentEarlyBytes = 0;
        int64_t segmentEarlyCount = 0;
        int64_t reservedAtStart = 0;
    };
    Baselines baselines() const;

    int m_device = 0;
    AddressMap m_live;
    ChunkedSeries<Allocation> m_traced; // in alloc order
    std::vector<int32_t> m_tracedLiveByChunk; // live allocations per chunk of m_traced
    std::vector<Allocation> m_early; // alive before the first event, in the order found
    int64_t m_earlyBytes = 0;
    ChunkedSeries<int32_t> m_eventRef; // >= 0 traced index, < 0 ~early index, INT32_MIN none
    GrowingPyramid m_requested; // relative to the baseline
    GrowingPyramid m_reserved;
    int64_t m_req = 0;
    int64_t m_res = 0;
    int64_t m_minRes = 0;
    int64_t m_maxReq = 0; // relative; a peak event only when > 0, as the whole-file replay
    int64_t m_maxReqEvent = -1;
    int64_t m_maxReqTime = 0;
    int64_t m_maxRes = 0;
    int64_t m_maxResEvent = -1;
    int64_t m_maxResTime = 0;
    int64_t m_firstTime = 0;
    Action m_firstAction = Action::Unknown;
    std::vector<EventIndex> m_oom;
    std::vector<EventIndex> m_snapshots;
    int64_t m_unmatchedFrees = 0;
    int64_t m_doubleAllocs = 0;
    bool m_overflowed = false;
    int64_t m_maxEntries = 0;
    std::vector<Segment> m_segments; // this device's
    bool m_anySegment = false;
    int64_t m_detailEvents = 0;
    size_t m_allocScan = 0; // chunks of m_traced before this one are evicted or pinned
    std::vector<size_t> m_pinnedChunks; // wholly before the window, but holding a live allocation
};

} // namespace memscope
