#pragma once

#include <string>

namespace memscope {

// How a device is named to people: "device 0", or "host" for pinned host memory (ordinal -1,
// from host_segments/host_traces).
std::string deviceName(int ordinal);

} // namespace memscope
