#pragma once

#include "replay/replay.h"

#include <optional>
#include <string>

namespace memscope {

// `memscope summary`: the headline numbers of each device (or one device).
std::string summaryJson(const Replay& replay, std::optional<int> device);
std::string summaryText(const Replay& replay, std::optional<int> device);

// "1.25 GiB", "512 B": binary units, as torch's memory tools print them.
std::string formatBytes(int64_t bytes);

} // namespace memscope
