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
 *    Optimizer.zero_grad# annotation ranges by time_us; the agent's markers mode
 *    (agent/memscope_agent/markers.py: no stacks at all) adds memscope.forward (the outermost
 *    nn.Module call), memscope.backward (torch.autograd.backward / grad, whose range covers
 *    the engine's threads by time) and memscope.zero_grad (Module.zero_grad) ranges, which
 *    name the phase of the events inside them the way a step's range does (the innermost
 *    range holding an event wins: a closure's forward inside a step is Forward); frames in
 *    an optimizer (torch/optim, torch::optim) or zero_grad; autograd (Tensor.backward,
 *    torch.autograd.backward, torch::autograd::Engine, a checkpoint's recomputation, a
 *    Python stack rooted in torch/autograd: the engine's threads); an nn.Module call (_call_impl, torch::nn ...
 *    ::forward); no frames at all while other events have some (an autograd engine thread
 *    under stacks="python"); or none of these (the program's own code).
 *    Phases nest. An optimizer may run a closure inside step() (Lightning's automatic
 *    optimization, LBFGS, opt.step(closure)): a stack whose innermost optimizer frame has
 *    the program's own Python code, a module call, autograd or zero_grad inside it is the
 *    closure's (kHintClosure), and takes the phase of what runs inside, not OptimizerStep.
 *    A step's annotation range only names the events that carry no such evidence of their
 *    own: framed events of the optimizer itself, and silent ones (below). Frameless events
 *    in the range are the autograd thread's backward.
 * 2. Phases in one pass with context: frameless events after a forward are the backward;
 *    the program's own code between two events of a phase (the loss between forward and
 *    backward) keeps that phase, elsewhere it is Other; a loss followed by a zero_grad or by
 *    events only an annotated step range names before its backward (Lightning's closure)
 *    keeps the forward's phase too. Silent events (a kind the recording
 *    never gives frames, e.g. frees under context="alloc") keep the phase around them;
 *    inside an annotated range they take the range's phase unless the current phase was
 *    set inside that range (a free in a closure's backward), and after an annotated step or
 *    zero_grad has ended they are no longer in it. A trace without frames or annotations
 *    is Other throughout: no phase is invented.
 * 3. Iterations: a new one starts at a forward once the current one has done an optimizer
 *    step (when the trace has any), else a backward (when it has any), else (inference)
 *    after the program's own code; it takes along the plain events just before that forward
 *    (loading the batch). A zero_grad ends an iteration only after its backward (Lightning
 *    zeroes between forward and backward). One step is one iteration however often it
 *    calls its closure: a forward inside the same annotated step (or, without annotations,
 *    a closure's forward with no event outside an optimizer since the iteration began)
 *    continues the iteration, and an iteration whose forward is a closure's begins where
 *    its step begins (the closure's zero_grad before the forward). Gradient accumulation
 *    (forwards and backwards before one step) is one iteration. ProfilerStep#N annotations,
 *    when present, define iterations instead. The first iteration reaches back over plain
 *    events that do not build the model; a trace that opens inside a step gets a partial
 *    first iteration.
 * 4. A category per allocation from the phase of its alloc, the phase of its free (the
 *    free_requested, else the free_completed) and its lifetime:
 *      before the first iteration, alive at a forward        PARAMETER (weights, buffers); INPUT
 *                                                              when the program's own code (no torch.nn,
 *                                                              no library frame) made it and, in training,
 *                                                              no gradient has its size (a fixed batch)
 *      plain, just before an iteration's forward, alive at it INPUT (PARAMETER if it lives
 *                                                              through every forward to the end)
 *      forward, freed in a backward                          ACTIVATION
 *      plain, after the iteration's forward began, freed in   ACTIVATION (the loss computed outside
 *        its backward                                          the model: training_step, a custom loop)
 *      forward, freed in zero_grad                           GRADIENT (a compiled backward reused
 *                                                              the dead buffer for a .grad)
 *      forward, outliving the forward of an iteration with no backward, when the survivors
 *        are many (>= 8 and >= 10% of the forward's allocations: an autograd graph kept
 *        alive, not just the outputs)                        ACTIVATION
 *      backward, outliving its backward                      GRADIENT (INTERMEDIATE if kept
 *                                                              to the end with a size no parameter has)
 *      optimizer step, outliving the step                    OPTIMIZER_STATE
 *      a library workspace (cuBLAS), anything else           INTERMEDIATE
 *      a DDP gradient bucket (c10d::Reducer, any phase)       GRADIENT
 *    "To the end" above: never freed, or freed only in the teardown after the last
 *    event of any phase (a program that drops its model, EMA weights or cuBLAS workspaces
 *    before it dumps the snapshot).
 *    Blocks alive before the trace: freed in zero_grad GRADIENT, in a backward ACTIVATION,
 *    in the plain events before a forward INPUT; alive to the end PARAMETER (INTERMEDIATE
 *    when no model-building code made it and no gradient of the trace has its size: a
 *    library's workspace), or, when the optimizer steps but creates no state in the trace,
 *    split between PARAMETER and OPTIMIZER_STATE by the count of gradients of each size;
 *    otherwise OTHER.
 * 5. Per-category curves by prefix sums of +size at the alloc and -size at the
 *    free_completed (they add up to the requested curve at every event), each iteration's
 *    peak of the requested curve with its phase and category split, and the global peak's.
 */
std::shared_ptr<const Attribution> attribute(std::shared_ptr<const Replay> replay);

DeviceAttribution attributeDevice(const Snapshot& snapshot, const DeviceReplay& device);

} // namespace memscope
