#pragma once

#include <string>
#include <string_view>

namespace memscope {

// One CSV field (RFC 4180): quoted when it holds a comma, a quote or a line break.
inline std::string csvField(std::string_view s)
{
    if (s.find_first_of(",\"\r\n") == std::string_view::npos)
        return std::string(s);
    std::string out = "\"";
    for (char c : s) {
        if (c == '"')
            out += '"';
        out += c;
    }
    out += '"';
    return out;
}

} // namespace memscope
