#pragma once

#include "snapshot/snapshot.h"

#include <cstdint>
#include <vector>

namespace memscope {

// What the frames of a stack say about where in a training step it was captured.
enum StackHint : uint16_t {
    kHintFramed = 1 << 0, // the stack has at least one frame
    kHintForward = 1 << 1, // inside an nn.Module call (Python _call_impl, C++ torch::nn ... ::forward)
    kHintBackward = 1 << 2, // autograd: Tensor.backward, torch.autograd.backward/grad, the engine's
                            // threads, a checkpoint recomputation
    kHintOptimizer = 1 << 3, // an optimizer's step (torch/optim, torch::optim, other optim packages)
    kHintZeroGrad = 1 << 4, // Optimizer.zero_grad / Module.zero_grad
    kHintModelBuild = 1 << 5, // torch.nn code or an __init__ outside a module call: building the model
    kHintWorkspace = 1 << 6, // a library workspace (cuBLAS / cuBLASLt handle workspaces)
    kHintLibraryPy = 1 << 7, // a Python frame of an installed package, the standard library or torch
    kHintClosure = 1 << 8, // an optimizer called back into the program (a closure passed to step()):
                           // inside its innermost optimizer frame lies the program's own Python
                           // code, a module call, autograd or zero_grad
};

/*
 * Classifies frames once per distinct FrameId and stacks once per distinct StackId, on
 * first use, so the cost is proportional to the distinct frames a trace references, not
 * to its events. Matching is on file paths (either slash) and symbol names.
 */
class StackHints {
public:
    explicit StackHints(const Snapshot& snapshot);

    uint16_t of(StackId stack);

private:
    uint16_t frameHints(FrameId frame);

    const Snapshot& m_snapshot;
    std::vector<uint16_t> m_frames; // kUnknown until computed
    std::vector<uint16_t> m_stacks;
};

} // namespace memscope
