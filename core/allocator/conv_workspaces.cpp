#include "allocator/conv_workspaces.h"

#include "allocator/autocast_ops.h"

#include <algorithm>
#include <string_view>

namespace memscope {

namespace {

bool isConvolution(const Snapshot& snap, const PythonStacks& stacks, StackId s)
{
    if (!s.valid())
        return false;
    if (isConvolutionOp(stacks.op(s)))
        return true;
    const auto frames = stacks.frames(s);
    for (size_t k = 0; k < frames.size() && k < 3; ++k) {
        const Frame& f = snap.frames.frame(frames[k]);
        const std::string_view name = snap.str(f.name);
        if (snap.str(f.filename).ends_with("modules/conv.py") || name == "conv1d" || name == "conv2d" || name == "conv3d")
            return true;
    }
    return false;
}

} // namespace

bool isConvolutionalNetwork(const Replay& replay, size_t deviceIndex, const DeviceAttribution& attribution,
                            const PythonStacks& stacks)
{
    // at least 4 allocations of convolutions per forward: a ViT's patch embedding alone does
    // not make its backward's temporaries cuDNN's
    const DeviceReplay& dr = replay.devices.at(deviceIndex);
    size_t convAllocations = 0;
    for (size_t a = 0; a < dr.allocations.size(); ++a)
        if (attribution.allocationPhase[a] == Phase::Forward && isConvolution(*replay.snapshot, stacks, dr.allocations[a].stack))
            ++convAllocations;
    return convAllocations >= 4 * std::max<size_t>(1, attribution.iterations.size());
}

std::vector<uint8_t> convolutionWorkspaces(const Replay& replay, size_t deviceIndex, const DeviceAttribution& attribution,
                                           const PythonStacks& stacks)
{
    const Snapshot& snap = *replay.snapshot;
    const DeviceReplay& dr = replay.devices.at(deviceIndex);
    std::vector<uint8_t> out(dr.allocations.size(), 0);
    if (!isConvolutionalNetwork(replay, deviceIndex, attribution, stacks))
        return out;
    auto isConv = [&](StackId s) { return isConvolution(snap, stacks, s); };
    std::vector<int64_t> allocEvents; // in event order
    for (const Allocation& al : dr.allocations)
        if (al.allocEvent.valid())
            allocEvents.push_back(al.allocEvent.value);
    std::sort(allocEvents.begin(), allocEvents.end());
    for (size_t a = 0; a < dr.allocations.size(); ++a) {
        const Allocation& al = dr.allocations[a];
        const Phase ph = attribution.allocationPhase[a];
        if (!al.allocEvent.valid() || !al.freeEvent.valid() || attribution.allocationCategory[a] != Category::Intermediate)
            continue;
        if (!(ph == Phase::Forward && isConv(al.stack)) && !(ph == Phase::Backward && stacks.frames(al.stack).empty()))
            continue;
        const auto next = std::upper_bound(allocEvents.begin(), allocEvents.end(), al.allocEvent.value);
        if (next == allocEvents.end() || *next > al.freeEvent.value)
            out[a] = 1;
    }
    return out;
}

} // namespace memscope
