#pragma once

#include "diagnose/diagnostic.h"
#include "diagnose/repeated_passes.h"

#include <optional>

namespace memscope {

/*
 * Forward passes that keep their activations with no backward: inference run with
 * gradients enabled (no `torch.no_grad()` / `torch.inference_mode()`).
 *
 * With gradients on, every tensor autograd saves for backward lives until the output that
 * references the graph dies, so when the last allocation of the pass is made, most of the
 * pass's intermediates from all over the model are still alive. Under no_grad each layer's
 * temporaries die as the next layer runs: only the output and a few buffers survive.
 *
 * For each pass (loopPasses(); the attribution's iterations when there is no loop) that has
 * forward events and no backward event: the allocations it made outside backward and the
 * optimizer step that are still alive after its last allocation, and not freed later by a
 * backward (a trace that opens inside a forward), are the survivors. A pass
 * keeps its graph when the survivors number >= 8, are >= 10% of its allocations and come
 * from >= 4 call sites. The finding is made when at least half of those passes do; bytes
 * = the median bytes such a pass keeps alive.
 */
std::optional<Diagnostic> detectMissingNoGrad(const DeviceContext& ctx, const std::vector<Pass>& passes);

} // namespace memscope
