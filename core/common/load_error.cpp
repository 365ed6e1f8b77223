#include "common/load_error.h"

namespace memscope {

namespace {
std::string compose(const std::string& file, int64_t offset, const std::string& keyPath, const std::string& message)
{
    std::string s = file.empty() ? std::string("<memory>") : file;
    if (offset >= 0)
        s += ": byte " + std::to_string(offset);
    if (!keyPath.empty())
        s += ": at " + keyPath;
    s += ": " + message;
    // One line, whatever the file held: a key or value quoted from the file may carry control
    // characters (a newline in a top-level key, found by fuzz_snapshot_loader).
    std::string out;
    out.reserve(s.size());
    for (const char c : s) {
        const auto u = static_cast<unsigned char>(c);
        if (u < 0x20 || u == 0x7f) {
            static const char* hex = "0123456789abcdef";
            out += "\\x";
            out += hex[u >> 4];
            out += hex[u & 15];
        } else {
            out += c;
        }
    }
    return out;
}
} // namespace

LoadError::LoadError(std::string file, int64_t offset, std::string keyPath, std::string message)
    : std::runtime_error(compose(file, offset, keyPath, message)), m_file(std::move(file)), m_offset(offset),
      m_keyPath(std::move(keyPath)), m_message(std::move(message))
{
}

} // namespace memscope
