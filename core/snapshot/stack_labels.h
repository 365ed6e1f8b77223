#pragma once

#include "snapshot/snapshot.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace memscope {

class FrameClassifier;

/*
 * The operation and the nn.Module path behind each distinct stack of a snapshot, found once
 * per stack when the FrameClassifier is made and then read by StackId.
 *
 * The op is the innermost library Python frame below the user's code other than nn.Module's
 * call machinery ("sdpa_attention.py:158 sdpa_attention_forward", "functional.py:3462
 * cross_entropy"), else the autograd node and ATen operator of the native frames
 * ("MmBackward0 > aten::mm").
 *
 * The module path. torch's stacks carry a frame's function name, not its class (Python 3.11+
 * has qualified names, but torch records `co_name`), so a module is named by its forward's
 * frame. Every module call passes through `torch/nn/modules/module.py`'s `_call_impl`; the
 * frames between one `_call_impl` and the next inner one are that module's: its forward is
 * the outermost of them named `forward` (else the outermost that is not a decorator's
 * wrapper), and the frame's line is where that forward called the next module (for the
 * innermost module: where it allocated). A level reads "modeling_qwen2.py:282" (its
 * function's name follows when it is not `forward`), and the path joins the levels from
 * the outside in with " > ":
 *
 *   modeling_qwen2.py:452 > modeling_qwen2.py:388 > modeling_qwen2.py:282 > modeling_qwen2.py:220
 *   (the causal LM calling its model, the model calling a decoder layer, the layer calling its
 *   attention, the attention's own line), so the lines say which child each level called.
 *
 * Repeated blocks (the decoder layers of one loop) share one path: their stacks are equal.
 * A stack whose outermost module was called by activation checkpointing's recomputation
 * (`torch/utils/checkpoint.py` `recompute_fn`, `unpack_hook` or `backward` outside it) starts
 * with "(recompute)". A stack with no module but an autograd node among its native frames (the
 * backward, recorded with stacks="all") is "(backward) > MmBackward0". Anything else, an
 * optimizer's state, parameters built outside a forward, a backward recorded with Python
 * stacks only (no frames), has no module path ("").
 */
enum class ModuleOrigin : uint8_t {
    None, // no module on the stack
    Forward, // nn.Module forward calls
    Recompute, // the same, run again by activation checkpointing in the backward
    AutogradNode, // the backward's autograd node, from native frames
};

struct ModulePath {
    std::string text; // the levels joined by " > "; "" for none
    std::vector<uint32_t> ends; // where each level ends in `text`
    ModuleOrigin origin = ModuleOrigin::None;

    size_t depth() const { return ends.size(); }
    // The first `levels` levels ("" for 0; the whole path when it has fewer).
    std::string_view prefix(size_t levels) const;
    std::string_view level(size_t i) const;
};

class StackLabels {
public:
    // Reads every stack of the classifier's snapshot; `frames` must have classified its frames.
    explicit StackLabels(const FrameClassifier& frames);

    const std::string& op(StackId stack) const { return m_ops[opId(stack)]; }
    // Index of the stack's op in ops() (0: none, ""), so that each text is held once.
    uint32_t opId(StackId stack) const;
    const std::vector<std::string>& ops() const { return m_ops; }
    // Index of the stack's module path in paths() (0: none, also for an invalid stack).
    uint32_t moduleId(StackId stack) const;
    const ModulePath& module(StackId stack) const { return m_paths[moduleId(stack)]; }
    const std::vector<ModulePath>& paths() const { return m_paths; }
    size_t stackCount() const { return m_op.size(); }

private:
    std::vector<uint32_t> m_op; // per stack, into m_ops
    std::vector<uint32_t> m_module; // per stack, into m_paths
    std::vector<std::string> m_ops; // [0] = ""
    std::vector<ModulePath> m_paths; // [0] = none
};

} // namespace memscope
