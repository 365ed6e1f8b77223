#include "diagnose/repeated_passes.h"

#include "snapshot/frame_classifier.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace memscope {

namespace {

bool endsWith(std::string_view s, std::string_view suffix)
{
    return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// The frames of each distinct stack that take part, outermost first; computed on first use.
class StackPaths {
public:
    StackPaths(const Snapshot& s) : m_snapshot(s), m_paths(s.stacks.size()), m_done(s.stacks.size(), 0)
    {
        m_python.resize(s.frames.size());
        for (size_t i = 0; i < s.frames.size(); ++i) {
            const Frame& f = s.frames.frame(FrameId{static_cast<int32_t>(i)});
            m_python[i] = endsWith(s.str(f.filename), ".py") ? 1 : 0;
            m_anyPython = m_anyPython || m_python[i];
        }
    }

    const std::vector<FrameId>& of(StackId id)
    {
        static const std::vector<FrameId> none;
        if (!id.valid() || static_cast<size_t>(id.value) >= m_paths.size())
            return none;
        const size_t i = static_cast<size_t>(id.value);
        if (!m_done[i]) {
            const auto frames = m_snapshot.stacks.frames(id);
            std::vector<FrameId>& p = m_paths[i];
            for (auto it = frames.rbegin(); it != frames.rend(); ++it)
                if (!m_anyPython || m_python[static_cast<size_t>(it->value)])
                    p.push_back(*it);
            m_done[i] = 1;
        }
        return m_paths[i];
    }

    const Frame& frame(FrameId f) const { return m_snapshot.frames.frame(f); }

private:
    const Snapshot& m_snapshot;
    std::vector<std::vector<FrameId>> m_paths;
    std::vector<uint8_t> m_done;
    std::vector<uint8_t> m_python;
    bool m_anyPython = false;
};

// A loop: the frames above it, the function it runs in, the line its back-edges land on.
struct LoopKey {
    std::vector<FrameId> prefix;
    StringId file;
    StringId name;
    int32_t landing = 0;
    auto tie() const { return std::tie(prefix, file.value, name.value, landing); }
    bool operator<(const LoopKey& o) const { return tie() < o.tie(); }
};

struct LoopInfo {
    std::vector<int64_t> backEdges; // events starting a pass
    int32_t lastLine = 0; // the highest line a back-edge leaves from
    int64_t coverage = 0;
};

} // namespace

std::vector<Pass> findRepeatedPasses(const Snapshot& snapshot, const DeviceTrace& trace)
{
    const EventTable& ev = trace.events;
    const int64_t n = static_cast<int64_t>(ev.count());
    StackPaths paths(snapshot);

    std::map<LoopKey, LoopInfo> loops;
    std::vector<int64_t> allocsOfStack(snapshot.stacks.size(), 0);
    const std::vector<FrameId>* prev = nullptr;
    for (int64_t i = 0; i < n; ++i) {
        if (ev.action[static_cast<size_t>(i)] != Action::Alloc)
            continue;
        const StackId sid = ev.stack[static_cast<size_t>(i)];
        const std::vector<FrameId>& p = paths.of(sid);
        if (p.empty())
            continue;
        ++allocsOfStack[static_cast<size_t>(sid.value)];
        if (prev) {
            const std::vector<FrameId>& q = *prev;
            size_t d = 0;
            while (d < p.size() && d < q.size() && p[d] == q[d])
                ++d;
            if (d < p.size() && d < q.size()) {
                const Frame& a = paths.frame(p[d]);
                const Frame& b = paths.frame(q[d]);
                if (a.filename == b.filename && a.name == b.name && a.line < b.line) {
                    LoopKey key{std::vector<FrameId>(p.begin(), p.begin() + static_cast<std::ptrdiff_t>(d)), a.filename, a.name,
                                a.line};
                    LoopInfo& info = loops[key];
                    info.backEdges.push_back(i);
                    info.lastLine = std::max(info.lastLine, b.line);
                }
            }
        }
        prev = &p;
    }
    // A loop inside a module call (the layers of a model) or in library code is not the program's loop:
    // the trace may open inside one forward (a ring buffer that dropped its start).
    auto programLoop = [&](const LoopKey& key) {
        if (isLibraryFrame(snapshot.str(key.file), snapshot.str(key.name)))
            return false;
        for (FrameId f : key.prefix) {
            const std::string_view file = snapshot.str(paths.frame(f).filename);
            if (endsWith(file, "torch/nn/modules/module.py") || endsWith(file, "torch\\nn\\modules\\module.py"))
                return false;
        }
        return true;
    };
    std::erase_if(loops, [&](const auto& kv) { return !programLoop(kv.first); });
    if (loops.empty())
        return {};

    // Is a stack inside a loop's frame, and at which line of it (0: no)?
    auto lineIn = [&](const LoopKey& key, StackId sid) -> int32_t {
        const std::vector<FrameId>& p = paths.of(sid);
        const size_t d = key.prefix.size();
        if (p.size() <= d || !std::equal(key.prefix.begin(), key.prefix.end(), p.begin()))
            return 0;
        const Frame& f = paths.frame(p[d]);
        return f.filename == key.file && f.name == key.name ? std::max<int32_t>(f.line, 1) : 0;
    };

    const LoopKey* best = nullptr;
    LoopInfo* bestInfo = nullptr;
    for (auto& loop : loops) {
        // Named references, not a structured binding: clang 14 (the fuzz build) cannot
        // capture a binding in the lambda below.
        const LoopKey& key = loop.first;
        LoopInfo& info = loop.second;
        for (size_t s = 0; s < allocsOfStack.size(); ++s)
            if (allocsOfStack[s] && lineIn(key, StackId{static_cast<int32_t>(s)}))
                info.coverage += allocsOfStack[s];
        auto better = [&] {
            if (!best)
                return true;
            if (info.coverage != bestInfo->coverage)
                return info.coverage > bestInfo->coverage;
            if (key.prefix.size() != best->prefix.size())
                return key.prefix.size() < best->prefix.size();
            return info.backEdges.size() > bestInfo->backEdges.size();
        };
        if (better()) {
            best = &key;
            bestInfo = &info;
        }
    }

    // The loop's region: allocs inside its frame at a line of its body.
    auto inBody = [&](int64_t i) {
        const int32_t line = lineIn(*best, ev.stack[static_cast<size_t>(i)]);
        return line >= best->landing && line <= bestInfo->lastLine;
    };
    const std::vector<int64_t>& edges = bestInfo->backEdges;
    int64_t first = edges.front();
    for (int64_t i = 0; i < edges.front(); ++i)
        if (ev.action[static_cast<size_t>(i)] == Action::Alloc && inBody(i)) {
            first = i;
            break;
        }
    int64_t lastMember = edges.back();
    for (int64_t i = n - 1; i > edges.back(); --i)
        if (ev.action[static_cast<size_t>(i)] == Action::Alloc && inBody(i)) {
            lastMember = i;
            break;
        }
    int64_t end = n - 1;
    for (int64_t i = lastMember + 1; i < n; ++i)
        if (ev.action[static_cast<size_t>(i)] == Action::Alloc && !paths.of(ev.stack[static_cast<size_t>(i)]).empty() &&
            !inBody(i)) {
            end = i - 1;
            break;
        }

    std::vector<Pass> passes;
    int64_t start = first;
    for (int64_t e : edges) {
        if (e <= start)
            continue;
        passes.push_back({start, e - 1});
        start = e;
    }
    passes.push_back({start, std::max(start, end)});
    if (passes.size() < 2)
        return {};
    return passes;
}

std::vector<Pass> loopPasses(const DeviceContext& ctx)
{
    std::vector<Pass> out;
    const auto& its = ctx.attribution.iterations;
    if (its.size() >= 2) {
        for (const Iteration& it : its)
            out.push_back({it.firstEvent, it.lastEvent});
        return out;
    }
    out = findRepeatedPasses(ctx.snapshot, ctx.trace);
    if (!out.empty())
        return out;
    for (const Iteration& it : its)
        out.push_back({it.firstEvent, it.lastEvent});
    return out;
}

} // namespace memscope
