#include "attribute/stack_hints.h"

#include <string_view>

namespace memscope {

namespace {

constexpr uint16_t kUnknown = 0xFFFF;

char slash(char c) { return c == '\\' ? '/' : c; }

// Substring search that treats '\' in the haystack as '/'.
bool hasPath(std::string_view hay, std::string_view needle)
{
    if (needle.size() > hay.size())
        return false;
    for (size_t i = 0; i + needle.size() <= hay.size(); ++i) {
        size_t k = 0;
        while (k < needle.size() && slash(hay[i + k]) == needle[k])
            ++k;
        if (k == needle.size())
            return true;
    }
    return false;
}

bool endsWithPath(std::string_view hay, std::string_view needle)
{
    if (needle.size() > hay.size())
        return false;
    const std::string_view tail = hay.substr(hay.size() - needle.size());
    for (size_t k = 0; k < needle.size(); ++k)
        if (slash(tail[k]) != needle[k])
            return false;
    return true;
}

bool has(std::string_view s, std::string_view needle) { return s.find(needle) != std::string_view::npos; }

uint16_t classify(std::string_view file, std::string_view name)
{
    uint16_t h = 0;
    const bool cxx = has(name, "::");

    if (name == "zero_grad" || (cxx && has(name, "::zero_grad(")))
        h |= kHintZeroGrad;
    else if (hasPath(file, "torch/optim/") || (cxx && has(name, "torch::optim::")) ||
             ((hasPath(file, "/site-packages/") || hasPath(file, "/dist-packages/")) &&
              (hasPath(file, "/optim/") || hasPath(file, "/optimizers/") || endsWithPath(file, "/optimization.py"))))
        h |= kHintOptimizer; // torch's optimizers and installed ones (bitsandbytes, apex, transformers' Adafactor)

    if ((endsWithPath(file, "torch/autograd/__init__.py") && (name == "backward" || name == "grad")) ||
        (endsWithPath(file, "torch/_tensor.py") && name == "backward") ||
        (endsWithPath(file, "torch/utils/checkpoint.py") &&
         (name == "backward" || name == "unpack_hook" || name == "recompute_fn")) ||
        (cxx && (has(name, "torch::autograd::Engine::") || has(name, "torch::autograd::python::PythonEngine") ||
                 has(name, "torch::autograd::backward(") || has(name, "torch::autograd::grad("))))
        h |= kHintBackward;

    if ((endsWithPath(file, "torch/nn/modules/module.py") && (name == "_call_impl" || name == "_wrapped_call_impl")) ||
        (cxx && has(name, "::forward") && (has(name, "torch::nn::") || has(name, "Impl::forward"))))
        h |= kHintForward;

    if (hasPath(file, "torch/nn/") || name == "__init__" || (cxx && has(name, "torch::nn::")))
        h |= kHintModelBuild;

    if (cxx && (has(name, "Workspace") || has(name, "workspace")))
        h |= kHintWorkspace;

    if (hasPath(file, "/site-packages/") || hasPath(file, "/dist-packages/") || hasPath(file, "/lib/python3") ||
        hasPath(file, "/torch/") || file.starts_with("<frozen"))
        h |= kHintLibraryPy;
    return h;
}

} // namespace

StackHints::StackHints(const Snapshot& snapshot)
    : m_snapshot(snapshot), m_frames(snapshot.frames.size(), kUnknown), m_stacks(snapshot.stacks.size(), kUnknown)
{
}

uint16_t StackHints::frameHints(FrameId frame)
{
    uint16_t& h = m_frames[static_cast<size_t>(frame.value)];
    if (h == kUnknown) {
        const Frame& f = m_snapshot.frames.frame(frame);
        h = classify(m_snapshot.str(f.filename), m_snapshot.str(f.name));
    }
    return h;
}

uint16_t StackHints::of(StackId stack)
{
    if (!stack.valid() || static_cast<size_t>(stack.value) >= m_stacks.size())
        return 0;
    uint16_t& h = m_stacks[static_cast<size_t>(stack.value)];
    if (h != kUnknown)
        return h;
    const auto frames = m_snapshot.stacks.frames(stack);
    uint16_t acc = frames.empty() ? 0 : kHintFramed;
    bool calledBack = false; // frames so far (innermost first) are a closure's, not the optimizer's
    for (FrameId f : frames) {
        const uint16_t fh = frameHints(f);
        if ((fh & kHintOptimizer) && !(acc & kHintOptimizer) && calledBack)
            acc |= kHintClosure;
        if (!(acc & kHintOptimizer) &&
            (fh & (kHintForward | kHintBackward | kHintZeroGrad) ||
             (!(fh & kHintLibraryPy) && endsWithPath(m_snapshot.str(m_snapshot.frames.frame(f).filename), ".py"))))
            calledBack = true;
        acc |= fh;
    }
    if (!frames.empty()) {
        // A Python stack that does not reach the program's main thread entry but starts in
        // autograd (a custom Function's backward, a checkpoint's unpack hook) runs on an
        // autograd engine thread.
        const Frame& outer = m_snapshot.frames.frame(frames.back());
        const std::string_view file = m_snapshot.str(outer.filename);
        if (hasPath(file, "torch/autograd/") || hasPath(file, "torch/utils/checkpoint.py"))
            acc |= kHintBackward;
    }
    // The model is being built only when no module is being called.
    if (acc & (kHintForward | kHintBackward | kHintOptimizer | kHintZeroGrad))
        acc &= static_cast<uint16_t>(~kHintModelBuild);
    h = acc;
    return h;
}

} // namespace memscope
