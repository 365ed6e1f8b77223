#include "allocator/allocator_simulation.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

namespace memscope {

namespace {

constexpr uint64_t kSmallSegment = 2ull << 20;

bool isSegmentAction(Action a)
{
    return a == Action::SegmentAlloc || a == Action::SegmentFree || a == Action::SegmentMap || a == Action::SegmentUnmap;
}
bool isRelease(Action a) { return a == Action::SegmentFree || a == Action::SegmentUnmap; }
bool isGrowth(Action a) { return a == Action::SegmentAlloc || a == Action::SegmentMap; }

std::string hex(uint64_t x)
{
    std::ostringstream o;
    o << "0x" << std::hex << x;
    return o.str();
}

struct SegmentRef {
    uint64_t addr;
    uint64_t size;
    uint64_t stream;
    bool small;
};

// Segments that existed before the first event: freed in the trace before any segment_alloc
// at their address, or alive at the dump with no segment_alloc at their address at all.
std::vector<SegmentRef> segmentsBeforeTrace(const Snapshot& snapshot, const DeviceTrace& trace)
{
    const EventTable& ev = trace.events;
    std::set<uint64_t> allocated;
    std::set<uint64_t> everAllocated;
    std::map<uint64_t, SegmentRef> before;
    for (size_t i = 0; i < ev.count(); ++i) {
        if (ev.action[i] == Action::SegmentAlloc) {
            allocated.insert(ev.addr[i]);
            everAllocated.insert(ev.addr[i]);
        } else if (ev.action[i] == Action::SegmentFree) {
            if (!allocated.count(ev.addr[i]))
                before[ev.addr[i]] = {ev.addr[i], ev.size[i], ev.stream[i], ev.size[i] == kSmallSegment};
            allocated.erase(ev.addr[i]);
        }
    }
    for (const Segment& s : snapshot.segments) {
        if (s.device != trace.device || s.expandable || everAllocated.count(s.address) || before.count(s.address))
            continue;
        before[s.address] = {s.address, s.totalSize, s.stream, !s.largePool};
    }
    std::vector<SegmentRef> out;
    for (const auto& [addr, s] : before)
        out.push_back(s);
    return out;
}

} // namespace

SimulationResult simulateDevice(const Replay& replay, size_t deviceIndex, const DeviceAttribution* attribution,
                                const SimulationOptions& options)
{
    const DeviceReplay& dr = replay.devices.at(deviceIndex);
    const Snapshot& snapshot = *replay.snapshot;
    const DeviceTrace& trace = snapshot.devices.at(deviceIndex);
    const EventTable& ev = trace.events;
    const size_t n = ev.count();
    const bool follow = options.followRecording;

    SimulationResult result;
    result.device = dr.device;
    result.settings = options.settings;
    result.capacity = options.capacity;
    result.eventCount = static_cast<int64_t>(n);
    result.truncated = dr.truncated;

    // The segment entries of the trace right before event i: [runStart, i).
    size_t runStart = 0;
    size_t runEnd = 0;
    std::vector<bool> consumed(n, false);
    size_t recordedReleases = 0; // releases the trace shows before this step's entry
    bool failAll = false; // a recorded oom: every attempt fails

    CachingAllocatorModel::Options mo;
    mo.settings = options.settings;
    mo.capacity = options.capacity;
    mo.deviceTotal = options.deviceTotal                               ? options.deviceTotal
                     : options.capacity != AllocatorSettings::kNoLimit ? options.capacity
                                                                       : 150ull << 30;
    CachingAllocatorModel::Hooks hooks;
    CachingAllocatorModel* modelPtr = nullptr;
    if (follow) {
        hooks.failDeviceAlloc = [&](uint64_t) {
            size_t released = 0;
            for (const auto& e : modelPtr->pendingSegmentEvents())
                released += isRelease(e.action) ? 1 : 0;
            return failAll || released < recordedReleases;
        };
        hooks.segmentAddress = [&](uint64_t bytes, bool expandable) -> std::optional<uint64_t> {
            for (size_t j = runStart; j < runEnd; ++j) {
                if (consumed[j])
                    continue;
                if (!expandable && ev.action[j] == Action::SegmentAlloc && ev.size[j] == bytes) {
                    consumed[j] = true;
                    return ev.addr[j];
                }
                if (expandable && ev.action[j] == Action::SegmentMap)
                    return ev.addr[j]; // a fresh range is first mapped at its base
            }
            return std::nullopt;
        };
    }
    // What-ifs take the recorded addresses too, in the order the recording got them, for
    // segments of a size it also got (best fit breaks ties by address); others are modelled.
    if (!follow) {
        std::vector<std::pair<uint64_t, uint64_t>> recorded;
        for (size_t j = 0; j < n; ++j)
            if (ev.action[j] == Action::SegmentAlloc)
                recorded.emplace_back(ev.size[j], ev.addr[j]);
        hooks.segmentAddress = CachingAllocatorModel::Hooks::recordedAddresses(recorded);
    }
    CachingAllocatorModel model(mo, hooks);
    modelPtr = &model;

    // --- state from before the recording
    std::vector<CachingAllocatorModel::BlockRef> blockOf(dr.allocations.size(), -1);
    const std::vector<SegmentRef> early = segmentsBeforeTrace(snapshot, trace);
    for (const SegmentRef& s : early)
        model.seedSegment(s.addr, s.size, s.stream, s.small);
    std::map<uint64_t, uint64_t> dumpBlockSize; // allocated blocks at dump time: address -> size
    for (const Segment& s : snapshot.segments)
        if (s.device == trace.device)
            for (const Block& b : s.blocks)
                if (b.state == BlockState::ActiveAllocated || b.state == BlockState::ActivePendingFree)
                    dumpBlockSize[b.address] = b.size;
    int64_t unplaced = 0;
    for (size_t a = 0; a < dr.allocations.size(); ++a) {
        const Allocation& al = dr.allocations[a];
        if (!al.preexisting())
            break; // pre-existing ones come first
        uint64_t size = CachingAllocatorModel::roundSize(al.size, options.settings);
        if (auto it = dumpBlockSize.find(al.addr); it != dumpBlockSize.end() && al.aliveAtEnd())
            size = it->second;
        if (auto b = model.seedAllocation(al.addr, size, al.size, al.stream))
            blockOf[a] = *b;
        else
            ++unplaced;
    }
    result.startStateGuessed = !early.empty() || dr.preexistingCount > 0;
    if (dr.truncated)
        result.caveat = "the trace is truncated (" + dr.truncationReason +
                        "): the allocator's state before it is rebuilt, not known";
    else if (result.startStateGuessed)
        result.caveat = "the recording started after " + std::to_string(dr.preexistingCount) + " allocation(s) and " +
                        std::to_string(early.size()) + " segment(s) existed: their layout is rebuilt, not known";
    if (unplaced > 0)
        result.caveat += (result.caveat.empty() ? "" : "; ") + std::to_string(unplaced) +
                         " allocation(s) from before the recording could not be placed";
    model.takeSegmentEvents(); // seeding is not an event

    auto sizeOf = [&](AllocationId id, uint64_t recorded) {
        return options.sizeOf && id.valid() ? options.sizeOf(id, recorded) : recorded;
    };

    auto noteMismatch = [&](int64_t i, const std::string& what) {
        if (result.firstMismatchEvent < 0) {
            result.firstMismatchEvent = i;
            result.firstMismatch = what;
        }
    };

    // Compares the model's segment events of this step with the trace's run.
    auto checkRun = [&](int64_t at, const std::vector<CachingAllocatorModel::SegmentEvent>& made) {
        if (!follow)
            return;
        std::multiset<std::tuple<int, uint64_t, uint64_t>> want, got;
        for (size_t j = runStart; j < runEnd; ++j)
            want.insert({static_cast<int>(ev.action[j]), ev.addr[j], ev.size[j]});
        for (const auto& e : made)
            got.insert({static_cast<int>(e.action), e.addr, e.size});
        if (want.empty() && got.empty())
            return;
        ++result.segmentRunsChecked;
        if (want != got) {
            ++result.segmentRunMismatches;
            std::ostringstream o;
            o << "event " << at << ": the trace has " << want.size() << " segment event(s) before it, the model made "
              << got.size();
            if (!want.empty())
                o << "; first in the trace: " << actionName(static_cast<Action>(std::get<0>(*want.begin()))) << " "
                  << hex(std::get<1>(*want.begin())) << " " << std::get<2>(*want.begin()) << " B";
            if (!got.empty())
                o << "; first made: " << actionName(static_cast<Action>(std::get<0>(*got.begin()))) << " "
                  << hex(std::get<1>(*got.begin())) << " " << std::get<2>(*got.begin()) << " B";
            noteMismatch(at, o.str());
        }
    };

    int64_t allocatedMax = 0;
    auto afterEvent = [&](int64_t i) {
        if (model.reserved() > 0 && model.reserved() >= model.reservedPeak() &&
            (result.reservedPeakEvent < 0 || model.reserved() > result.reservedPeak)) {
            result.reservedPeak = model.reserved();
            result.reservedPeakEvent = i;
            result.allocatedAtReservedPeak = model.allocated();
            result.largestFreeAtReservedPeak = static_cast<int64_t>(model.largestFreeBlock());
        }
        if (model.allocated() > 0 && model.allocated() > allocatedMax) {
            allocatedMax = model.allocated();
            result.allocatedPeakEvent = i;
            result.reservedAtAllocatedPeak = model.reserved();
            result.largestFreeAtAllocatedPeak = static_cast<int64_t>(model.largestFreeBlock());
        }
        if (options.keepCurve)
            result.reserved[static_cast<size_t>(i)] = model.reserved();
    };
    if (options.keepCurve)
        result.reserved.assign(n, 0);
    result.reservedPeak = 0;
    if (model.reserved() > 0) { // the seeded state is the first candidate
        allocatedMax = model.allocated();
        result.reservedAtAllocatedPeak = model.reserved();
        result.largestFreeAtAllocatedPeak = static_cast<int64_t>(model.largestFreeBlock());
        result.reservedPeak = model.reserved();
        result.allocatedAtReservedPeak = model.allocated();
        result.largestFreeAtReservedPeak = static_cast<int64_t>(model.largestFreeBlock());
    }

    int64_t simulated = 0;
    bool stopped = false;
    for (size_t i = 0; i <= n && !stopped; ++i) {
        if (i < n && isSegmentAction(ev.action[i]))
            continue;
        // The trace's segment entries since the previous non-segment entry.
        runEnd = i;
        runStart = i;
        while (runStart > 0 && isSegmentAction(ev.action[runStart - 1]))
            --runStart;
        recordedReleases = 0;
        bool growthAfterRelease = false;
        for (size_t j = runStart; j < runEnd; ++j) {
            if (isRelease(ev.action[j]))
                ++recordedReleases;
            else if (isGrowth(ev.action[j]) && recordedReleases > 0)
                growthAfterRelease = true;
        }
        failAll = false;
        const Action a = i < n ? ev.action[i] : Action::Snapshot;
        const bool allocating = a == Action::Alloc || a == Action::Oom;
        // empty_cache(): releases no allocation explains (or, replaying exactly, ones before
        // an allocation the cache could have served).
        if (recordedReleases > 0) {
            bool emptyCache = !allocating || !growthAfterRelease;
            if (!emptyCache && follow && a == Action::Alloc) {
                const AllocationId id = dr.eventAllocation[i];
                emptyCache = model.findsCachedBlock(sizeOf(id, ev.size[i]), ev.stream[i]);
            }
            if (emptyCache) {
                model.emptyCache();
                if (follow)
                    recordedReleases = 0;
            } else if (!follow) {
                recordedReleases = 0;
            }
        }
        if (follow) {
            // the emptyCache() above belongs to this step's run too
            std::vector<CachingAllocatorModel::SegmentEvent> made = model.takeSegmentEvents();
            std::vector<CachingAllocatorModel::SegmentEvent> during;
            if (i < n && a == Action::Alloc) {
                const AllocationId id = dr.eventAllocation[i];
                const uint64_t size = sizeOf(id, ev.size[i]);
                // a failed attempt is followed by the model's releases; the hook fails
                // attempts while the model has released fewer segments than the trace
                const std::optional<CachingAllocatorModel::BlockRef> b = model.malloc(size, ev.stream[i]);
                during = model.takeSegmentEvents();
                made.insert(made.end(), during.begin(), during.end());
                ++result.allocsChecked;
                if (!b) {
                    ++result.addressMismatches;
                    noteMismatch(static_cast<int64_t>(i),
                                 "event " + std::to_string(i) + ": the model ran out of memory where the program did not");
                } else {
                    if (id.valid())
                        blockOf[static_cast<size_t>(id.value)] = *b;
                    if (model.address(*b) != ev.addr[i]) {
                        ++result.addressMismatches;
                        noteMismatch(static_cast<int64_t>(i), "event " + std::to_string(i) + ": alloc of " +
                                                                  std::to_string(ev.size[i]) + " B at " + hex(ev.addr[i]) +
                                                                  ", the model placed it at " + hex(model.address(*b)));
                    }
                }
            } else if (i < n && a == Action::Oom) {
                failAll = true;
                const auto b = model.malloc(ev.size[i], ev.stream[i]);
                failAll = false;
                during = model.takeSegmentEvents();
                made.insert(made.end(), during.begin(), during.end());
                if (b) {
                    model.freeCompleted(*b);
                    noteMismatch(static_cast<int64_t>(i), "event " + std::to_string(i) + ": the model did not run out of memory");
                }
            }
            checkRun(static_cast<int64_t>(i), made);
        } else if (i < n && allocating) {
            const AllocationId id = a == Action::Alloc ? dr.eventAllocation[i] : AllocationId{};
            const uint64_t size = a == Action::Alloc ? sizeOf(id, ev.size[i]) : ev.size[i];
            const auto b = model.malloc(size, ev.stream[i]);
            model.takeSegmentEvents();
            if (!b && id.valid() && options.optional && options.optional(id)) {
                ++result.workspacesDropped;
            } else if (!b) {
                SimulatedOom o;
                o.event = static_cast<int64_t>(i);
                o.timeUs = ev.timeUs[i];
                o.size = size;
                o.roundedSize = CachingAllocatorModel::roundSize(size, options.settings);
                if (attribution && i < attribution->eventPhase.size())
                    o.phase = attribution->eventPhase[i];
                o.reserved = model.reserved();
                o.allocated = model.allocated();
                result.oom = o;
                stopped = true;
            } else if (a == Action::Oom) {
                model.freeCompleted(*b);
                ++result.recordedOomsAvoided;
            } else if (id.valid()) {
                blockOf[static_cast<size_t>(id.value)] = *b;
            }
        } else {
            model.takeSegmentEvents();
        }
        if (stopped)
            break;
        if (i < n && (a == Action::FreeRequested || a == Action::FreeCompleted)) {
            const AllocationId id = dr.eventAllocation[i];
            if (id.valid() && blockOf[static_cast<size_t>(id.value)] >= 0) {
                const auto b = blockOf[static_cast<size_t>(id.value)];
                if (a == Action::FreeRequested) {
                    model.freeRequested(b);
                } else {
                    model.freeCompleted(b);
                    blockOf[static_cast<size_t>(id.value)] = -1;
                }
            }
        }
        if (i < n) {
            ++simulated;
            afterEvent(static_cast<int64_t>(i));
        }
    }
    result.eventsSimulated = simulated;
    result.reservedPeak = std::max(result.reservedPeak, model.reservedPeak());
    result.allocatedPeak = model.allocatedPeak();
    result.requestedPeak = model.requestedPeak();
    result.segmentsCreated = model.deviceAllocs();
    result.segmentsReleased = model.deviceFrees();

    if (follow && !result.oom) {
        // The dump-time layout is the last check.
        std::vector<const Segment*> dump;
        for (const Segment& s : snapshot.segments)
            if (s.device == trace.device)
                dump.push_back(&s);
        std::sort(dump.begin(), dump.end(), [](const Segment* x, const Segment* y) { return x->address < y->address; });
        const auto mine = model.segments();
        result.layoutChecked = true;
        result.layoutMatches = dump.size() == mine.size();
        if (!result.layoutMatches)
            result.layoutMismatch = "the dump has " + std::to_string(dump.size()) + " segment(s), the model " +
                                    std::to_string(mine.size());
        for (size_t k = 0; result.layoutMatches && k < dump.size(); ++k) {
            const Segment& d = *dump[k];
            const auto& m = mine[k];
            bool same = d.address == m.addr && d.totalSize == m.total() && d.blocks.size() == m.blocks.size();
            for (size_t j = 0; same && j < d.blocks.size(); ++j) {
                const bool alloc = d.blocks[j].state == BlockState::ActiveAllocated ||
                                   d.blocks[j].state == BlockState::ActivePendingFree;
                same = d.blocks[j].size == m.blocks[j].size && alloc == m.blocks[j].allocated;
            }
            if (!same) {
                result.layoutMatches = false;
                result.layoutMismatch = "segment at " + hex(d.address) + " (" + std::to_string(d.totalSize) + " B, " +
                                        std::to_string(d.blocks.size()) + " blocks) differs: the model has " + hex(m.addr) +
                                        " (" + std::to_string(m.total()) + " B, " + std::to_string(m.blocks.size()) + " blocks)";
            }
        }
        result.exact = result.addressMismatches == 0 && result.segmentRunMismatches == 0 && result.layoutMatches &&
                       result.firstMismatchEvent < 0;
    }
    return result;
}

} // namespace memscope
