#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace memscope {

// Why a file could not be read: the file, where in it (byte offset and/or key path),
// and what was expected there. what() is the one-line message shown to the user.
class LoadError : public std::runtime_error {
public:
    LoadError(std::string file, int64_t offset, std::string keyPath, std::string message);

    const std::string& file() const { return m_file; }
    int64_t offset() const { return m_offset; } // -1 when not known
    const std::string& keyPath() const { return m_keyPath; } // empty when not known
    const std::string& message() const { return m_message; }

private:
    std::string m_file;
    int64_t m_offset;
    std::string m_keyPath;
    std::string m_message;
};

// Thrown when the caller's cancellation callback asked to stop.
class LoadCancelled : public std::runtime_error {
public:
    LoadCancelled() : std::runtime_error("loading cancelled") { }
};

} // namespace memscope
