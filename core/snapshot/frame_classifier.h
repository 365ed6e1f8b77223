#pragma once

#include "snapshot/snapshot.h"

#include <memory>
#include <string>
#include <vector>

namespace memscope {

/*
 * Which stack frames are the user's own code and which belong to libraries, decided once
 * per distinct frame of a snapshot.
 *
 * A Python frame (a `.py` file) is a library frame when its file lies in an installed
 * package or the standard library (`site-packages/`, `dist-packages/`, `lib/python3.x/`,
 * `<frozen …>`, a `torch/` source tree). A native frame (`??`, empty or a C/C++ source) is
 * a library frame when its symbol belongs to the runtime (torch::, at::, c10::, std::,
 * CPython, libc, CUDA libraries) or has no name; any other native symbol, such as `main`
 * of a libtorch program, is the user's.
 *
 * Text forms: frameText() is "train.py:42 forward" (file name without its directory; a
 * native symbol without its parameter list), stackSummary() the user frames of a stack,
 * innermost first, joined by " < "; for a stack of library frames only, the autograd node
 * and ATen operator that allocated ("(library) MmBackward0 > aten::mm").
 */
class StackLabels;
struct ModulePath;

class FrameClassifier {
public:
    explicit FrameClassifier(const Snapshot& snapshot);
    ~FrameClassifier();

    bool isLibrary(FrameId f) const { return m_library[static_cast<size_t>(f.value)] != 0; }
    // The innermost user frame of a stack; invalid when it has none.
    FrameId topUserFrame(StackId stack) const;
    std::string frameText(FrameId f) const;
    std::string frameLocation(FrameId f) const; // full path:line
    std::string stackSummary(StackId stack, size_t maxFrames = 4) const;
    // For a stack with no user frame: "(library) MmBackward0 > aten::mm".
    std::string librarySummary(StackId stack) const;
    // The operation behind an allocation, where the user frame says only "the training
    // loop": the innermost library Python frame below the user's code other than
    // nn.Module's call machinery ("sdpa_attention.py:158 sdpa_attention_forward",
    // "functional.py:3462 cross_entropy"), else the ATen operator or autograd node of the
    // native frames ("aten::mm"); "" when the stack shows neither. Found once per stack
    // (StackLabels).
    const std::string& opText(StackId stack) const;
    // The nn.Module path of a stack, outside in: "modeling_qwen2.py:452 > modeling_qwen2.py:388
    // > …", "(backward) > MmBackward0"; "" outside any module (StackLabels says how).
    const std::string& moduleText(StackId stack) const;
    const ModulePath& modulePath(StackId stack) const;
    const StackLabels& labels() const { return *m_labels; }
    const Snapshot& snapshot() const { return m_snapshot; }

private:
    const Snapshot& m_snapshot;
    std::vector<uint8_t> m_library;
    std::unique_ptr<const StackLabels> m_labels;
};

bool isLibraryFrame(std::string_view filename, std::string_view name);
// A native frame's file: none, "??" or a C/C++/CUDA source.
bool isNativeFile(std::string_view file);
// The text between the first `open` and the next `close` ("" when either is missing).
std::string_view between(std::string_view s, std::string_view open, std::string_view close);
// The part of a path after its last '/'.
std::string_view baseName(std::string_view path);

} // namespace memscope
