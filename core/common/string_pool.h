#pragma once

#include "common/strong_id.h"

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace memscope {

// Every distinct string of a snapshot stored once; ids are dense and stable.
class StringPool {
public:
    StringPool();
    StringPool(const StringPool&) = delete;
    StringPool& operator=(const StringPool&) = delete;
    StringPool(StringPool&&) = default;
    StringPool& operator=(StringPool&&) = default;

    StringId intern(std::string_view s);
    StringId find(std::string_view s) const; // invalid id when absent
    std::string_view view(StringId id) const;
    size_t size() const { return m_views.size(); }

    static constexpr StringId empty() { return StringId{0}; }

private:
    struct Chunk {
        std::unique_ptr<char[]> data;
        size_t used = 0;
        size_t capacity = 0;
    };
    std::string_view store(std::string_view s);

    std::vector<Chunk> m_chunks;
    std::vector<std::string_view> m_views;
    std::unordered_map<std::string_view, StringId> m_index;
};

} // namespace memscope
