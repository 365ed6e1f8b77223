#include "snapshot/stack_labels.h"

#include "snapshot/frame_classifier.h"

#include <array>
#include <unordered_map>

namespace memscope {

namespace {

enum FrameBit : uint8_t {
    Python = 1,
    ModuleCall = 2, // torch/nn/modules/module.py _call_impl: one module call
    ModuleMachinery = 4, // any frame of torch/nn/modules/module.py
    OpSkip = 8, // what the op passes over: nn.Module's call machinery
    Forward = 16, // a function named forward
    Wrapper = 32, // a decorator's wrapper around a forward
    RecomputeEntry = 64, // activation checkpointing running a forward again
};

constexpr std::array<std::string_view, 9> kWrapperNames{"wrapper",     "decorate_context", "_fn",          "inner",   "wrapped",
                                                        "new_forward", "__call__",         "wrapped_func", "_wrapper"};

// Interns texts, index 0 being "".
class TextIndex {
public:
    explicit TextIndex(std::vector<std::string>& texts) : m_texts(texts)
    {
        m_texts.assign(1, std::string());
        m_index.emplace(std::string(), 0);
    }
    uint32_t intern(std::string text)
    {
        const auto [it, added] = m_index.try_emplace(text, static_cast<uint32_t>(m_texts.size()));
        if (added)
            m_texts.push_back(std::move(text));
        return it->second;
    }

private:
    std::vector<std::string>& m_texts;
    std::unordered_map<std::string, uint32_t> m_index;
};

} // namespace

std::string_view ModulePath::prefix(size_t levels) const
{
    if (levels == 0 || ends.empty())
        return {};
    return std::string_view(text).substr(0, ends[std::min(levels, ends.size()) - 1]);
}

std::string_view ModulePath::level(size_t i) const
{
    const size_t begin = i == 0 ? 0 : ends[i - 1] + 3; // past " > "
    return std::string_view(text).substr(begin, ends[i] - begin);
}

StackLabels::StackLabels(const FrameClassifier& classifier)
{
    const Snapshot& s = classifier.snapshot();
    const size_t frameCount = s.frames.size();

    // Each frame looked at once: its kind, and for native frames the ATen operator and the
    // autograd node its symbol names.
    std::vector<uint8_t> bits(frameCount, 0);
    std::vector<std::string> natives;
    TextIndex nativeIndex(natives);
    std::vector<uint32_t> aten(frameCount, 0), node(frameCount, 0);
    for (size_t i = 0; i < frameCount; ++i) {
        const Frame& f = s.frames.frame(FrameId{static_cast<int32_t>(i)});
        const std::string_view file = s.str(f.filename);
        const std::string_view name = s.str(f.name);
        if (isNativeFile(file)) {
            const std::string_view o = between(name, "at::_ops::", "::call(");
            if (!o.empty() && o.find("::") == std::string_view::npos)
                aten[i] = nativeIndex.intern("aten::" + std::string(o));
            const std::string_view n = between(name, "autograd::generated::", "::apply(");
            if (!n.empty() && n.find("::") == std::string_view::npos)
                node[i] = nativeIndex.intern(std::string(n));
            continue;
        }
        uint8_t b = Python;
        const bool moduleFile = file.find("torch/nn/modules/module.py") != std::string_view::npos;
        if (moduleFile)
            b |= ModuleMachinery;
        if (moduleFile && name == "_call_impl")
            b |= ModuleCall;
        if (moduleFile || name == "_call_impl" || name == "_wrapped_call_impl")
            b |= OpSkip;
        if (name == "forward")
            b |= Forward;
        for (std::string_view w : kWrapperNames)
            if (name == w)
                b |= Wrapper;
        if (file.find("torch/utils/checkpoint.py") != std::string_view::npos &&
            (name == "recompute_fn" || name == "unpack_hook" || name == "backward"))
            b |= RecomputeEntry;
        bits[i] = b;
    }

    // A Python frame's text as a level of a path, made when first needed.
    std::vector<int32_t> levelText(frameCount, -1);
    std::vector<std::string> levels;
    auto levelOf = [&](FrameId id) -> const std::string& {
        int32_t& k = levelText[static_cast<size_t>(id.value)];
        if (k < 0) {
            const Frame& f = s.frames.frame(id);
            const std::string_view name = s.str(f.name);
            std::string t(baseName(s.str(f.filename)));
            if (f.line > 0)
                t += ":" + std::to_string(f.line);
            if (!name.empty() && name != "forward") {
                t += ' ';
                t += name;
            }
            k = static_cast<int32_t>(levels.size());
            levels.push_back(std::move(t));
        }
        return levels[static_cast<size_t>(k)];
    };

    TextIndex opIndex(m_ops);
    std::unordered_map<std::string, uint32_t> pathIndex;
    m_paths.assign(1, ModulePath{});
    pathIndex.emplace(std::string(), 0);

    const size_t stackCount = s.stacks.size();
    m_op.assign(stackCount, 0);
    m_module.assign(stackCount, 0);
    std::vector<size_t> bounds;
    ModulePath path;
    for (size_t st = 0; st < stackCount; ++st) {
        const std::span<const FrameId> frames = s.stacks.frames(StackId{static_cast<int32_t>(st)});

        // The op: FrameClassifier::opText's rule.
        {
            uint32_t op = 0, nd = 0;
            std::string text;
            bool done = false;
            for (FrameId f : frames) {
                const size_t i = static_cast<size_t>(f.value);
                if (bits[i] & Python) {
                    if (!classifier.isLibrary(f))
                        break; // the user's code: nothing of a library below it
                    if (bits[i] & OpSkip)
                        continue;
                    if (nd)
                        break; // an autograd node below: the engine's Python frame says less
                    text = classifier.frameText(f);
                    done = true;
                    break;
                }
                if (!op)
                    op = aten[i];
                if (!nd)
                    nd = node[i];
            }
            if (!done && (op || nd))
                text = !nd ? natives[op] : !op ? natives[nd] : natives[nd] + " > " + natives[op];
            m_op[st] = text.empty() ? 0 : opIndex.intern(std::move(text));
        }

        // The module path.
        bounds.clear();
        for (size_t j = 0; j < frames.size(); ++j)
            if (bits[static_cast<size_t>(frames[j].value)] & ModuleCall)
                bounds.push_back(j);
        path.text.clear();
        path.ends.clear();
        path.origin = ModuleOrigin::None;
        auto add = [&](std::string_view level) {
            if (!path.text.empty())
                path.text += " > ";
            path.text += level;
            path.ends.push_back(static_cast<uint32_t>(path.text.size()));
        };
        if (bounds.empty()) {
            for (FrameId f : frames)
                if (const uint32_t n = node[static_cast<size_t>(f.value)]) {
                    path.origin = ModuleOrigin::AutogradNode;
                    add("(backward)");
                    add(natives[n]);
                    break;
                }
        } else {
            path.origin = ModuleOrigin::Forward;
            for (size_t j = bounds.back() + 1; j < frames.size(); ++j)
                if (bits[static_cast<size_t>(frames[j].value)] & RecomputeEntry) {
                    path.origin = ModuleOrigin::Recompute;
                    add("(recompute)");
                    break;
                }
            for (size_t k = bounds.size(); k-- > 0;) {
                const size_t inner = k > 0 ? bounds[k - 1] + 1 : 0;
                int64_t forward = -1, other = -1;
                for (size_t j = bounds[k]; j-- > inner;) {
                    const uint8_t b = bits[static_cast<size_t>(frames[j].value)];
                    if (!(b & Python) || (b & ModuleMachinery))
                        continue;
                    if (b & Forward) {
                        forward = static_cast<int64_t>(j);
                        break;
                    }
                    if (other < 0 && !(b & Wrapper))
                        other = static_cast<int64_t>(j);
                }
                const int64_t chosen = forward >= 0 ? forward : other;
                if (chosen >= 0)
                    add(levelOf(frames[static_cast<size_t>(chosen)]));
            }
            if (path.ends.empty() || (path.origin == ModuleOrigin::Recompute && path.ends.size() == 1)) {
                path.text.clear();
                path.ends.clear();
                path.origin = ModuleOrigin::None;
            }
        }
        if (path.text.empty())
            continue;
        const auto [it, added] = pathIndex.try_emplace(path.text, static_cast<uint32_t>(m_paths.size()));
        if (added)
            m_paths.push_back(path);
        m_module[st] = it->second;
    }
}

uint32_t StackLabels::opId(StackId stack) const
{
    if (!stack.valid() || static_cast<size_t>(stack.value) >= m_op.size())
        return 0;
    return m_op[static_cast<size_t>(stack.value)];
}

uint32_t StackLabels::moduleId(StackId stack) const
{
    if (!stack.valid() || static_cast<size_t>(stack.value) >= m_module.size())
        return 0;
    return m_module[static_cast<size_t>(stack.value)];
}

} // namespace memscope
