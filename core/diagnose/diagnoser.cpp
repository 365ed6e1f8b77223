#include "diagnose/diagnoser.h"

#include "diagnose/cache_release_detector.h"
#include "diagnose/growth_detector.h"
#include "diagnose/no_grad_detector.h"
#include "diagnose/oom_detector.h"
#include "diagnose/peak_detector.h"
#include "diagnose/training_measurement.h"
#include "diagnose/unused_cache_detector.h"

#include <algorithm>

namespace memscope {

namespace {

// Within a severity: what broke, what leaks, where the peak is, then the cache.
int kindRank(DiagnosticKind k)
{
    switch (k) {
    case DiagnosticKind::OutOfMemory: return 0;
    case DiagnosticKind::Growth: return 1;
    case DiagnosticKind::MissingNoGrad: return 2;
    case DiagnosticKind::ActivationBoundPeak:
    case DiagnosticKind::OptimizerBoundPeak:
    case DiagnosticKind::Peak: return 3;
    case DiagnosticKind::CacheReleased: return 4;
    case DiagnosticKind::UnusedCache: return 5;
    }
    return 6;
}

} // namespace

std::vector<Diagnostic> diagnoseDevice(const DeviceContext& ctx, std::vector<Pass>* passesUsed)
{
    std::vector<Diagnostic> out;
    const std::vector<Pass> passes = loopPasses(ctx);
    auto add = [&](std::optional<Diagnostic> d) {
        if (d)
            out.push_back(std::move(*d));
    };
    add(detectGrowth(ctx, passes));
    add(detectMissingNoGrad(ctx, passes));
    for (Diagnostic& d : detectOutOfMemory(ctx))
        out.push_back(std::move(d));
    add(detectUnusedCache(ctx));
    add(detectCacheRelease(ctx));
    add(detectPeak(ctx, measureTraining(ctx.replay, ctx.attribution)));
    if (passesUsed)
        *passesUsed = passes;
    return out;
}

std::shared_ptr<const DiagnosisResult> diagnose(const Attribution& attribution, const FrameClassifier& frames)
{
    auto result = std::make_shared<DiagnosisResult>();
    const Replay& replay = *attribution.replay;
    const Snapshot& snapshot = *replay.snapshot;
    result->passes.resize(replay.devices.size());
    for (size_t i = 0; i < replay.devices.size() && i < attribution.devices.size() && i < snapshot.devices.size(); ++i) {
        const DeviceContext ctx{snapshot, snapshot.devices[i], replay.devices[i], attribution.devices[i], frames, i};
        for (Diagnostic& d : diagnoseDevice(ctx, &result->passes[i]))
            result->items.push_back(std::move(d));
    }
    std::stable_sort(result->items.begin(), result->items.end(), [](const Diagnostic& a, const Diagnostic& b) {
        if (a.severity != b.severity)
            return a.severity > b.severity;
        if (a.deviceIndex != b.deviceIndex)
            return a.deviceIndex < b.deviceIndex;
        if (a.kind != b.kind)
            return kindRank(a.kind) < kindRank(b.kind);
        return a.bytes > b.bytes;
    });
    return result;
}

std::shared_ptr<const DiagnosisResult> diagnose(const Attribution& attribution)
{
    const FrameClassifier frames(*attribution.replay->snapshot);
    return diagnose(attribution, frames);
}

} // namespace memscope
