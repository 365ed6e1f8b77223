#include "common/format_bytes.h"
#include "common/format_number.h"

#include <cmath>
#include <cstdio>

namespace memscope {

std::string formatBytes(int64_t bytes)
{
    static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    double v = static_cast<double>(bytes);
    int u = 0;
    while (std::fabs(v) >= 1024.0 && u < 5) {
        v /= 1024.0;
        ++u;
    }
    if (u == 0)
        return std::to_string(bytes) + " B";
    return formatFixed(v, 2) + " " + units[u];
}

} // namespace memscope
