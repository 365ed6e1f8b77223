#include "attribute/collective_memory.h"

#include <string>
#include <unordered_map>

namespace memscope {

namespace {

bool contains(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }

bool endsWith(std::string_view s, std::string_view tail)
{
    return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

enum class Verdict { Continue, Stop, Kind };

struct FrameVerdict {
    Verdict verdict = Verdict::Continue;
    CollectiveKind kind = CollectiveKind::None;
};

FrameVerdict nativeFrame(std::string_view name)
{
    if (contains(name, "c10d::Reducer"))
        return {Verdict::Kind, CollectiveKind::GradientBucket};
    if (contains(name, "c10d::") || contains(name, "ProcessGroupNCCL") || contains(name, "ncclComm"))
        return {Verdict::Kind, CollectiveKind::CollectiveBuffer};
    return {};
}

FrameVerdict pythonFrame(std::string file, std::string_view name)
{
    for (char& c : file)
        if (c == '\\')
            c = '/';
    const bool fsdp = contains(file, "torch/distributed/fsdp/") || contains(file, "torch/distributed/_composable/fsdp/") ||
                      contains(file, "/fsdp/_fully_shard/");
    if (fsdp) {
        if (contains(name, "all_gather") || contains(name, "unshard") || contains(name, "alloc_storage"))
            return {Verdict::Kind, CollectiveKind::FsdpUnsharded};
        if (contains(name, "reduce") || contains(name, "scatter"))
            return {Verdict::Kind, CollectiveKind::CollectiveBuffer};
        return {}; // FSDP's hooks and wrappers: look further out
    }
    if (endsWith(file, "torch/nn/parallel/distributed.py")) {
        // DDP's forward wraps the whole model: only its communication helpers count.
        if (contains(name, "sync") || contains(name, "broadcast") || contains(name, "bucket") || contains(name, "reduce") ||
            contains(name, "gather"))
            return {Verdict::Kind, CollectiveKind::CollectiveBuffer};
        return {Verdict::Stop};
    }
    if (contains(file, "torch/distributed/")) {
        if (endsWith(file, "distributed_c10d.py") || contains(file, "_functional_collectives") ||
            endsWith(file, "torch/distributed/utils.py"))
            return {Verdict::Kind, CollectiveKind::CollectiveBuffer};
        return {}; // other torch.distributed code (tensor parallel, checkpoint wrappers): further out
    }
    return {Verdict::Stop};
}

} // namespace

std::string_view collectiveKindName(CollectiveKind kind)
{
    switch (kind) {
    case CollectiveKind::None: return "none";
    case CollectiveKind::GradientBucket: return "gradient_bucket";
    case CollectiveKind::CollectiveBuffer: return "collective_buffer";
    case CollectiveKind::FsdpUnsharded: return "fsdp_unsharded";
    case CollectiveKind::PendingFree: return "pending_free";
    }
    return "none";
}

std::string_view collectiveKindLabel(CollectiveKind kind)
{
    switch (kind) {
    case CollectiveKind::None: return "Not communication";
    case CollectiveKind::GradientBucket: return "DDP gradient buckets";
    case CollectiveKind::CollectiveBuffer: return "Collective buffers";
    case CollectiveKind::FsdpUnsharded: return "FSDP unsharded parameters";
    case CollectiveKind::PendingFree: return "Frees pending on other streams";
    }
    return "";
}

int64_t DeviceCollectives::atPeakTotal() const
{
    int64_t total = 0;
    for (size_t k = 1; k < atPeak.size(); ++k)
        total += atPeak[k];
    return total;
}

CollectiveKind classifyCollectiveStack(const Snapshot& snapshot, StackId stack)
{
    if (!stack.valid())
        return CollectiveKind::None;
    for (FrameId id : snapshot.stacks.frames(stack)) {
        const Frame& f = snapshot.frames.frame(id);
        const std::string_view file = snapshot.str(f.filename);
        const std::string_view name = snapshot.str(f.name);
        const FrameVerdict v = endsWith(file, ".py") ? pythonFrame(std::string(file), name) : nativeFrame(name);
        if (v.verdict == Verdict::Kind)
            return v.kind;
        if (v.verdict == Verdict::Stop)
            return CollectiveKind::None;
    }
    return CollectiveKind::None;
}

Collectives findCollectives(const Replay& replay)
{
    Collectives out;
    const Snapshot& snapshot = *replay.snapshot;
    std::unordered_map<int32_t, CollectiveKind> byStack;
    for (size_t d = 0; d < replay.devices.size(); ++d) {
        const DeviceReplay& r = replay.devices[d];
        const EventTable& ev = snapshot.devices[d].events;
        DeviceCollectives c;
        c.allocationKind.resize(r.allocations.size(), CollectiveKind::None);
        std::array<int64_t, kCollectiveKindCount> live{};
        for (size_t a = 0; a < r.allocations.size(); ++a) {
            const Allocation& alloc = r.allocations[a];
            auto [it, added] = byStack.try_emplace(alloc.stack.value, CollectiveKind::None);
            if (added)
                it->second = classifyCollectiveStack(snapshot, alloc.stack);
            c.allocationKind[a] = it->second;
            if (it->second != CollectiveKind::None) {
                ++c.allocations;
                if (alloc.preexisting())
                    live[static_cast<size_t>(it->second)] += static_cast<int64_t>(alloc.size);
            }
        }
        auto total = [&] {
            int64_t t = 0;
            for (size_t k = 1; k < live.size(); ++k)
                t += live[k];
            return t;
        };
        c.bytes.resize(static_cast<size_t>(r.eventCount));
        c.peakBytes = total();
        c.maximum = live;
        const int64_t peakEvent = r.peakRequested.event.valid() ? r.peakRequested.event.value : -1;
        if (peakEvent < 0)
            c.atPeak = live;
        for (int64_t i = 0; i < r.eventCount; ++i) {
            const AllocationId id = r.eventAllocation[static_cast<size_t>(i)];
            if (id.valid()) {
                const Allocation& a = r.allocation(id);
                const auto kind = static_cast<size_t>(c.allocationKind[static_cast<size_t>(id.value)]);
                const auto size = static_cast<int64_t>(a.size);
                const bool pending = a.freeRequestedEvent.valid() && a.freeEvent.valid() &&
                                     a.freeEvent.value > a.freeRequestedEvent.value + 1;
                switch (ev.action[static_cast<size_t>(i)]) {
                case Action::Alloc:
                    if (a.allocEvent.value == i && kind != 0)
                        live[kind] += size;
                    break;
                case Action::FreeRequested:
                    if (a.freeRequestedEvent.value == i && kind == 0 && pending)
                        live[static_cast<size_t>(CollectiveKind::PendingFree)] += size;
                    break;
                case Action::FreeCompleted:
                    if (a.freeEvent.value == i) {
                        if (kind != 0)
                            live[kind] -= size;
                        else if (pending)
                            live[static_cast<size_t>(CollectiveKind::PendingFree)] -= size;
                    }
                    break;
                default: break;
                }
            }
            const int64_t t = total();
            c.bytes[static_cast<size_t>(i)] = t;
            for (size_t k = 1; k < live.size(); ++k)
                c.maximum[k] = std::max(c.maximum[k], live[k]);
            if (t > c.peakBytes) {
                c.peakBytes = t;
                c.peakEvent = EventIndex{i};
            }
            if (i == peakEvent)
                c.atPeak = live;
        }
        out.devices.push_back(std::move(c));
    }
    return out;
}

} // namespace memscope
