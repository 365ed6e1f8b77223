#include "allocator/what_if.h"

#include "allocator/conv_workspaces.h"
#include "allocator/reduction_buffers.h"

#include <cmath>
#include <memory>
#include <stdexcept>

namespace memscope {

bool scalesWithBatch(const DeviceAttribution& attribution, AllocationId id)
{
    if (!id.valid() || static_cast<size_t>(id.value) >= attribution.allocationCategory.size())
        return false;
    const Category c = attribution.category(id);
    if (c == Category::Activation || c == Category::Input)
        return true;
    if (c != Category::Intermediate)
        return false;
    const Phase p = attribution.allocationPhase[static_cast<size_t>(id.value)];
    return p == Phase::Forward || p == Phase::Backward;
}

bool keptToEnd(const DeviceAttribution& attribution, const Allocation& al)
{
    if (al.aliveAtEnd())
        return true;
    if (attribution.iterations.size() < 2 || !al.allocEvent.valid())
        return false;
    // the last iteration runs to the trace's end: its training ends with its last phase that is
    // not Other (the optimizer step or zero_grad)
    const Iteration& last = attribution.iterations.back();
    int64_t end = -1;
    for (const PhaseRange& r : last.phases)
        if (r.phase != Phase::Other)
            end = std::max(end, r.lastEvent);
    return end >= 0 && al.allocEvent.value < last.firstEvent && al.freeEvent.value > end;
}

bool scalesWithBatch(const DeviceAttribution& attribution, const DeviceReplay& replay, AllocationId id)
{
    if (!scalesWithBatch(attribution, id))
        return false;
    // an intermediate kept to the end is a library's workspace (cuBLAS), sized by the library
    return !(attribution.category(id) == Category::Intermediate && keptToEnd(attribution, replay.allocation(id)));
}

int64_t batchBytesAtPeak(const DeviceAttribution& attribution, const DeviceReplay& replay)
{
    if (!replay.peakRequested.event.valid())
        return 0;
    int64_t bytes = 0;
    for (AllocationId id : replay.activeAfter(replay.peakRequested.event.value))
        if (scalesWithBatch(attribution, replay, id))
            bytes += static_cast<int64_t>(replay.allocation(id).size);
    return bytes;
}

namespace {

// What a batch replay reads besides the sizes, found once per trace (findMaxBatch replays it
// at every probe): reductions' buffers and convolutions' workspaces.
struct BatchTraits {
    std::shared_ptr<const std::vector<ReductionBuffer>> reductions;
    std::shared_ptr<const std::vector<uint8_t>> workspaces;
};

BatchTraits batchTraits(const Replay& replay, size_t deviceIndex, const DeviceAttribution& attribution)
{
    return {std::make_shared<const std::vector<ReductionBuffer>>(reductionBuffers(replay, deviceIndex)),
            std::make_shared<const std::vector<uint8_t>>(
                convolutionWorkspaces(replay, deviceIndex, attribution, PythonStacks(*replay.snapshot)))};
}

SimulationResult simulateBatch(const Replay& replay, size_t deviceIndex, const DeviceAttribution& attribution,
                               SimulationOptions options, double batch, double recordedBatch, const std::vector<uint8_t>* fixed,
                               const BatchTraits& traits)
{
    if (!(batch > 0) || !(recordedBatch > 0))
        throw std::invalid_argument("batch sizes must be > 0");
    const double factor = batch / recordedBatch;
    options.followRecording = false;
    const DeviceReplay& dr = replay.devices.at(deviceIndex);
    options.sizeOf = [&attribution, &dr, factor, fixed, reductions = traits.reductions](AllocationId id,
                                                                                        uint64_t recorded) -> uint64_t {
        const auto i = static_cast<size_t>(id.value);
        if (!scalesWithBatch(attribution, dr, id) || (fixed && i < fixed->size() && (*fixed)[i]))
            return recorded;
        const double scaled = std::ceil(static_cast<double>(recorded) * reductionBufferFactor((*reductions)[i], factor));
        return scaled < 1.0 ? 1 : static_cast<uint64_t>(scaled);
    };
    options.optional = [workspaces = traits.workspaces](AllocationId id) {
        return (*workspaces)[static_cast<size_t>(id.value)] != 0;
    };
    return simulateDevice(replay, deviceIndex, &attribution, options);
}

} // namespace

SimulationResult simulateBatch(const Replay& replay, size_t deviceIndex, const DeviceAttribution& attribution,
                               SimulationOptions options, double batch, double recordedBatch, const std::vector<uint8_t>* fixed)
{
    return simulateBatch(replay, deviceIndex, attribution, std::move(options), batch, recordedBatch, fixed,
                         batchTraits(replay, deviceIndex, attribution));
}

MaxBatchResult findMaxBatch(const Replay& replay, size_t deviceIndex, const DeviceAttribution& attribution,
                            const SimulationOptions& options, double recordedBatch, int64_t batchLimit,
                            const std::vector<uint8_t>* fixed)
{
    if (options.capacity == AllocatorSettings::kNoLimit)
        throw std::invalid_argument("the largest batch needs a capacity");
    MaxBatchResult r;
    std::optional<SimulationResult> best;
    const BatchTraits traits = batchTraits(replay, deviceIndex, attribution);
    auto probe = [&](int64_t b) {
        SimulationResult s = simulateBatch(replay, deviceIndex, attribution, options, static_cast<double>(b), recordedBatch,
                                           fixed, traits);
        const bool fits = !s.oom;
        r.probes.push_back({b, fits, s.reservedPeak});
        if (fits && (!best || b > r.maxBatch)) {
            r.maxBatch = b;
            best = std::move(s);
        }
        return fits;
    };
    int64_t lo = 0; // fits (0: nothing known to fit)
    int64_t hi = -1; // fails
    int64_t start = std::max<int64_t>(1, static_cast<int64_t>(std::llround(recordedBatch)));
    if (probe(start)) {
        lo = start;
        int64_t b = start;
        while (hi < 0) {
            if (b >= batchLimit) {
                r.unbounded = true;
                break;
            }
            b = std::min(batchLimit, b * 2);
            if (probe(b))
                lo = b;
            else
                hi = b;
        }
    } else {
        hi = start;
    }
    while (hi > 0 && hi - lo > 1) {
        const int64_t mid = lo + (hi - lo) / 2;
        if (probe(mid))
            lo = mid;
        else
            hi = mid;
    }
    r.maxBatch = lo;
    if (best && r.maxBatch == lo)
        r.atMax = std::move(best);
    return r;
}

} // namespace memscope
