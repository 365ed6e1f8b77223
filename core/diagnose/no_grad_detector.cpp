#include "diagnose/no_grad_detector.h"

#include "diagnose/evidence.h"

#include <algorithm>
#include <set>

namespace memscope {

namespace {

struct PassSurvivors {
    std::vector<AllocationId> ids;
    int64_t bytes = 0;
    int64_t allocations = 0;
    size_t sites = 0;
    bool keepsGraph = false;
};

} // namespace

std::optional<Diagnostic> detectMissingNoGrad(const DeviceContext& ctx, const std::vector<Pass>& passes)
{
    const DeviceReplay& r = ctx.replay;
    const DeviceAttribution& a = ctx.attribution;
    if (passes.empty() || a.eventPhase.size() < static_cast<size_t>(r.eventCount))
        return std::nullopt;
    const EventTable& ev = ctx.events();

    std::vector<PassSurvivors> found;
    size_t alloc = 0;
    for (const Pass& p : passes) {
        bool forward = false, backward = false, oom = false;
        int64_t lastAlloc = -1;
        for (int64_t i = p.firstEvent; i <= p.lastEvent; ++i) {
            const Phase ph = a.eventPhase[static_cast<size_t>(i)];
            forward = forward || ph == Phase::Forward;
            backward = backward || ph == Phase::Backward;
            if (ev.action[static_cast<size_t>(i)] == Action::Alloc)
                lastAlloc = i;
        }
        // A training pass that died of an OOM in forward never reached its backward: its
        // saved activations say nothing about a missing no_grad. Its OOM lies inside it or
        // after it, before the next allocation.
        const auto nextOom = std::lower_bound(r.oomEvents.begin(), r.oomEvents.end(), EventIndex{p.firstEvent},
                                              [](EventIndex x, EventIndex y) { return x.value < y.value; });
        if (nextOom != r.oomEvents.end()) {
            oom = true;
            for (int64_t i = p.lastEvent + 1; oom && i < nextOom->value; ++i)
                oom = ev.action[static_cast<size_t>(i)] != Action::Alloc;
        }
        if (!forward || backward || lastAlloc < 0 || oom)
            continue;
        PassSurvivors s;
        std::set<int32_t> stacks;
        while (alloc < r.allocations.size() &&
               (r.allocations[alloc].preexisting() || r.allocations[alloc].allocEvent.value < p.firstEvent))
            ++alloc;
        for (size_t j = alloc; j < r.allocations.size() && r.allocations[j].allocEvent.value <= p.lastEvent; ++j) {
            const Allocation& al = r.allocations[j];
            const Phase ph = a.allocationPhase.size() > j ? a.allocationPhase[j] : Phase::Other;
            if (ph == Phase::Backward || ph == Phase::OptimizerStep)
                continue;
            ++s.allocations;
            if (al.activeAfter(lastAlloc) && al.allocEvent.value < lastAlloc && !freedInBackward(a, al)) {
                s.ids.push_back(AllocationId{static_cast<int32_t>(j)});
                s.bytes += static_cast<int64_t>(al.size);
                stacks.insert(al.stack.value);
            }
        }
        s.sites = stacks.size();
        const int64_t count = static_cast<int64_t>(s.ids.size());
        s.keepsGraph = count >= 8 && count * 10 >= s.allocations && s.sites >= 4;
        found.push_back(std::move(s));
    }
    const auto keeping = std::count_if(found.begin(), found.end(), [](const PassSurvivors& s) { return s.keepsGraph; });
    if (keeping == 0 || keeping * 2 < static_cast<std::ptrdiff_t>(found.size()))
        return std::nullopt;

    std::vector<int64_t> bytes;
    const PassSurvivors* example = nullptr;
    for (size_t k = 0; k < found.size(); ++k)
        if (found[k].keepsGraph) {
            bytes.push_back(found[k].bytes);
            if (!example || (example == &found.front() && k > 0))
                example = &found[k]; // a steady pass when there is one: the first carries warm-up
        }
    std::sort(bytes.begin(), bytes.end());
    const int64_t kept = bytes[bytes.size() / 2];

    Diagnostic d;
    d.kind = DiagnosticKind::MissingNoGrad;
    d.severity = Severity::Warning;
    d.deviceIndex = ctx.deviceIndex;
    d.device = ctx.device();
    d.bytes = kept;
    d.iterations = static_cast<int>(found.size());
    setEvidence(d, r, example->ids);
    const FrameId site = dominantUserFrame(ctx.frames, r, example->ids);
    d.message = std::to_string(keeping) + " of " + std::to_string(found.size()) + " forward passes with no backward keep " +
                formatBytes(kept) + " of activations alive (" + std::to_string(example->ids.size()) + " tensors from " +
                std::to_string(example->sites) + " call sites): inference without torch.no_grad()";
    d.detail = "When a pass makes its last allocation, " + std::to_string(example->ids.size()) + " of its " +
               std::to_string(example->allocations) +
               " allocations are still alive, from all over the model: autograd saved them for a backward that never "
               "comes. Under no_grad they would be freed layer by layer. Called from " +
               frameOrUnknown(ctx.frames, site) + ".";
    d.fix = "Run inference under `with torch.no_grad():` or `with torch.inference_mode():` (and `model.eval()`); if a "
            "result must be kept, keep `out.detach()`.";
    d.figures = {{"kept_per_pass", "Kept alive per pass", kept},
                 {"passes_without_backward", "Passes without backward", static_cast<int64_t>(found.size()), false},
                 {"passes_keeping_graph", "Passes keeping a graph", static_cast<int64_t>(keeping), false},
                 {"tensors_kept", "Tensors kept (one pass)", static_cast<int64_t>(example->ids.size()), false}};
    return d;
}

} // namespace memscope
