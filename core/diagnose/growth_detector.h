#pragma once

#include "diagnose/diagnostic.h"
#include "diagnose/repeated_passes.h"

#include <optional>

namespace memscope {

/*
 * Growth across iterations: memory that climbs pass after pass because each pass leaves
 * tensors alive (a list of losses that keeps their graphs, outputs kept on the GPU).
 *
 * Over the loop's passes P0..Pn-1 (loopPasses(): the attribution's iterations, or the
 * repeated passes of an inference loop), with L(k) the requested bytes live just before
 * the first event of Pk:
 *   - the first pass is warm-up (optimizer state, lazily built caches, workspaces): its
 *     step L(1) - L(0) is left out, so at least three passes are needed;
 *   - the live step is the median of the steady steps L(k+1) - L(k), k = 1..n-2;
 *   - a pass retains the allocations it made that are still alive when the loop ends
 *     (and not freed later by a backward, which would make them activations waiting for
 *     it); bytes per iteration = the median of what the steady passes retain;
 *   - it is growth when the live step exceeds max(1 MiB, 0.1% of the peak), every steady
 *     step climbs by at least a quarter of it, and the bytes per iteration are at least
 *     half of it: the bytes are really retained, not a shifting working set.
 * Counting retained allocations rather than differences of the curve keeps transient
 * tensors around a pass boundary out of the rate.
 * The retained allocations are the evidence; the user frame holding most of their bytes is
 * the call site that retains them. Many retained tensors from many call sites per pass
 * mean a kept autograd graph (keep `.item()` / `.detach()`, use no_grad); a few mean
 * outputs kept on the GPU (`.to('cpu')`).
 */
std::optional<Diagnostic> detectGrowth(const DeviceContext& ctx, const std::vector<Pass>& passes);

} // namespace memscope
