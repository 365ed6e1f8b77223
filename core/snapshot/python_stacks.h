#pragma once

#include "snapshot/snapshot.h"

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace memscope {

/*
 * The Python frames of each stack of a snapshot and the ATen operator its innermost Python
 * frame called, found once per stack, for rules that read a stack from its innermost Python
 * frames (the what-if's op dtypes, its loop over blocks, its convolutions). A recording
 * made with stacks="all" (torch's default) puts dozens of native frames below and between
 * the Python ones (the unwinder, the allocator, the dispatcher, CPython's evaluator); read
 * by position, they hide the Python frames.
 *
 * The op is the outermost `at::_ops::NAME::call` below the innermost Python frame, the
 * operator that line called ("linear", not the "mm" inside it); in a stack with no Python
 * frame (the backward), the outermost of the stack. It is "" where the recording has no
 * native frames (stacks="python").
 */
class PythonStacks {
public:
    explicit PythonStacks(const Snapshot& snapshot);

    // The stack's Python frames, innermost first (empty for an invalid stack).
    std::span<const FrameId> frames(StackId stack) const;
    // "linear", "pow_Tensor_Scalar", "native_layer_norm"; "" when unknown.
    std::string_view op(StackId stack) const;
    // Whether any stack has native frames (a stacks="all" recording).
    bool hasNativeFrames() const { return m_native; }

private:
    std::vector<FrameId> m_frames; // every stack's Python frames, one after the other
    std::vector<uint32_t> m_begin; // per stack, into m_frames; one more at the end
    std::vector<uint32_t> m_op; // per stack, into m_ops
    std::vector<std::string> m_ops; // [0] = ""
    bool m_native = false;
};

} // namespace memscope
