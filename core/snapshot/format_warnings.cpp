#include "snapshot/format_warnings.h"

#include "snapshot/snapshot.h"

#include <algorithm>

namespace memscope {

namespace {

std::string counted(uint64_t n, const char* one, const char* many) { return std::to_string(n) + " " + (n == 1 ? one : many); }

} // namespace

uint64_t FormatWarnings::count(FormatWarning w) const
{
    std::vector<int32_t> frames = m_frames[static_cast<size_t>(w)];
    std::sort(frames.begin(), frames.end());
    const auto distinct = static_cast<uint64_t>(std::unique(frames.begin(), frames.end()) - frames.begin());
    return m_counts[static_cast<size_t>(w)] + distinct;
}

void FormatWarnings::finish(Snapshot& s) const
{
    auto add = [&](FormatWarning w, const char* one, const char* many, const char* rest) {
        if (const uint64_t n = count(w))
            s.warnings.push_back(counted(n, one, many) + rest);
    };
    add(FormatWarning::FrameLine, "frame", "frames",
        " had a line number outside 0..2^31 (2^64-1 on torch.compile frames): shown as unknown");
    add(FormatWarning::FrameText, "frame", "frames", " had a filename, name or FX field that is not text: shown as unknown");
    add(FormatWarning::UnsignedSigned, "value", "values",
        " past 2^63 where a signed integer belongs (device, time_us): read as 64-bit two's complement");
    add(FormatWarning::OddEntryField, "trace entry field", "trace entry fields",
        " (pool_id, forward_frames, user_metadata, compile_context) of an unexpected type: left out");
    add(FormatWarning::OddSegmentField, "segment or block field", "segment or block fields",
        " (segment_pool_id, stream, segment_type, is_expandable, state) of an unexpected type: left out");
    uint64_t unknown = 0;
    for (const DeviceTrace& d : s.devices)
        for (Action a : d.events.action)
            unknown += a == Action::Unknown;
    if (unknown)
        s.warnings.push_back(counted(unknown, "trace entry", "trace entries") +
                             " with an action this version does not know: ignored by the replay");
}

} // namespace memscope
