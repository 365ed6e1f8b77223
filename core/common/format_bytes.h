#pragma once

#include <cstdint>
#include <string>

namespace memscope {

// "1.25 GiB", "512 B": binary units, as torch's memory tools print them.
std::string formatBytes(int64_t bytes);

} // namespace memscope
