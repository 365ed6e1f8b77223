#pragma once

#include "attribute/attribution.h"

#include <memory>

namespace memscope {

/*
 * Attribution: a phase for every event, a category for every allocation, iterations and
 * their peaks, inferred from the trace alone. O(n log n) in events, plus one look at each
 * distinct frame; no allocation per event beyond the result columns.
 *
 * 1. Evidence per event (StackHints, once per distinct stack): Optimizer.step# and
 *    Optimizer.zero_grad# annotation ranges by time_us; frames in an optimizer (torch/optim,
 *    torch::optim) or zero_grad; autograd (Tensor.backward, torch.autograd.backward,
 *    torch::autograd::Engine, a checkpoint's recomputation, a Python stack rooted in
 *    torch/autograd: the engine's threads); an nn.Module call (_call_impl, torch::nn ...
 *    ::forward); no frames at all while other events have some (an autograd engine thread
 *    under stacks="python"); or none of these (the program's own code).
 * 2. Phases in one pass with context: frameless events after a forward are the backward;
 *    the program's own code between two events of a phase (the loss between forward and
 *    backward) keeps that phase, elsewhere it is Other. A trace without frames or
 *    annotations is Other throughout: no phase is invented.
 * 3. Iterations: a new one starts at a forward once the current one has done an optimizer
 *    step (when the trace has any), else a backward (when it has any), else (inference)
 *    after the program's own code; it takes along the plain events just before that forward
 *    (loading the batch). ProfilerStep#N annotations, when present, define them instead.
 *    The first iteration reaches back over plain events that do not build the model; a
 *    trace that opens inside a step gets a partial first iteration.
 * 4. A category per allocation from the phase of its alloc, the phase of its free (the
 *    free_requested, else the free_completed) and its lifetime:
 *      before the first iteration, alive at a forward        PARAMETER (weights, buffers); INPUT
 *                                                              when the program's own code (no torch.nn,
 *                                                              no library frame) made it and, in training,
 *                                                              no gradient has its size (a fixed batch)
 *      plain, just before an iteration's forward, alive at it INPUT (PARAMETER if it lives
 *                                                              through every forward to the end)
 *      forward, freed in a backward                          ACTIVATION
 *      forward, outliving the forward of an iteration with no backward, when the survivors
 *        are many (>= 8 and >= 10% of the forward's allocations: an autograd graph kept
 *        alive, not just the outputs)                        ACTIVATION
 *      backward, outliving its backward                      GRADIENT (INTERMEDIATE if alive
 *                                                              at the end with a size no parameter has)
 *      optimizer step, outliving the step                    OPTIMIZER_STATE
 *      a library workspace (cuBLAS), anything else           INTERMEDIATE
 *    Blocks alive before the trace: freed in zero_grad GRADIENT, in a backward ACTIVATION,
 *    in the plain events before a forward INPUT; alive to the end PARAMETER, or, when the
 *    optimizer steps but creates no state in the trace, split between PARAMETER and
 *    OPTIMIZER_STATE by the count of gradients of each size; otherwise OTHER.
 * 5. Per-category curves by prefix sums of +size at the alloc and -size at the
 *    free_completed (they add up to the requested curve at every event), each iteration's
 *    peak of the requested curve with its phase and category split, and the global peak's.
 */
std::shared_ptr<const Attribution> attribute(std::shared_ptr<const Replay> replay);

DeviceAttribution attributeDevice(const Snapshot& snapshot, const DeviceReplay& device);

} // namespace memscope
