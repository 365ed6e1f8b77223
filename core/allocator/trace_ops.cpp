#include "allocator/trace_ops.h"

#include <map>

namespace memscope {

namespace {

bool isSegmentAction(Action a)
{
    return a == Action::SegmentAlloc || a == Action::SegmentFree || a == Action::SegmentMap || a == Action::SegmentUnmap;
}
bool isRelease(Action a) { return a == Action::SegmentFree || a == Action::SegmentUnmap; }
bool isGrowth(Action a) { return a == Action::SegmentAlloc || a == Action::SegmentMap; }

} // namespace

OpStream opsFromRecording(const Replay& replay, size_t deviceIndex)
{
    const DeviceReplay& dr = replay.devices.at(deviceIndex);
    const EventTable& ev = replay.snapshot->devices.at(deviceIndex).events;
    const size_t n = ev.count();
    OpStream s;
    s.device = dr.device;
    s.eventCount = static_cast<int64_t>(n);
    s.keyCount = static_cast<uint32_t>(dr.allocations.size());
    s.ops.reserve(n + 16);
    for (size_t a = 0; a < dr.allocations.size() && dr.allocations[a].preexisting(); ++a) {
        const Allocation& al = dr.allocations[a];
        s.ops.push_back(
            {TraceOp::Kind::Alloc, Category::Other, static_cast<uint32_t>(a), static_cast<int32_t>(a), al.size, al.stream, -1});
    }
    for (size_t j = 0; j < n; ++j)
        if (ev.action[j] == Action::SegmentAlloc)
            s.recordedSegments.emplace_back(ev.size[j], ev.addr[j]);
    for (size_t i = 0; i < n; ++i) {
        const Action a = ev.action[i];
        if (isSegmentAction(a))
            continue;
        // empty_cache(): releases right before this entry that no allocation explains
        size_t runStart = i;
        while (runStart > 0 && isSegmentAction(ev.action[runStart - 1]))
            --runStart;
        size_t releases = 0;
        bool growthAfterRelease = false;
        for (size_t j = runStart; j < i; ++j) {
            if (isRelease(ev.action[j]))
                ++releases;
            else if (isGrowth(ev.action[j]) && releases > 0)
                growthAfterRelease = true;
        }
        const bool allocating = a == Action::Alloc || a == Action::Oom;
        if (releases > 0 && (!allocating || !growthAfterRelease))
            s.ops.push_back({TraceOp::Kind::EmptyCache, Category::Other, 0, -1, 0, 0, static_cast<int64_t>(i)});
        const AllocationId id = dr.eventAllocation[i];
        const int32_t origin = id.valid() ? static_cast<int32_t>(id.value) : -1;
        const uint32_t key = id.valid() ? static_cast<uint32_t>(id.value) : 0;
        if (a == Action::Alloc && id.valid())
            s.ops.push_back(
                {TraceOp::Kind::Alloc, Category::Other, key, origin, ev.size[i], ev.stream[i], static_cast<int64_t>(i)});
        else if (a == Action::Oom)
            s.ops.push_back({TraceOp::Kind::Probe, Category::Other, 0, -1, ev.size[i], ev.stream[i], static_cast<int64_t>(i)});
        else if (a == Action::FreeRequested && id.valid())
            s.ops.push_back(
                {TraceOp::Kind::FreeRequested, Category::Other, key, origin, 0, ev.stream[i], static_cast<int64_t>(i)});
        else if (a == Action::FreeCompleted && id.valid())
            s.ops.push_back({TraceOp::Kind::Free, Category::Other, key, origin, 0, ev.stream[i], static_cast<int64_t>(i)});
    }
    // a trailing run of releases (empty_cache() before the dump)
    if (n > 0 && isSegmentAction(ev.action[n - 1])) {
        bool release = false;
        for (size_t j = n; j-- > 0 && isSegmentAction(ev.action[j]);)
            release = release || isRelease(ev.action[j]);
        if (release)
            s.ops.push_back({TraceOp::Kind::EmptyCache, Category::Other, 0, -1, 0, 0, static_cast<int64_t>(n)});
    }
    return s;
}

SimulationResult simulateOps(const OpStream& stream, const DeviceAttribution* attribution, const SimulationOptions& options)
{
    SimulationResult result;
    result.device = stream.device;
    result.settings = options.settings;
    result.capacity = options.capacity;
    result.eventCount = static_cast<int64_t>(stream.ops.size());

    CachingAllocatorModel::Options mo;
    mo.settings = options.settings;
    mo.capacity = options.capacity;
    mo.deviceTotal = options.deviceTotal                               ? options.deviceTotal
                     : options.capacity != AllocatorSettings::kNoLimit ? options.capacity
                                                                       : 150ull << 30;
    CachingAllocatorModel::Hooks hooks;
    hooks.segmentAddress = CachingAllocatorModel::Hooks::recordedAddresses(stream.recordedSegments);
    CachingAllocatorModel model(mo, hooks);
    std::vector<CachingAllocatorModel::BlockRef> blockOf(stream.keyCount, -1);
    std::vector<std::pair<uint64_t, Category>> liveOf; // with keepCurve: bytes and category per key
    std::array<int64_t, kCategoryCount> live{};
    if (options.keepCurve) {
        result.reserved.assign(stream.ops.size(), 0);
        for (auto& c : result.byCategory)
            c.assign(stream.ops.size(), 0);
        liveOf.assign(stream.keyCount, {0, Category::Other});
    }

    int64_t simulated = 0;
    int64_t allocatedMax = 0;
    for (size_t k = 0; k < stream.ops.size(); ++k) {
        const TraceOp& op = stream.ops[k];
        switch (op.kind) {
        case TraceOp::Kind::EmptyCache: model.emptyCache(); break;
        case TraceOp::Kind::Alloc:
        case TraceOp::Kind::Probe: {
            const auto b = model.malloc(op.size, op.stream);
            if (!b && op.optional) {
                ++result.workspacesDropped;
            } else if (!b) {
                SimulatedOom o;
                o.event = op.event;
                o.size = op.size;
                o.roundedSize = CachingAllocatorModel::roundSize(op.size, options.settings);
                if (attribution && op.event >= 0 && static_cast<size_t>(op.event) < attribution->eventPhase.size())
                    o.phase = attribution->eventPhase[static_cast<size_t>(op.event)];
                o.reserved = model.reserved();
                o.allocated = model.allocated();
                result.oom = o;
            } else if (op.kind == TraceOp::Kind::Probe) {
                model.freeCompleted(*b);
                ++result.recordedOomsAvoided;
            } else if (op.key < blockOf.size()) {
                blockOf[op.key] = *b;
                if (options.keepCurve) {
                    liveOf[op.key] = {op.size, op.category};
                    live[static_cast<size_t>(op.category)] += static_cast<int64_t>(op.size);
                }
            }
            break;
        }
        case TraceOp::Kind::FreeRequested:
            if (op.key < blockOf.size() && blockOf[op.key] >= 0)
                model.freeRequested(blockOf[op.key]);
            break;
        case TraceOp::Kind::Free:
            if (op.key < blockOf.size() && blockOf[op.key] >= 0) {
                model.freeCompleted(blockOf[op.key]);
                blockOf[op.key] = -1;
                if (options.keepCurve)
                    live[static_cast<size_t>(liveOf[op.key].second)] -= static_cast<int64_t>(liveOf[op.key].first);
            }
            break;
        }
        model.takeSegmentEvents();
        if (result.oom)
            break;
        ++simulated;
        if (model.reserved() > 0 && model.reserved() >= model.reservedPeak() &&
            (result.reservedPeakEvent < 0 || model.reserved() > result.reservedPeak)) {
            result.reservedPeak = model.reserved();
            result.reservedPeakEvent = op.event;
            result.allocatedAtReservedPeak = model.allocated();
            result.largestFreeAtReservedPeak = static_cast<int64_t>(model.largestFreeBlock());
        }
        if (model.allocated() > 0 && model.allocated() > allocatedMax) {
            allocatedMax = model.allocated();
            result.allocatedPeakEvent = op.event;
            result.reservedAtAllocatedPeak = model.reserved();
            result.largestFreeAtAllocatedPeak = static_cast<int64_t>(model.largestFreeBlock());
        }
        if (options.keepCurve) {
            result.reserved[k] = model.reserved();
            for (size_t c = 0; c < live.size(); ++c)
                result.byCategory[c][k] = live[c];
        }
    }
    result.eventsSimulated = simulated;
    result.reservedPeak = std::max(result.reservedPeak, model.reservedPeak());
    result.allocatedPeak = model.allocatedPeak();
    result.requestedPeak = model.requestedPeak();
    result.segmentsCreated = model.deviceAllocs();
    result.segmentsReleased = model.deviceFrees();
    return result;
}

} // namespace memscope
