#pragma once

#include "diagnose/device_context.h"
#include "diagnose/diagnostic.h"
#include "diagnose/training_measurement.h"

#include <optional>

namespace memscope {

/*
 * Where the peak is and what would lower it, from the phase of the global requested peak
 * (the attribution's peakPhase; the per-iteration peaks say whether every iteration
 * agrees) and the categories live there:
 *
 *   forward / backward, in a trace that trains,  ActivationBoundPeak: smaller batch or
 *   saved activations at least half of what      sequence, activation checkpointing, mixed precision
 *   lies beyond parameters and optimizer state,
 *   and the largest category there (the message
 *   gives both shares)
 *   optimizer step, or a backward where          OptimizerBoundPeak: foreach=False / fused=True,
 *   gradients outweigh the activations and       fewer optimizer states, stepping in backward
 *   the temporaries
 *   anything else (inference, plain code, a      Peak: what is live there; a pass an OOM cut
 *   backward peak made of kept tensors)          short says so instead of offering inference fixes
 *
 * The figures carry the category split at the peak and the highest points of the
 * forward/backward and of the optimizer step (TrainingMeasurement), so the finding can
 * say how far the other phase is below. The evidence is what the fix would shrink: the
 * live allocations at the peak other than parameters and optimizer state.
 */
std::optional<Diagnostic> detectPeak(const DeviceContext& ctx, const TrainingMeasurement& m);

} // namespace memscope
