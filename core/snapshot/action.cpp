#include "snapshot/action.h"

#include <array>
#include <utility>

namespace memscope {

namespace {
constexpr std::array<std::pair<Action, std::string_view>, 10> kNames{{
    {Action::Alloc, "alloc"},
    {Action::FreeRequested, "free_requested"},
    {Action::FreeCompleted, "free_completed"},
    {Action::SegmentAlloc, "segment_alloc"},
    {Action::SegmentFree, "segment_free"},
    {Action::SegmentMap, "segment_map"},
    {Action::SegmentUnmap, "segment_unmap"},
    {Action::Snapshot, "snapshot"},
    {Action::Oom, "oom"},
    {Action::Annotate, "annotate"},
}};
} // namespace

std::string_view actionName(Action a)
{
    for (const auto& [action, name] : kNames)
        if (action == a)
            return name;
    return "unknown";
}

std::optional<Action> actionFromName(std::string_view name)
{
    for (const auto& [action, n] : kNames)
        if (n == name)
            return action;
    // PyTorch 2.0 spelled free_completed as "free".
    if (name == "free")
        return Action::FreeCompleted;
    // Newer torch names its user markers this way.
    if (name == "user_defined")
        return Action::Annotate;
    return std::nullopt;
}

} // namespace memscope
