#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace memscope {

// The `action` of a trace entry.
enum class Action : uint8_t {
    Alloc,
    FreeRequested,
    FreeCompleted,
    SegmentAlloc,
    SegmentFree,
    SegmentMap,
    SegmentUnmap,
    Snapshot,
    Oom,
    Annotate, // torch.cuda.memory._annotate / user-defined: a marker with metadata text
    Unknown, // an action this version does not know; kept, ignored by the replay
};

std::string_view actionName(Action a);
std::optional<Action> actionFromName(std::string_view name);

} // namespace memscope
