#include "diagnose/peak_detector.h"

#include "diagnose/evidence.h"

#include <algorithm>

namespace memscope {

std::optional<Diagnostic> detectPeak(const DeviceContext& ctx, const TrainingMeasurement& m)
{
    const DeviceReplay& r = ctx.replay;
    const DeviceAttribution& a = ctx.attribution;
    if (r.eventCount == 0 || m.peak <= 0)
        return std::nullopt;
    const bool training = m.hasBackward || m.hasOptimizerStep;
    const bool oomAfterPeak = !r.oomEvents.empty() && r.oomEvents.back().value >= m.peakEvent;
    const Phase phase = m.peakPhase;
    const auto& cat = a.peakByCategory;
    auto bytesOfCategory = [&](Category c) { return cat[static_cast<size_t>(c)]; };

    int iteration = -1;
    int fbIterations = 0, optIterations = 0;
    for (const Iteration& it : a.iterations) {
        if (m.peakEvent >= it.firstEvent && m.peakEvent <= it.lastEvent)
            iteration = it.index;
        fbIterations += it.peak.phase == Phase::Forward || it.peak.phase == Phase::Backward;
        optIterations += it.peak.phase == Phase::OptimizerStep;
    }

    Diagnostic d;
    d.severity = Severity::Info;
    d.deviceIndex = ctx.deviceIndex;
    d.device = ctx.device();
    d.bytes = m.peak;
    d.event = m.peakEvent;
    const int64_t gradients = bytesOfCategory(Category::Gradient);
    const int64_t activations = bytesOfCategory(Category::Activation);
    const int64_t beyond = m.peak - bytesOfCategory(Category::Parameter) - bytesOfCategory(Category::OptimizerState);
    const bool gradientBound = gradients > activations && gradients * 2 >= beyond;
    // Saved activations must be what the forward/backward peak is made of; a backward peak
    // built of kept results or temporaries is not lowered by checkpointing.
    // They must also be the largest single category there: a peak where they are a third
    // beside as much optimizer state is not "activation-bound" to its reader.
    bool activationsLargest = activations > 0;
    for (Category c : kAllCategories)
        activationsLargest = activationsLargest && (c == Category::Activation || bytesOfCategory(c) <= activations);
    const bool activationsDominate = activations > 0 && activations * 2 >= beyond && activationsLargest;
    if (training && (phase == Phase::Forward || phase == Phase::Backward) && !gradientBound && activationsDominate)
        d.kind = DiagnosticKind::ActivationBoundPeak;
    else if (training && phase == Phase::Backward && gradients >= bytesOfCategory(Category::Intermediate))
        d.kind = DiagnosticKind::OptimizerBoundPeak;
    else if (training && phase == Phase::OptimizerStep)
        d.kind = DiagnosticKind::OptimizerBoundPeak;
    else
        d.kind = DiagnosticKind::Peak;

    std::string split;
    std::vector<std::pair<int64_t, Category>> parts;
    for (Category c : kAllCategories)
        if (bytesOfCategory(c) > 0)
            parts.emplace_back(bytesOfCategory(c), c);
    std::sort(parts.begin(), parts.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
    for (const auto& [b, c] : parts) {
        split += split.empty() ? "" : ", ";
        split += lowerFirst(categoryLabel(c)) + " " + formatBytes(b);
    }
    const std::string where = "The peak, " + formatBytes(m.peak) + " in " + lowerFirst(phaseLabel(phase)) +
                              (iteration >= 0 ? " of iteration " + std::to_string(iteration + 1) + " of " +
                                                    std::to_string(a.iterations.size())
                                              : std::string());
    switch (d.kind) {
    case DiagnosticKind::ActivationBoundPeak:
        d.message = where + ", is activation-bound: saved activations " + formatBytes(activations) + ", its largest part (" +
                    percentText(static_cast<double>(activations) / static_cast<double>(m.peak)) + " of it, " +
                    percentText(static_cast<double>(activations) / static_cast<double>(std::max<int64_t>(beyond, 1))) +
                    " of what lies beyond parameters and optimizer state)";
        d.fix = "Lower the activations: a smaller batch or sequence length (they scale with both), activation "
                "checkpointing (torch.utils.checkpoint, model.gradient_checkpointing_enable()), mixed precision "
                "(torch.autocast with bfloat16).";
        if (m.hasOptimizerStep)
            d.fix += " Below " + formatBytes(m.optimizerPeak) + " the optimizer step becomes the peak.";
        break;
    case DiagnosticKind::OptimizerBoundPeak:
        d.message = where +
                    (phase == Phase::OptimizerStep ? ", is optimizer-bound: gradients "
                                                   : ", is bound by gradients and optimizer state: gradients ") +
                    formatBytes(gradients) + " and temporaries " + formatBytes(bytesOfCategory(Category::Intermediate)) +
                    " on top of parameters " + formatBytes(bytesOfCategory(Category::Parameter)) + " and optimizer state " +
                    formatBytes(bytesOfCategory(Category::OptimizerState)) +
                    (phase == Phase::OptimizerStep ? std::string() : " (saved activations " + formatBytes(activations) + ")");
        d.fix = "Shrink the step: foreach=False (per-parameter temporaries instead of a copy of all of them) or "
                "fused=True, an optimizer with fewer states (SGD with momentum keeps 1, Adafactor or 8-bit Adam less "
                "than Adam's 2), or step each parameter in backward (register_post_accumulate_grad_hook) so all "
                "gradients never exist at once.";
        if (m.hasBackward)
            d.fix += " The forward/backward peaks at " + formatBytes(m.forwardBackwardPeak) + ".";
        break;
    default:
        d.message = where +
                    (training       ? ""
                     : oomAfterPeak ? " (then the run ran out of memory)"
                                    : " (no training step in the trace)") +
                    ": " + split;
        if (!training && oomAfterPeak && phase == Phase::Forward)
            d.fix = "This forward pass never finished (see the OOM finding): a smaller batch or sequence length, "
                    "activation checkpointing or mixed precision lower what it holds.";
        else if (!training && oomAfterPeak)
            d.fix = "The run ended in an out-of-memory error (see the OOM finding): lower the largest allocations "
                    "live here.";
        else if (!training)
            d.fix = "For inference: a smaller batch, torch.no_grad()/inference_mode(), half-precision weights "
                    "(model.half() / bfloat16) lower it.";
        else if (phase == Phase::Forward || phase == Phase::Backward)
            d.fix = "Neither saved activations nor gradients make this peak: the largest part is " +
                    (parts.empty() ? std::string("unknown") : lowerFirst(categoryLabel(parts.front().second))) +
                    ". See the call sites live there; tensors kept from earlier iterations (see a growth finding) "
                    "raise every later peak.";
        else
            d.fix = "The peak falls outside forward, backward and the optimizer step: see the call sites live there.";
        break;
    }
    d.detail = "Live at the peak: " + split + ".";
    if (!a.iterations.empty())
        d.detail += " Iteration peaks: " + std::to_string(fbIterations) + " in forward/backward, " +
                    std::to_string(optIterations) + " in the optimizer step, of " + std::to_string(a.iterations.size()) + ".";

    std::vector<AllocationId> movable;
    if (m.peakEvent >= -1)
        for (AllocationId id : r.activeAfter(m.peakEvent)) {
            const Category c = static_cast<size_t>(id.value) < a.allocationCategory.size() ? a.category(id) : Category::Other;
            if (d.kind == DiagnosticKind::Peak || (c != Category::Parameter && c != Category::OptimizerState))
                movable.push_back(id);
        }
    setEvidence(d, r, movable);

    for (Category c : kAllCategories)
        d.figures.push_back(
            {"peak_" + std::string(categoryName(c)), "At the peak: " + std::string(categoryLabel(c)), bytesOfCategory(c)});
    d.figures.push_back({"forward_backward_peak", "Highest in forward/backward", m.forwardBackwardPeak});
    d.figures.push_back({"optimizer_step_peak", "Highest in the optimizer step", m.optimizerPeak});
    d.figures.push_back(
        {"iterations_peaking_in_forward_backward", "Iterations peaking in forward/backward", fbIterations, false});
    d.figures.push_back(
        {"iterations_peaking_in_optimizer_step", "Iterations peaking in the optimizer step", optIterations, false});
    return d;
}

} // namespace memscope
