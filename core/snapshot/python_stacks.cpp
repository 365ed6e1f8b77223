#include "snapshot/python_stacks.h"

#include "snapshot/frame_classifier.h"

#include <unordered_map>

namespace memscope {

PythonStacks::PythonStacks(const Snapshot& s)
{
    // each frame looked at once: Python or not, and the operator a native frame calls
    const size_t frameCount = s.frames.size();
    std::vector<uint8_t> python(frameCount, 0);
    std::vector<uint32_t> op(frameCount, 0);
    std::unordered_map<std::string, uint32_t> index;
    m_ops.assign(1, std::string());
    for (size_t i = 0; i < frameCount; ++i) {
        const Frame& f = s.frames.frame(FrameId{static_cast<int32_t>(i)});
        if (!isNativeFile(s.str(f.filename))) {
            python[i] = 1;
            continue;
        }
        // (a TorchScript function in a stacks="python" recording is a "??" frame of its bare
        // name, DeBERTa's make_log_bucket_position: no native frame)
        const std::string_view file = s.str(f.filename);
        m_native = m_native || s.str(f.name).find("::") != std::string_view::npos || (file != "??" && !file.empty());
        const std::string_view o = between(s.str(f.name), "at::_ops::", "::call(");
        if (o.empty() || o.find("::") != std::string_view::npos)
            continue;
        auto [it, fresh] = index.try_emplace(std::string(o), static_cast<uint32_t>(m_ops.size()));
        if (fresh)
            m_ops.emplace_back(o);
        op[i] = it->second;
    }
    const size_t stackCount = s.stacks.size();
    m_begin.reserve(stackCount + 1);
    m_op.assign(stackCount, 0);
    for (size_t st = 0; st < stackCount; ++st) {
        m_begin.push_back(static_cast<uint32_t>(m_frames.size()));
        bool below = true; // below (inside) the innermost Python frame
        for (const FrameId f : s.stacks.frames(StackId{static_cast<int32_t>(st)})) {
            const size_t i = static_cast<size_t>(f.value);
            if (python[i]) {
                m_frames.push_back(f);
                below = false;
            } else if (below && op[i]) {
                m_op[st] = op[i]; // the last one inward of the Python frame: the outermost
            }
        }
    }
    m_begin.push_back(static_cast<uint32_t>(m_frames.size()));
}

std::span<const FrameId> PythonStacks::frames(StackId stack) const
{
    if (!stack.valid() || static_cast<size_t>(stack.value) + 1 >= m_begin.size())
        return {};
    const size_t st = static_cast<size_t>(stack.value);
    return std::span<const FrameId>(m_frames).subspan(m_begin[st], m_begin[st + 1] - m_begin[st]);
}

std::string_view PythonStacks::op(StackId stack) const
{
    if (!stack.valid() || static_cast<size_t>(stack.value) >= m_op.size())
        return {};
    return m_ops[m_op[static_cast<size_t>(stack.value)]];
}

} // namespace memscope
