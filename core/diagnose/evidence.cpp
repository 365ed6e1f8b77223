#include "diagnose/evidence.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

namespace memscope {

void setEvidence(Diagnostic& d, const DeviceReplay& replay, std::vector<AllocationId> ids)
{
    std::unordered_map<int32_t, EvidenceSite> bySite;
    for (AllocationId id : ids) {
        const Allocation& a = replay.allocation(id);
        EvidenceSite& s = bySite[a.stack.value];
        s.stack = a.stack;
        s.bytes += static_cast<int64_t>(a.size);
        ++s.count;
    }
    d.sites.clear();
    for (auto& [k, s] : bySite)
        d.sites.push_back(s);
    std::sort(d.sites.begin(), d.sites.end(), [](const EvidenceSite& a, const EvidenceSite& b) {
        return a.bytes != b.bytes ? a.bytes > b.bytes : a.stack.value < b.stack.value;
    });
    if (d.sites.size() > kMaxEvidenceSites)
        d.sites.resize(kMaxEvidenceSites);

    std::sort(ids.begin(), ids.end(), [&](AllocationId a, AllocationId b) {
        const uint64_t sa = replay.allocation(a).size, sb = replay.allocation(b).size;
        return sa != sb ? sa > sb : a.value < b.value;
    });
    if (ids.size() > kMaxEvidenceAllocations)
        ids.resize(kMaxEvidenceAllocations);
    d.allocations = std::move(ids);
}

FrameId dominantUserFrame(const FrameClassifier& frames, const DeviceReplay& replay, const std::vector<AllocationId>& ids)
{
    std::unordered_map<int32_t, int64_t> bytes;
    for (AllocationId id : ids) {
        const Allocation& a = replay.allocation(id);
        const FrameId f = frames.topUserFrame(a.stack);
        if (f.valid())
            bytes[f.value] += static_cast<int64_t>(a.size);
    }
    FrameId best;
    int64_t most = -1;
    for (auto [f, b] : bytes)
        if (b > most || (b == most && f < best.value)) {
            most = b;
            best = FrameId{f};
        }
    return best;
}

std::string frameOrUnknown(const FrameClassifier& frames, FrameId frame)
{
    return frame.valid() ? frames.frameText(frame) : std::string("(no user frame)");
}

std::string siteText(const FrameClassifier& frames, StackId stack)
{
    if (!stack.valid())
        return "(no frames)";
    const FrameId f = frames.topUserFrame(stack);
    if (f.valid())
        return frames.frameText(f);
    std::string s = frames.stackSummary(stack, 3);
    return s.empty() ? std::string("(no frames)") : s;
}

int64_t bytesOf(const DeviceReplay& replay, const std::vector<AllocationId>& ids)
{
    int64_t b = 0;
    for (AllocationId id : ids)
        b += static_cast<int64_t>(replay.allocation(id).size);
    return b;
}

bool freedInBackward(const DeviceAttribution& attribution, const Allocation& a)
{
    const EventIndex e = a.freeRequestedEvent.valid() ? a.freeRequestedEvent : a.freeEvent;
    return e.valid() && static_cast<size_t>(e.value) < attribution.eventPhase.size() &&
           attribution.eventPhase[static_cast<size_t>(e.value)] == Phase::Backward;
}

std::string lowerFirst(std::string_view label)
{
    std::string s(label);
    if (!s.empty() && s[0] >= 'A' && s[0] <= 'Z' && !(s.size() > 1 && s[1] >= 'A' && s[1] <= 'Z'))
        s[0] = static_cast<char>(s[0] - 'A' + 'a');
    return s;
}

std::string percentText(double fraction) { return std::to_string(static_cast<long long>(std::llround(fraction * 100.0))) + "%"; }

} // namespace memscope
