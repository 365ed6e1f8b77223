#include "diagnose/unused_cache_detector.h"

#include "query/free_space.h"

#include <algorithm>

namespace memscope {

namespace {

constexpr uint64_t kPage = uint64_t{2} << 20;

} // namespace

std::optional<Diagnostic> detectUnusedCache(const DeviceContext& ctx)
{
    const DeviceReplay& r = ctx.replay;
    int64_t reserved = 0, inUse = 0, requested = 0, releasable = 0;
    FreeSpace free;
    int64_t segments = 0, releasableSegments = 0;
    for (const Segment& s : ctx.snapshot.segments) {
        if (s.device != ctx.device())
            continue;
        ++segments;
        reserved += static_cast<int64_t>(s.totalSize);
        bool active = false;
        uint64_t pagesFree = 0;
        for (const Block& b : s.blocks) {
            if (b.state == BlockState::ActiveAllocated || b.state == BlockState::ActivePendingFree) {
                active = true;
                inUse += static_cast<int64_t>(b.size);
                requested += static_cast<int64_t>(b.requestedSize);
            } else if (b.state == BlockState::Inactive) {
                free.add(b.size);
                const uint64_t lo = (b.address + kPage - 1) / kPage * kPage;
                const uint64_t hi = (b.address + b.size) / kPage * kPage;
                if (hi > lo)
                    pagesFree += hi - lo;
            }
        }
        if (s.blocks.empty()) {
            inUse += static_cast<int64_t>(s.allocatedSize);
            requested += static_cast<int64_t>(s.requestedSize);
            active = s.allocatedSize > 0;
        }
        if (s.expandable) {
            releasable += static_cast<int64_t>(pagesFree);
        } else if (!active) {
            releasable += static_cast<int64_t>(s.totalSize);
            ++releasableSegments;
        }
    }
    const bool haveSegments = segments > 0;
    const int64_t last = r.eventCount - 1;
    if (!haveSegments) {
        reserved = r.reservedAfter(last);
        requested = r.requestedAfter(last);
        inUse = requested;
    }
    const int64_t unused = reserved - inUse;
    const int64_t peakReserved = r.peakReserved.bytes;
    const int64_t peakReservedEvent = r.peakReserved.event.valid() ? r.peakReserved.event.value : -1;
    const int64_t unusedAtPeak = peakReserved - r.requestedAfter(peakReservedEvent);

    const int64_t freeTotal = static_cast<int64_t>(free.bytes), largestFree = static_cast<int64_t>(free.largest);
    const double fragmentation = free.fragmentation();
    const bool fragmented = haveSegments && freeTotal >= (int64_t{256} << 20) && largestFree * 4 < freeTotal;
    if (!fragmented && (unused < (int64_t{64} << 20) || unused * 5 < reserved))
        return std::nullopt;

    Diagnostic d;
    d.kind = DiagnosticKind::UnusedCache;
    d.severity = Severity::Info;
    d.deviceIndex = ctx.deviceIndex;
    d.device = ctx.device();
    d.bytes = unused;
    d.event = last;
    d.message = formatBytes(unused) + " cached but unused (" + formatBytes(reserved) + " reserved, " + formatBytes(inUse) +
                " in use)";
    if (haveSegments) {
        d.message += "; empty_cache() would return " + formatBytes(releasable) + "; largest free block " +
                     formatBytes(largestFree) + " of " + formatBytes(freeTotal) + " free";
        d.detail = "At the end of the recording the allocator held " + std::to_string(segments) + " segments. " +
                   std::to_string(releasableSegments) +
                   " of them hold no live block: torch.cuda.empty_cache() would "
                   "hand those back to the driver. The free memory is " +
                   std::to_string(static_cast<long long>(fragmentation * 100.0 + 0.5)) +
                   "% fragmented (1 - largest free block / free total). At the reserved peak (" + formatBytes(peakReserved) +
                   ") " + formatBytes(unusedAtPeak) + " was reserved but not requested.";
    } else {
        d.detail = "The snapshot holds no segments for this device: the figures are the curves at the last event.";
    }
    d.fix = fragmented ? "The free memory is in many small pieces: set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True "
                         "(or a max_split_size_mb) so large requests can reuse it; torch.cuda.empty_cache() returns whole "
                         "free segments to the driver."
                       : "This is the caching allocator keeping freed memory for reuse; it costs nothing to this process. "
                         "Call torch.cuda.empty_cache() only when another process or library needs the memory.";
    d.figures = {{"reserved", "Reserved", reserved},
                 {"in_use", "In use (rounded blocks)", inUse},
                 {"requested", "Requested by live tensors", requested},
                 {"unused", "Cached but unused", unused},
                 {"empty_cache_returns", "empty_cache() would return", releasable},
                 {"releasable_segments", "Segments with no live block", releasableSegments, false},
                 {"free_total", "Free inside segments", freeTotal},
                 {"largest_free_block", "Largest free block", largestFree},
                 {"fragmentation_percent", "Fragmentation (%)", static_cast<int64_t>(fragmentation * 100.0 + 0.5), false},
                 {"peak_reserved", "Peak reserved", peakReserved},
                 {"unused_at_reserved_peak", "Unused at the reserved peak", unusedAtPeak}};
    return d;
}

} // namespace memscope
