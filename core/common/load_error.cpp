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
    return s;
}
} // namespace

LoadError::LoadError(std::string file, int64_t offset, std::string keyPath, std::string message)
    : std::runtime_error(compose(file, offset, keyPath, message)), m_file(std::move(file)), m_offset(offset),
      m_keyPath(std::move(keyPath)), m_message(std::move(message))
{
}

} // namespace memscope
