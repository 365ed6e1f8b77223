#pragma once

#include "common/strong_id.h"

#include <unordered_map>
#include <vector>

namespace memscope {

struct Frame {
    StringId filename;
    StringId name;
    int32_t line = 0; // 0: unknown
    // torch.compile frames: the FX node the generated code came from (empty elsewhere).
    StringId fxNodeOp;
    StringId fxNodeName;
    StringId fxNodeTarget;
    StringId fxOriginalTrace;
    bool operator==(const Frame&) const = default;
};

// Distinct stack frames, stored once.
class FramePool {
public:
    FrameId intern(const Frame& f);
    const Frame& frame(FrameId id) const { return m_frames[static_cast<size_t>(id.value)]; }
    size_t size() const { return m_frames.size(); }

private:
    struct Hash {
        size_t operator()(const Frame& f) const noexcept
        {
            uint64_t h = static_cast<uint32_t>(f.filename.value);
            h = h * 0x9E3779B97F4A7C15ull ^ static_cast<uint32_t>(f.name.value);
            h = h * 0x9E3779B97F4A7C15ull ^ static_cast<uint32_t>(f.line);
            h = h * 0x9E3779B97F4A7C15ull ^ static_cast<uint32_t>(f.fxNodeName.value);
            h = h * 0x9E3779B97F4A7C15ull ^ static_cast<uint32_t>(f.fxOriginalTrace.value);
            return static_cast<size_t>(h ^ (h >> 29));
        }
    };
    std::vector<Frame> m_frames;
    std::unordered_map<Frame, FrameId, Hash> m_index;
};

} // namespace memscope
