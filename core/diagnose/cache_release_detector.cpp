#include "diagnose/cache_release_detector.h"

#include "diagnose/evidence.h"

#include <algorithm>

namespace memscope {

namespace {

struct Release {
    int64_t first = 0;
    int64_t last = 0;
    int64_t bytes = 0;
    int64_t segments = 0;
    StackId stack;
    bool emptyCache = false;
    bool underPressure = false;
};

bool isSegmentRelease(Action a) { return a == Action::SegmentFree || a == Action::SegmentUnmap; }

bool isAllocation(Action a) { return a == Action::Alloc || a == Action::SegmentAlloc || a == Action::SegmentMap; }

bool passesThrough(const Snapshot& s, StackId stack, std::string_view name)
{
    if (!stack.valid())
        return false;
    for (FrameId f : s.stacks.frames(stack))
        if (s.str(s.frames.frame(f).name).find(name) != std::string_view::npos)
            return true;
    return false;
}

} // namespace

std::optional<Diagnostic> detectCacheRelease(const DeviceContext& ctx)
{
    const EventTable& ev = ctx.events();
    const int64_t n = static_cast<int64_t>(ev.count());
    std::vector<Release> releases;
    for (int64_t i = 0; i < n; ++i) {
        const Action act = ev.action[static_cast<size_t>(i)];
        if (!isSegmentRelease(act))
            continue;
        const bool extend = !releases.empty() && [&] {
            for (int64_t j = releases.back().last + 1; j < i; ++j)
                if (isAllocation(ev.action[static_cast<size_t>(j)]))
                    return false;
            return true;
        }();
        if (!extend) {
            Release r;
            r.first = i;
            r.stack = ev.stack[static_cast<size_t>(i)];
            releases.push_back(r);
        }
        Release& r = releases.back();
        r.last = i;
        r.bytes += static_cast<int64_t>(ev.size[static_cast<size_t>(i)]);
        ++r.segments;
    }
    if (releases.empty())
        return std::nullopt;

    int64_t total = 0;
    bool pressure = false;
    for (Release& r : releases) {
        r.emptyCache = passesThrough(ctx.snapshot, r.stack, "empty_cache");
        if (!r.emptyCache)
            for (int64_t j = r.last + 1; j < n; ++j) {
                const Action act = ev.action[static_cast<size_t>(j)];
                if (act == Action::SegmentAlloc || act == Action::SegmentMap) {
                    r.underPressure = true;
                    break;
                }
                if (act == Action::Alloc)
                    break;
            }
        total += r.bytes;
        pressure = pressure || r.underPressure;
    }
    const Release& big = *std::max_element(releases.begin(), releases.end(),
                                           [](const Release& a, const Release& b) { return a.bytes < b.bytes; });
    const DeviceReplay& rep = ctx.replay;
    const int64_t before = rep.reservedAfter(big.first - 1);
    const int64_t after = rep.reservedAfter(big.last);
    const std::string where = siteText(ctx.frames, big.stack);

    Diagnostic d;
    d.kind = DiagnosticKind::CacheReleased;
    d.severity = pressure ? Severity::Warning : Severity::Info;
    d.deviceIndex = ctx.deviceIndex;
    d.device = ctx.device();
    d.bytes = total;
    d.event = big.first;
    const std::string who = big.emptyCache      ? "torch.cuda.empty_cache()"
                            : big.underPressure ? "the allocator (to satisfy a failed cudaMalloc)"
                                                : "the allocator";
    d.message = formatBytes(total) + " of cached memory handed back to the driver in " + std::to_string(releases.size()) +
                (releases.size() == 1 ? " release" : " releases") + ": " + who + " at " + where + " returned " +
                formatBytes(big.bytes) + " (" + std::to_string(big.segments) + (big.segments == 1 ? " segment" : " segments") +
                "), reserved " + formatBytes(before) + " -> " + formatBytes(after);
    d.detail = "Freed tensors stay in PyTorch's cache until it is emptied; at this release " +
               formatBytes(rep.requestedAfter(big.last)) + " was still requested by live tensors.";
    if (pressure)
        d.detail += " The allocator emptied its cache because a cudaMalloc failed: the device was close to full and "
                    "synchronizing frees costs time.";
    d.fix = pressure ? "Lower the peak (see the peak finding) or set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True so "
                       "the cache fragments less and the allocator does not have to free and re-allocate."
                     : "Nothing to fix: after `del`/`.to('cpu')` and `gc.collect()`, torch.cuda.empty_cache() is how "
                       "cached memory is returned for other processes. It does not lower this process's own peak.";
    for (const Release& r : releases) {
        EvidenceSite s;
        s.stack = r.stack;
        s.bytes = r.bytes;
        s.count = r.segments;
        auto it = std::find_if(d.sites.begin(), d.sites.end(), [&](const EvidenceSite& x) { return x.stack == r.stack; });
        if (it == d.sites.end())
            d.sites.push_back(s);
        else {
            it->bytes += s.bytes;
            it->count += s.count;
        }
    }
    std::sort(d.sites.begin(), d.sites.end(), [](const EvidenceSite& a, const EvidenceSite& b) { return a.bytes > b.bytes; });
    if (d.sites.size() > kMaxEvidenceSites)
        d.sites.resize(kMaxEvidenceSites);
    d.figures = {{"released", "Handed back", total},
                 {"releases", "Releases", static_cast<int64_t>(releases.size()), false},
                 {"largest_release", "Largest release", big.bytes},
                 {"reserved_before", "Reserved before it", before},
                 {"reserved_after", "Reserved after it", after},
                 {"requested_at_release", "Requested at it", rep.requestedAfter(big.last)}};
    return d;
}

} // namespace memscope
