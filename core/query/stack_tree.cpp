#include "query/stack_tree.h"

#include <algorithm>
#include <unordered_map>

namespace memscope {

namespace {

// A path element: a frame id (>= 0), or a synthetic label as -(1 + its index in the table).
class PathKeys {
public:
    PathKeys(const FrameClassifier& frames, StackTreeFrames mode) : m_frames(frames), m_mode(mode) { }

    int64_t labelKey(const std::string& label)
    {
        auto [it, inserted] = m_labelIds.emplace(label, static_cast<int64_t>(m_labels.size()));
        if (inserted)
            m_labels.push_back(label);
        return -(1 + it->second);
    }
    const std::string& label(int64_t key) const { return m_labels[static_cast<size_t>(-key - 1)]; }

    // The stack's path, outermost first.
    void project(StackId stack, std::vector<int64_t>& out)
    {
        out.clear();
        if (!stack.valid()) {
            out.push_back(labelKey("(no frames)"));
            return;
        }
        const std::span<const FrameId> f = m_frames.snapshot().stacks.frames(stack);
        if (m_mode == StackTreeFrames::All) {
            for (auto it = f.rbegin(); it != f.rend(); ++it)
                out.push_back(it->value);
            return;
        }
        for (auto it = f.rbegin(); it != f.rend(); ++it)
            if (!m_frames.isLibrary(*it))
                out.push_back(it->value);
        std::string op = m_frames.opText(stack);
        if (op.empty() && out.empty())
            op = m_frames.librarySummary(stack);
        if (!op.empty())
            out.push_back(labelKey(op.rfind("(library) ", 0) == 0 ? op.substr(10) : op));
        else if (out.empty())
            out.push_back(labelKey("(library)"));
    }

private:
    const FrameClassifier& m_frames;
    StackTreeFrames m_mode;
    std::unordered_map<std::string, int64_t> m_labelIds;
    std::vector<std::string> m_labels;
};

struct StackWeight {
    int64_t bytes = 0;
    int64_t count = 0;
    double weight = 0;
};

// Allocations summed by stack (index stack id + 1; 0 is "no frames") into a tree.
std::shared_ptr<StackTree> buildTree(const std::vector<StackWeight>& byStack, const FrameClassifier& frames, StackTreeFrames mode)
{
    auto tree = std::make_shared<StackTree>();
    tree->frames = mode;
    tree->nodes.emplace_back();
    tree->nodes[0].label = "all";
    PathKeys keys(frames, mode);
    std::unordered_map<uint64_t, int32_t> child; // (parent << 32 | key) → node
    std::vector<int64_t> path;
    for (size_t s = 0; s < byStack.size(); ++s) {
        const StackWeight& w = byStack[s];
        if (w.count == 0)
            continue;
        keys.project(s == 0 ? StackId{} : StackId{static_cast<int32_t>(s - 1)}, path);
        int32_t at = 0;
        auto add = [&](int32_t n) {
            StackTreeNode& node = tree->nodes[static_cast<size_t>(n)];
            node.weight += w.weight;
            node.bytes += w.bytes;
            node.count += w.count;
        };
        add(0);
        for (int64_t key : path) {
            const uint64_t k = (static_cast<uint64_t>(at) << 32) | static_cast<uint32_t>(key);
            auto [it, inserted] = child.emplace(k, static_cast<int32_t>(tree->nodes.size()));
            if (inserted) {
                StackTreeNode node;
                if (key >= 0)
                    node.frame = FrameId{static_cast<int32_t>(key)};
                else
                    node.label = keys.label(key);
                node.parent = at;
                node.depth = tree->nodes[static_cast<size_t>(at)].depth + 1;
                tree->maxDepth = std::max(tree->maxDepth, node.depth);
                tree->nodes[static_cast<size_t>(at)].children.push_back(it->second);
                tree->nodes.push_back(std::move(node));
            }
            at = it->second;
            add(at);
        }
        tree->nodes[static_cast<size_t>(at)].selfWeight += w.weight;
    }
    for (StackTreeNode& n : tree->nodes)
        std::stable_sort(n.children.begin(), n.children.end(), [&](int32_t a, int32_t b) {
            const StackTreeNode& x = tree->nodes[static_cast<size_t>(a)];
            const StackTreeNode& y = tree->nodes[static_cast<size_t>(b)];
            return x.weight != y.weight ? x.weight > y.weight : x.bytes > y.bytes;
        });
    return tree;
}

size_t stackSlot(const Allocation& a) { return a.stack.valid() ? static_cast<size_t>(a.stack.value) + 1 : 0; }

} // namespace

std::vector<int32_t> StackTree::path(int32_t i) const
{
    std::vector<int32_t> out;
    for (; i > 0; i = node(i).parent)
        out.push_back(i);
    std::reverse(out.begin(), out.end());
    return out;
}

std::shared_ptr<const StackTree> stackTreeAt(const Replay& replay, size_t deviceIndex, const FrameClassifier& frames,
                                             int64_t event, StackTreeFrames mode)
{
    const DeviceReplay& d = replay.devices.at(deviceIndex);
    event = std::clamp<int64_t>(event, -1, d.eventCount - 1);
    std::vector<StackWeight> byStack(frames.snapshot().stacks.size() + 1);
    for (AllocationId id : d.activeAfter(event)) {
        const Allocation& a = d.allocation(id);
        StackWeight& w = byStack[stackSlot(a)];
        w.bytes += static_cast<int64_t>(a.size);
        w.count += 1;
        w.weight += static_cast<double>(a.size);
    }
    auto tree = buildTree(byStack, frames, mode);
    tree->weight = StackTreeWeight::ActiveBytes;
    tree->unit = StackTreeUnit::Bytes;
    tree->deviceIndex = deviceIndex;
    tree->firstEvent = tree->lastEvent = event;
    return tree;
}

std::shared_ptr<const StackTree> stackTreeOverRange(const Replay& replay, size_t deviceIndex, const FrameClassifier& frames,
                                                    int64_t firstEvent, int64_t lastEvent, StackTreeFrames mode)
{
    const DeviceReplay& d = replay.devices.at(deviceIndex);
    const EventTable& ev = replay.snapshot->devices.at(deviceIndex).events;
    const int64_t lastIndex = std::max<int64_t>(d.eventCount - 1, 0);
    const int64_t first = std::clamp<int64_t>(std::min(firstEvent, lastEvent), 0, lastIndex);
    const int64_t last = std::clamp<int64_t>(std::max(firstEvent, lastEvent), first, lastIndex);
    const bool timed = ev.hasTime && d.eventCount > 0;
    auto clock = [&](int64_t e) {
        return timed ? static_cast<double>(ev.timeUs[static_cast<size_t>(e)]) : static_cast<double>(e);
    };
    const double scale = timed ? 1e-6 : 1.0; // µs → s
    const double t0 = d.eventCount > 0 ? clock(first) : 0;
    const double t1 = d.eventCount > 0 ? clock(last) : 0;

    std::vector<StackWeight> byStack(frames.snapshot().stacks.size() + 1);
    for (const Allocation& a : d.allocations) {
        const bool activeInRange = (!a.allocEvent.valid() || a.allocEvent.value <= last) &&
                                   (!a.freeEvent.valid() || a.freeEvent.value > first);
        if (!activeInRange || d.eventCount == 0)
            continue;
        const double start = std::max(t0, a.allocEvent.valid() ? clock(a.allocEvent.value) : t0);
        const double end = std::min(t1, a.freeEvent.valid() ? clock(a.freeEvent.value) : t1);
        StackWeight& w = byStack[stackSlot(a)];
        w.bytes += static_cast<int64_t>(a.size);
        w.count += 1;
        w.weight += static_cast<double>(a.size) * std::max(0.0, end - start) * scale;
    }
    auto tree = buildTree(byStack, frames, mode);
    tree->weight = StackTreeWeight::ByteSeconds;
    tree->unit = timed ? StackTreeUnit::ByteSeconds : StackTreeUnit::ByteEvents;
    tree->deviceIndex = deviceIndex;
    tree->firstEvent = first;
    tree->lastEvent = last;
    return tree;
}

std::vector<uint8_t> stacksUnder(const StackTree& tree, int32_t node, const FrameClassifier& frames)
{
    const size_t n = frames.snapshot().stacks.size();
    std::vector<uint8_t> out(n + 1, 0);
    PathKeys keys(frames, tree.frames);
    std::vector<int64_t> prefix;
    for (int32_t i : tree.path(node)) {
        const StackTreeNode& x = tree.node(i);
        prefix.push_back(x.frame.valid() ? x.frame.value : keys.labelKey(x.label));
    }
    std::vector<int64_t> path;
    for (size_t s = 0; s <= n; ++s) {
        keys.project(s == n ? StackId{} : StackId{static_cast<int32_t>(s)}, path);
        out[s] = path.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), path.begin()) ? 1 : 0;
    }
    return out;
}

std::string stackTreeNodeText(const StackTree& tree, int32_t node, const FrameClassifier& frames)
{
    const StackTreeNode& x = tree.node(node);
    if (!x.frame.valid())
        return x.label;
    std::string text = frames.frameText(x.frame);
    return text.empty() ? std::string("??") : text;
}

} // namespace memscope
