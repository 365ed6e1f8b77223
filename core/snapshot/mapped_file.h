#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace memscope {

// A read-only memory mapping of a whole file. Throws LoadError when it cannot be opened.
class MappedFile {
public:
    explicit MappedFile(const std::string& path);
    ~MappedFile();
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;

    std::span<const uint8_t> bytes() const { return {m_data, m_size}; }

private:
    const uint8_t* m_data = nullptr;
    size_t m_size = 0;
};

} // namespace memscope
