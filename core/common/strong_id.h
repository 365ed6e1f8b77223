#pragma once

#include <compare>
#include <cstdint>
#include <functional>

namespace memscope {

// A typed index: an EventIndex cannot be passed where a StackId is expected.
// The default value (-1) means "none".
template <class Tag, class Rep = int32_t>
struct StrongId {
    Rep value = -1;

    constexpr StrongId() = default;
    constexpr explicit StrongId(Rep v) : value(v) { }
    constexpr bool valid() const { return value >= 0; }
    constexpr explicit operator bool() const { return valid(); }
    constexpr auto operator<=>(const StrongId&) const = default;
};

using StringId = StrongId<struct StringTag>;
using FrameId = StrongId<struct FrameTag>;
using StackId = StrongId<struct StackTag>;
using EventIndex = StrongId<struct EventTag, int64_t>;
using AllocationId = StrongId<struct AllocationTag>;

} // namespace memscope

template <class Tag, class Rep>
struct std::hash<memscope::StrongId<Tag, Rep>> {
    size_t operator()(memscope::StrongId<Tag, Rep> id) const noexcept { return std::hash<Rep>{}(id.value); }
};
