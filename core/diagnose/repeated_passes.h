#pragma once

#include "diagnose/device_context.h"

#include <cstdint>
#include <vector>

namespace memscope {

// One pass of a loop: events [firstEvent, lastEvent], inclusive.
struct Pass {
    int64_t firstEvent = 0;
    int64_t lastEvent = -1;
};

/*
 * Repeated passes of the program's outermost loop, found from how its call stacks recur,
 * for traces the attribution does not split (an inference loop: forward after forward, no
 * backward, no optimizer, no annotations).
 *
 * A Python loop shows in the stacks as a back-edge: two consecutive `alloc` events whose
 * stacks (Python frames, outermost first; all frames when the trace has no Python frame)
 * agree on every frame above some depth d, have the same function at depth d, and the
 * later one is at an earlier line of it. The loop is keyed by (d, the frames above d, the
 * function at d). Among the keys with a back-edge, the loop is the one whose function
 * frame is on the stack of the most `alloc` events (so the training loop wins over a loop
 * that builds the model; an outer loop wins its ties with the inner ones it contains).
 * Loops in library code or inside an nn.Module call (a model's layer loop) are not the
 * program's loop and are left out. Each back-edge starts a pass; the first pass starts at the first alloc of that frame at
 * the line the back-edges land on. A pass runs to the event before the next pass's first
 * alloc; the last one to the last event before an alloc outside the loop frame, or to the
 * end of the trace. Allocations with no frames (an autograd thread) stay in the pass they
 * fall in. O(events + distinct stacks x candidate keys).
 */
std::vector<Pass> findRepeatedPasses(const Snapshot& snapshot, const DeviceTrace& trace);

/*
 * The passes the diagnostics compare: the attribution's iterations when it found two or
 * more, else findRepeatedPasses(), else the attribution's single iteration (or nothing).
 */
std::vector<Pass> loopPasses(const DeviceContext& ctx);

} // namespace memscope
