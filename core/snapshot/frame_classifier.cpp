#include "snapshot/frame_classifier.h"
#include "snapshot/stack_labels.h"

#include <array>

namespace memscope {

namespace {

bool endsWith(std::string_view s, std::string_view suffix)
{
    return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// "at::foo(int, long)" -> "at::foo": a symbol without its parameter list.
std::string_view withoutParameters(std::string_view name)
{
    if (name.empty() || name.back() != ')')
        return name;
    int depth = 0;
    for (size_t i = name.size(); i-- > 0;) {
        if (name[i] == ')')
            ++depth;
        else if (name[i] == '(' && --depth == 0)
            return i > 0 ? name.substr(0, i) : name;
    }
    return name;
}

} // namespace

std::string_view between(std::string_view s, std::string_view open, std::string_view close)
{
    const size_t a = s.find(open);
    if (a == std::string_view::npos)
        return {};
    const size_t b = s.find(close, a + open.size());
    if (b == std::string_view::npos)
        return {};
    return s.substr(a + open.size(), b - a - open.size());
}

std::string_view baseName(std::string_view path)
{
    const size_t slash = path.find_last_of('/');
    return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

bool isNativeFile(std::string_view file)
{
    if (file.empty() || file == "??")
        return true;
    for (std::string_view ext : {".cpp", ".cc", ".cxx", ".c", ".h", ".hpp", ".cu", ".cuh"})
        if (endsWith(file, ext))
            return true;
    return false;
}

bool isLibraryFrame(std::string_view file, std::string_view name)
{
    if (isNativeFile(file)) {
        if (name.empty() || name == "??")
            return true;
        // A user's own C++ source compiled with debug info keeps its absolute path.
        if (!file.empty() && file.front() == '/') {
            for (std::string_view lib : {"/torch/", "/aten/", "/c10/", "/usr/", "/include/"})
                if (file.find(lib) != std::string_view::npos)
                    return true;
            return false;
        }
        static constexpr std::array<std::string_view, 16> prefixes{
            "_Py",     "Py",   "_start", "__",     "pthread", "start_thread", "clone",    "THP",
            "_GLOBAL", "cuda", "cudnn",  "cublas", "cufft",   "curand",       "cusparse", "nccl"};
        for (std::string_view p : prefixes)
            if (name.substr(0, p.size()) == p)
                return true;
        static constexpr std::array<std::string_view, 10> namespaces{
            "torch::", "at::", "c10::", "std::", "caffe2::", "pybind11::", "c10d::", "fmt::", "(anonymous namespace)", "_object"};
        for (std::string_view ns : namespaces)
            if (name.find(ns) != std::string_view::npos)
                return true;
        return false;
    }
    if (file.substr(0, 1) == "<")
        return file.substr(0, 7) == "<frozen" || file.substr(0, 9) == "<built-in";
    for (std::string_view lib : {"/site-packages/", "/dist-packages/", "/lib/python3", "/lib64/python3", "/torch/"})
        if (file.find(lib) != std::string_view::npos)
            return true;
    return false;
}

FrameClassifier::FrameClassifier(const Snapshot& snapshot) : m_snapshot(snapshot)
{
    m_library.resize(snapshot.frames.size());
    for (size_t i = 0; i < m_library.size(); ++i) {
        const Frame& f = snapshot.frames.frame(FrameId{static_cast<int32_t>(i)});
        m_library[i] = isLibraryFrame(snapshot.str(f.filename), snapshot.str(f.name)) ? 1 : 0;
    }
    m_labels = std::make_unique<const StackLabels>(*this);
}

FrameClassifier::~FrameClassifier() = default;

FrameId FrameClassifier::topUserFrame(StackId stack) const
{
    if (!stack.valid())
        return {};
    for (FrameId f : m_snapshot.stacks.frames(stack))
        if (!isLibrary(f))
            return f;
    return {};
}

std::string FrameClassifier::frameText(FrameId id) const
{
    if (!id.valid())
        return {};
    const Frame& f = m_snapshot.frames.frame(id);
    const std::string_view file = m_snapshot.str(f.filename);
    const std::string_view name = m_snapshot.str(f.name);
    std::string out;
    if (isNativeFile(file) && (file.empty() || file == "??")) {
        out = withoutParameters(name);
        return out;
    }
    out = baseName(file);
    if (f.line > 0)
        out += ":" + std::to_string(f.line);
    if (!name.empty()) {
        out += " ";
        out += isNativeFile(file) ? withoutParameters(name) : name;
    }
    return out;
}

std::string FrameClassifier::librarySummary(StackId stack) const
{
    // A stack of library frames only (autograd's engine thread, an optimizer kernel): name the
    // autograd node and the ATen operator that allocated, else the innermost frame that is not
    // the allocator or the stack capture.
    std::string node, op;
    for (FrameId f : m_snapshot.stacks.frames(stack)) {
        const std::string_view name = m_snapshot.str(m_snapshot.frames.frame(f).name);
        if (op.empty()) {
            const std::string_view o = between(name, "at::_ops::", "::call(");
            if (!o.empty() && o.find("::") == std::string_view::npos)
                op = "aten::" + std::string(o);
        }
        if (node.empty()) {
            const std::string_view n = between(name, "autograd::generated::", "::apply(");
            if (!n.empty() && n.find("::") == std::string_view::npos)
                node = std::string(n);
        }
    }
    if (!node.empty() || !op.empty())
        return "(library) " + (node.empty() ? op : op.empty() ? node : node + " > " + op);
    for (FrameId f : m_snapshot.stacks.frames(stack)) {
        const Frame& frame = m_snapshot.frames.frame(f);
        const std::string_view file = m_snapshot.str(frame.filename);
        const std::string_view name = m_snapshot.str(frame.name);
        if (file.find("CUDACachingAllocator") != std::string_view::npos ||
            file.find("memory_snapshot") != std::string_view::npos || name.find("CachingAllocator") != std::string_view::npos ||
            name.find("unwind") != std::string_view::npos || name.find("CapturedTraceback") != std::string_view::npos)
            continue;
        return "(library) " + frameText(f);
    }
    return {};
}

const std::string& FrameClassifier::opText(StackId stack) const { return m_labels->op(stack); }

const std::string& FrameClassifier::moduleText(StackId stack) const { return m_labels->module(stack).text; }

const ModulePath& FrameClassifier::modulePath(StackId stack) const { return m_labels->module(stack); }

std::string FrameClassifier::frameLocation(FrameId id) const
{
    if (!id.valid())
        return {};
    const Frame& f = m_snapshot.frames.frame(id);
    std::string out(m_snapshot.str(f.filename));
    if (f.line > 0)
        out += ":" + std::to_string(f.line);
    return out;
}

std::string FrameClassifier::stackSummary(StackId stack, size_t maxFrames) const
{
    if (!stack.valid())
        return {};
    std::string out;
    size_t n = 0;
    for (FrameId f : m_snapshot.stacks.frames(stack)) {
        if (isLibrary(f))
            continue;
        if (n == maxFrames) {
            out += " < …";
            break;
        }
        if (n++)
            out += " < ";
        out += frameText(f);
    }
    if (out.empty())
        out = librarySummary(stack);
    return out;
}

} // namespace memscope
