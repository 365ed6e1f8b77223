#pragma once

#include "common/format_bytes.h"
#include "replay/replay.h"

#include <optional>
#include <string>

namespace memscope {

// `memscope summary`: the headline numbers of each device (or one device).
std::string summaryJson(const Replay& replay, std::optional<int> device);
std::string summaryText(const Replay& replay, std::optional<int> device);

} // namespace memscope
