#include "replay/device_replay.h"

#include "common/huge_pages.h"
#include "common/prefaulter.h"
#include "replay/address_map.h"

#include <algorithm>
#include <cstdint>

namespace memscope {

namespace {

struct Builder {
    const Snapshot& snap;
    const DeviceTrace& trace;
    DeviceReplay r;
    std::vector<Allocation> traced; // in alloc order
    std::vector<Allocation> early; // reconstructed: alive before the first event
    // During the pass r.eventAllocation holds refs: >= 0 traced index, < 0 ~early index,
    // INT32_MIN none; they are renumbered in place at the end.
    AddressMap live;

    Builder(const Snapshot& s, const DeviceTrace& t) : snap(s), trace(t) { }

    int32_t earlyAlloc(uint64_t addr, uint64_t size, uint64_t stream)
    {
        Allocation a;
        a.addr = addr;
        a.size = size;
        a.stream = stream;
        early.push_back(a);
        return ~static_cast<int32_t>(early.size() - 1);
    }
    Allocation& at(int32_t ref) { return ref >= 0 ? traced[static_cast<size_t>(ref)] : early[static_cast<size_t>(~ref)]; }

    void run()
    {
        const EventTable& ev = trace.events;
        const int64_t n = static_cast<int64_t>(ev.count());
        r.device = trace.device;
        r.eventCount = n;
        // The per-event columns are written in order with push_back; their pages are
        // faulted in on the other core meanwhile.
        reserveHuge(r.eventAllocation, static_cast<size_t>(n));
        r.requested.reserve(static_cast<size_t>(n));
        r.reserved.reserve(static_cast<size_t>(n));
        reserveHuge(traced, static_cast<size_t>(std::count(ev.action.begin(), ev.action.end(), Action::Alloc)) + 1024);
        Prefaulter prefault;
        prefault.add(r.eventAllocation);
        prefault.add(r.reserved.narrowBuffer().first, r.reserved.narrowBuffer().second);
        prefault.add(traced);
        prefault.add(r.requested.narrowBuffer().first, r.requested.narrowBuffer().second);
        prefault.start();

        // Pass 1: pair allocs with frees; reserved as deltas from zero.
        int64_t res = 0;
        int64_t minRes = 0;
        for (int64_t i = 0; i < n; ++i) {
            const size_t k = static_cast<size_t>(i);
            const uint64_t addr = ev.addr[k];
            const int64_t size = static_cast<int64_t>(ev.size[k]);
            int32_t eventRef = INT32_MIN;
            switch (ev.action[k]) {
            case Action::Alloc: {
                if (int32_t* old = live.find(addr)) {
                    // The trace lost this block's free: close it here rather than count it twice.
                    at(*old).freeEvent = EventIndex{i};
                    ++r.doubleAllocs;
                    live.erase(addr);
                }
                Allocation a;
                a.allocEvent = EventIndex{i};
                a.addr = addr;
                a.size = ev.size[k];
                a.stream = ev.stream[k];
                a.stack = ev.stack[k];
                traced.push_back(a);
                const int32_t ref = static_cast<int32_t>(traced.size() - 1);
                live.insert(addr, ref);
                eventRef = ref;
                break;
            }
            case Action::FreeRequested: {
                int32_t ref;
                if (const int32_t* found = live.find(addr)) {
                    ref = *found;
                } else {
                    ref = earlyAlloc(addr, ev.size[k], ev.stream[k]);
                    live.insert(addr, ref);
                    ++r.unmatchedFrees;
                }
                at(ref).freeRequestedEvent = EventIndex{i};
                eventRef = ref;
                break;
            }
            case Action::FreeCompleted: {
                int32_t ref;
                if (const int32_t* found = live.find(addr)) {
                    ref = *found;
                    live.erase(addr);
                } else {
                    ref = earlyAlloc(addr, ev.size[k], ev.stream[k]);
                    ++r.unmatchedFrees;
                }
                at(ref).freeEvent = EventIndex{i};
                eventRef = ref;
                break;
            }
            case Action::SegmentAlloc:
            case Action::SegmentMap: res += size; break;
            case Action::SegmentFree:
            case Action::SegmentUnmap: res -= size; break;
            case Action::Oom: r.oomEvents.push_back(EventIndex{i}); break;
            case Action::Snapshot: r.snapshotEvents.push_back(EventIndex{i}); break;
            case Action::Annotate:
            case Action::Unknown: break;
            }
            r.eventAllocation.push_back(AllocationId{eventRef});
            r.reserved.push_back(res);
            minRes = std::min(minRes, res);
        }

        // Blocks allocated at dump time that the replay does not have live existed before
        // the first event (or their alloc fell out of the ring buffer).
        uint64_t finalReserved = 0;
        bool anySegment = false;
        for (const Segment& seg : snap.segments) {
            if (seg.device != trace.device)
                continue;
            anySegment = true;
            finalReserved += seg.totalSize;
            for (const Block& b : seg.blocks) {
                if (b.state != BlockState::ActiveAllocated && b.state != BlockState::ActivePendingFree)
                    continue;
                if (live.contains(b.address))
                    continue;
                const int32_t ref = earlyAlloc(b.address, b.requestedSize, seg.stream);
                at(ref).stack = b.stack;
                live.insert(b.address, ref);
            }
        }

        int64_t earlyBytes = 0;
        for (const Allocation& a : early)
            earlyBytes += static_cast<int64_t>(a.size);
        r.preexistingBytes = earlyBytes;
        r.preexistingCount = static_cast<int64_t>(early.size());
        r.requestedAtStart = earlyBytes;
        // Requested curve. An alloc over a still-live address closed the older block at
        // that same event (doubleAllocs), so its bytes leave there.
        std::vector<int64_t> closedAt;
        if (r.doubleAllocs > 0) {
            closedAt.assign(static_cast<size_t>(n), 0);
            for (const Allocation& a : traced)
                if (a.freeEvent.valid() && ev.action[static_cast<size_t>(a.freeEvent.value)] == Action::Alloc)
                    closedAt[static_cast<size_t>(a.freeEvent.value)] += static_cast<int64_t>(a.size);
        }
        // A block of events at a time into a small buffer, then encoded in one pass (append);
        // the requested peak is found on the way.
        int64_t cur = earlyBytes;
        r.peakRequested = Peak{earlyBytes, EventIndex{}, 0};
        std::vector<int64_t> chunk(CompactCurve::kBlock);
        const size_t total = static_cast<size_t>(n);
        for (size_t from = 0; from < total; from += CompactCurve::kBlock) {
            const size_t count = std::min(CompactCurve::kBlock, total - from);
            int64_t best = r.peakRequested.bytes;
            size_t bestAt = SIZE_MAX;
            for (size_t j = 0; j < count; ++j) {
                const size_t k = from + j;
                const Action a = ev.action[k];
                if (a == Action::Alloc) {
                    cur += static_cast<int64_t>(ev.size[k]);
                    if (!closedAt.empty())
                        cur -= closedAt[k];
                } else if (a == Action::FreeCompleted) {
                    cur -= static_cast<int64_t>(at(r.eventAllocation[k].value).size);
                }
                chunk[j] = cur;
                if (cur > best) {
                    best = cur;
                    bestAt = k;
                }
            }
            if (bestAt != SIZE_MAX)
                r.peakRequested = Peak{best, EventIndex{static_cast<int64_t>(bestAt)}, ev.timeUs[bestAt]};
            r.requested.append(chunk.data(), count);
        }
        prefault.join();

        const int64_t netReserved = n ? r.reserved.back() : 0;
        int64_t baseRes = -minRes;
        if (anySegment)
            baseRes = std::max(baseRes, static_cast<int64_t>(finalReserved) - netReserved);
        baseRes = std::max<int64_t>(baseRes, 0);
        r.reservedAtStart = baseRes;
        r.reserved.addToAll(baseRes);

        // Final numbering: early allocations first, then traced in alloc order.
        const int32_t earlyCount = static_cast<int32_t>(early.size());
        // Usually in place: `traced` was reserved with room for the early ones.
        r.allocations = std::move(traced);
        r.allocations.insert(r.allocations.begin(), early.begin(), early.end());
        for (int64_t i = 0; i < n; ++i) {
            const int32_t ref = r.eventAllocation[static_cast<size_t>(i)].value;
            r.eventAllocation[static_cast<size_t>(i)] = ref == INT32_MIN ? AllocationId{}
                                                                         : AllocationId{ref >= 0 ? ref + earlyCount : ~ref};
        }

        computePeaks();
        detectTruncation();
        buildCheckpoints();
    }

    void computePeaks()
    {
        const EventTable& ev = trace.events;
        // The requested peak was found while its curve was built.
        r.peakReserved = Peak{r.reservedAtStart, EventIndex{}, 0};
        if (!r.reserved.empty()) {
            const size_t k = r.reserved.firstMaxIndex(0, r.reserved.size());
            if (r.reserved[k] > r.peakReserved.bytes)
                r.peakReserved = Peak{r.reserved[k], EventIndex{static_cast<int64_t>(k)}, ev.timeUs[k]};
        }
        if (!r.peakRequested.event.valid() && !r.requested.empty())
            r.peakRequested.timeUs = ev.timeUs.front();
        if (!r.peakReserved.event.valid() && !r.reserved.empty())
            r.peakReserved.timeUs = ev.timeUs.front();
    }

    void detectTruncation()
    {
        const int64_t n = r.eventCount;
        if (snap.traceOverflowed) {
            r.truncated = true;
            r.truncationReason = "the allocator reports its trace ring buffer overflowed (trace_alloc_overflowed)";
        } else if (snap.traceMaxEntries > 0 && n >= snap.traceMaxEntries) {
            r.truncated = true;
            r.truncationReason = "the trace holds " + std::to_string(n) +
                                 " entries, the ring buffer's capacity "
                                 "(trace_alloc_max_entries): older entries were dropped";
        } else if (n > 0 && r.unmatchedFrees > 0) {
            // Frees of unknown allocations mean either allocations made before recording
            // began or a ring buffer that dropped its oldest entries. A trace that opens
            // with such a free, or has a round length, is a full ring buffer.
            const EventTable& ev = trace.events;
            const Action first = ev.action.front();
            const bool opensWithFree = first == Action::FreeRequested || first == Action::FreeCompleted;
            const bool roundLength = n % 1000 == 0 || (n & (n - 1)) == 0;
            if (opensWithFree || roundLength) {
                r.truncated = true;
                r.truncationReason = "the trace opens mid-run (" + std::to_string(r.unmatchedFrees) +
                                     " frees of allocations it never saw" +
                                     (roundLength ? ", and exactly " + std::to_string(n) + " entries" : std::string()) +
                                     "): the allocator's ring buffer (max_entries) most likely dropped the oldest entries";
            }
        }
    }

    void buildCheckpoints()
    {
        const int64_t n = r.eventCount;
        // A checkpoint every 1024 events where the live sets are small, so that a query
        // (each pixel column of the allocations view asks one) replays ~512 events: their
        // ids together at most one per two events or allocations (+1M), ~2 bytes an event.
        // Never a longer stride than the earlier rule gave (2048 checkpoints, ~16 ids per
        // event or allocation): a trace that keeps very many allocations alive gets a longer
        // stride, not quadratic memory.
        std::vector<int32_t> activeBefore;
        assignHuge(activeBefore, static_cast<size_t>(n) + 2, 0);
        for (const Allocation& a : r.allocations) {
            ++activeBefore[a.allocEvent.valid() ? static_cast<size_t>(a.allocEvent.value) + 1 : 0];
            --activeBefore[a.freeEvent.valid() ? static_cast<size_t>(a.freeEvent.value) + 1 : static_cast<size_t>(n) + 1];
        }
        for (size_t k = 1; k < activeBefore.size(); ++k)
            activeBefore[k] += activeBefore[k - 1];
        auto held = [&](int64_t stride) {
            int64_t total = 0;
            for (int64_t i = 0; i <= n; i += stride)
                total += activeBefore[static_cast<size_t>(i)];
            return total;
        };
        const int64_t ids = n + static_cast<int64_t>(r.allocations.size());
        auto strideFor = [&](int64_t stride, int64_t budget) {
            while (stride < n && held(stride) > budget)
                stride *= 2;
            return stride;
        };
        r.checkpointStride = std::min(strideFor(1024, ids / 2 + (int64_t(1) << 20)),
                                      strideFor(std::max<int64_t>(1024, n / 2048), 16 * ids + (int64_t(1) << 20)));
        std::vector<AllocationId> cur;
        for (int32_t i = 0; i < static_cast<int32_t>(r.preexistingCount); ++i) // numbered first
            cur.push_back(AllocationId{i});
        const EventTable& ev = trace.events;
        for (int64_t i = 0; i <= n; ++i) {
            if (i % r.checkpointStride == 0) {
                std::erase_if(cur,
                              [&](AllocationId id) { return !r.allocations[static_cast<size_t>(id.value)].activeAfter(i - 1); });
                if (!std::is_sorted(cur.begin(), cur.end())) // ids follow alloc order: sorted already
                    std::sort(cur.begin(), cur.end());
                r.checkpoints.push_back(cur);
            }
            if (i == n)
                break;
            const size_t k = static_cast<size_t>(i);
            const AllocationId id = r.eventAllocation[k];
            if (id.valid() && ev.action[k] == Action::Alloc)
                cur.push_back(id);
        }
    }
};

} // namespace

std::vector<AllocationId> DeviceReplay::activeAfter(int64_t i) const
{
    i = std::clamp<int64_t>(i, -1, eventCount - 1);
    const int64_t j = (i + 1) / checkpointStride;
    std::vector<AllocationId> out = checkpoints[static_cast<size_t>(j)];
    const int64_t from = j * checkpointStride;
    for (int64_t e = from; e <= i; ++e) {
        const AllocationId id = eventAllocation[static_cast<size_t>(e)];
        if (id.valid() && allocations[static_cast<size_t>(id.value)].allocEvent.value == e)
            out.push_back(id);
    }
    std::erase_if(out, [&](AllocationId id) { return !allocations[static_cast<size_t>(id.value)].activeAfter(i); });
    std::sort(out.begin(), out.end());
    return out;
}

DeviceReplay replayDevice(const Snapshot& snapshot, const DeviceTrace& trace)
{
    Builder b(snapshot, trace);
    b.run();
    return std::move(b.r);
}

} // namespace memscope
