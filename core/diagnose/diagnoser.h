#pragma once

#include "diagnose/device_context.h"
#include "diagnose/diagnostic.h"
#include "diagnose/repeated_passes.h"

#include <memory>
#include <vector>

namespace memscope {

/*
 * Runs every detector on every device of an attribution: growth across iterations
 * (growth_detector.h), forward passes keeping activations (no_grad_detector.h), unused
 * cache (unused_cache_detector.h), cache handed back (cache_release_detector.h), OOM
 * (oom_detector.h) and the peak (peak_detector.h). The result is sorted most severe first,
 * then by device, then OOM, growth, no_grad, peak, cache released, unused cache, then by
 * bytes.
 */
struct DiagnosisResult : Diagnostics {
    std::vector<std::vector<Pass>> passes; // per device index: the loop passes the detectors compared
};

std::shared_ptr<const DiagnosisResult> diagnose(const Attribution& attribution, const FrameClassifier& frames);
std::shared_ptr<const DiagnosisResult> diagnose(const Attribution& attribution);

std::vector<Diagnostic> diagnoseDevice(const DeviceContext& ctx, std::vector<Pass>* passesUsed = nullptr);

} // namespace memscope
