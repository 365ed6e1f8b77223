#include "common/format_number.h"

#include <charconv>

namespace memscope {

std::string formatFixed(double value, int decimals)
{
    char buf[400]; // a double's integer part has at most 309 digits
    const auto r = std::to_chars(buf, buf + sizeof buf, value, std::chars_format::fixed, decimals);
    return r.ec == std::errc() ? std::string(buf, r.ptr) : std::string("nan");
}

std::string formatGeneral(double value)
{
    char buf[64];
    const auto r = std::to_chars(buf, buf + sizeof buf, value, std::chars_format::general, 6);
    return r.ec == std::errc() ? std::string(buf, r.ptr) : std::string("nan");
}

} // namespace memscope
