#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace memscope {

struct Snapshot;

// The odd details a reader tolerates instead of refusing the file.
enum class FormatWarning : uint8_t {
    FrameLine, // a frame's line outside 0..2^31 (2^64 - 1 on torch.compile frames)
    FrameText, // a frame's filename/name/fx field that is not text
    UnsignedSigned, // an integer past 2^63 where a signed one belongs (device, time_us)
    OddEntryField, // an unreadable pool_id / forward_frames / user_metadata / compile_context
    OddSegmentField, // an unreadable segment_pool_id / stream / segment_type / is_expandable / state
    Count
};

// Counts tolerated oddities while a file is read; then one short message per kind.
class FormatWarnings {
public:
    void note(FormatWarning w, uint64_t n = 1) { m_counts[static_cast<size_t>(w)] += n; }
    // A frame oddity, counted once per distinct frame: a pickle shares frame dicts through
    // its memo and JSON repeats them, and both must say the same number.
    void noteFrame(FormatWarning w, int32_t frameId) { m_frames[static_cast<size_t>(w)].push_back(frameId); }
    uint64_t count(FormatWarning w) const;
    // Appends the messages, and the ones found by looking at the finished model (trace
    // entries with an action this version does not know), to snapshot.warnings.
    void finish(Snapshot& snapshot) const;

private:
    std::array<uint64_t, static_cast<size_t>(FormatWarning::Count)> m_counts{};
    std::array<std::vector<int32_t>, static_cast<size_t>(FormatWarning::Count)> m_frames;
};

} // namespace memscope
