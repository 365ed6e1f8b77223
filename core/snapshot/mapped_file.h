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
    // Drops the pages before `offset` from memory (they are read again from the file if
    // touched), so a single pass over a large file does not keep all of it resident.
    void releaseBefore(size_t offset);

private:
    const uint8_t* m_data = nullptr;
    size_t m_size = 0;
    size_t m_released = 0;
};

} // namespace memscope
