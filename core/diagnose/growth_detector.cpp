#include "diagnose/growth_detector.h"

#include "diagnose/evidence.h"

#include <algorithm>
#include <set>

namespace memscope {

namespace {

int64_t median(std::vector<int64_t> v)
{
    std::sort(v.begin(), v.end());
    const size_t m = v.size() / 2;
    return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

} // namespace

std::optional<Diagnostic> detectGrowth(const DeviceContext& ctx, const std::vector<Pass>& passes)
{
    const size_t n = passes.size();
    if (n < 3)
        return std::nullopt;
    const DeviceReplay& r = ctx.replay;

    std::vector<int64_t> live(n);
    for (size_t k = 0; k < n; ++k)
        live[k] = r.requestedAfter(passes[k].firstEvent - 1);
    std::vector<int64_t> steps;
    for (size_t k = 1; k + 1 < n; ++k)
        steps.push_back(live[k + 1] - live[k]);
    const int64_t liveStep = median(steps);
    const int64_t threshold = std::max<int64_t>(int64_t{1} << 20, r.peakRequested.bytes / 1000);
    if (liveStep <= threshold)
        return std::nullopt;
    for (int64_t s : steps)
        if (s < liveStep / 4)
            return std::nullopt;

    // Allocations of the steady passes still alive when the loop ends.
    const int64_t loopEnd = passes.back().lastEvent;
    std::vector<int64_t> retainedPerPass(n, 0);
    std::vector<int64_t> retainedCountPerPass(n, 0);
    std::vector<std::set<int32_t>> stacksPerPass(n);
    std::vector<AllocationId> retained;
    size_t pass = 0;
    for (size_t i = 0; i < r.allocations.size(); ++i) {
        const Allocation& a = r.allocations[i];
        if (a.preexisting() || a.allocEvent.value < passes.front().firstEvent || a.allocEvent.value > loopEnd)
            continue;
        while (pass + 1 < n && a.allocEvent.value > passes[pass].lastEvent)
            ++pass;
        if (a.allocEvent.value < passes[pass].firstEvent || !a.activeAfter(loopEnd) || freedInBackward(ctx.attribution, a))
            continue;
        retainedPerPass[pass] += static_cast<int64_t>(a.size);
        ++retainedCountPerPass[pass];
        stacksPerPass[pass].insert(a.stack.value);
        if (pass >= 1 && pass + 1 < n)
            retained.push_back(AllocationId{static_cast<int32_t>(i)});
    }
    std::vector<int64_t> steadyRetained, steadyCounts, steadyStacks;
    for (size_t k = 1; k + 1 < n; ++k) {
        steadyRetained.push_back(retainedPerPass[k]);
        steadyCounts.push_back(retainedCountPerPass[k]);
        steadyStacks.push_back(static_cast<int64_t>(stacksPerPass[k].size()));
    }
    const int64_t perIteration = median(steadyRetained);
    if (perIteration < liveStep / 2)
        return std::nullopt;
    const int64_t tensorsPerPass = median(steadyCounts);
    const int64_t sitesPerPass = median(steadyStacks);
    const bool graphKept = tensorsPerPass >= 8 && sitesPerPass >= 4;

    Diagnostic d;
    d.kind = DiagnosticKind::Growth;
    d.deviceIndex = ctx.deviceIndex;
    d.device = ctx.device();
    d.bytesPerIteration = perIteration;
    d.iterations = static_cast<int>(n);
    const int64_t endLive = r.requestedAfter(loopEnd);
    d.bytes = std::max<int64_t>(0, endLive - live[0]);
    d.event = loopEnd;
    d.severity = d.bytes * 2 >= r.peakRequested.bytes ? Severity::Error : Severity::Warning;
    setEvidence(d, r, retained);
    const FrameId site = dominantUserFrame(ctx.frames, r, retained);
    const std::string where = site.valid()
                                  ? ctx.frames.frameText(site)
                                  : (d.sites.empty() ? std::string("(no frames)") : siteText(ctx.frames, d.sites.front().stack));

    d.message = "Memory grows by " + formatBytes(perIteration) + " per iteration over " + std::to_string(n) +
                " passes: tensors allocated under " + where + " stay alive after their pass";
    d.detail = "Live memory before each pass: " + formatBytes(live[0]) + " at the first, " + formatBytes(live[n - 1]) +
               " at the last (" + formatBytes(liveStep) + " more each pass), " + formatBytes(endLive) +
               " when the loop ends. Each steady pass leaves " + std::to_string(tensorsPerPass) + " tensors (" +
               formatBytes(perIteration) + ") from " + std::to_string(sitesPerPass) + " call sites alive to the end" +
               (graphKept ? ": a kept result still references its autograd graph (the activations of its forward)."
                          : ": results of each pass are kept on the GPU.") +
               " The first pass is left out of the rate (warm-up: " + formatBytes(live[1] - live[0]) + ").";
    d.fix = graphKept ? "Do not keep tensors that carry a graph across iterations: keep `loss.item()` or "
                        "`out.detach().cpu()` instead of the tensor, and run passes that need no gradients under "
                        "`torch.no_grad()` / `torch.inference_mode()`."
                      : "Move what you keep off the GPU (`out.to('cpu')` / `.cpu()` / `.item()`), or `del` it once "
                        "used; keep only what the next iteration needs on the device.";
    d.figures = {{"bytes_per_iteration", "Retained per iteration", perIteration},
                 {"live_step_per_iteration", "Live bytes added per pass", liveStep},
                 {"passes", "Passes compared", static_cast<int64_t>(n), false},
                 {"live_before_first_pass", "Live before the first pass", live[0]},
                 {"live_before_last_pass", "Live before the last pass", live[n - 1]},
                 {"live_at_loop_end", "Live when the loop ends", endLive},
                 {"retained_tensors_per_pass", "Tensors retained per pass", tensorsPerPass, false},
                 {"retained_sites_per_pass", "Call sites retaining per pass", sitesPerPass, false}};
    return d;
}

} // namespace memscope
