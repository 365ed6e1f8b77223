#pragma once

#include "common/format_bytes.h"
#include "replay/replay.h"

#include <optional>
#include <string>

namespace memscope {

// `memscope summary`: the headline numbers of each device (or one device). `focus`, the
// ordinal of the device opened first (Analysis::focusDevice()), is written as "focus_device"
// and marked in the text.
std::string summaryJson(const Replay& replay, std::optional<int> device, std::optional<int> focus = std::nullopt);
std::string summaryText(const Replay& replay, std::optional<int> device, std::optional<int> focus = std::nullopt);

} // namespace memscope
