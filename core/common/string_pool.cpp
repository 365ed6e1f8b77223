#include "common/string_pool.h"

#include <cstring>
#include <memory>

namespace memscope {

StringPool::StringPool() { intern(std::string_view{}); }

std::string_view StringPool::store(std::string_view s)
{
    if (s.empty())
        return {};
    if (m_chunks.empty() || m_chunks.back().capacity - m_chunks.back().used < s.size()) {
        Chunk c;
        c.capacity = std::max<size_t>(s.size(), 256 * 1024);
        c.data = std::make_unique<char[]>(c.capacity);
        m_chunks.push_back(std::move(c));
    }
    Chunk& c = m_chunks.back();
    char* dst = c.data.get() + c.used;
    std::memcpy(dst, s.data(), s.size());
    c.used += s.size();
    return {dst, s.size()};
}

StringId StringPool::intern(std::string_view s)
{
    if (auto it = m_index.find(s); it != m_index.end())
        return it->second;
    std::string_view stored = store(s);
    StringId id{static_cast<int32_t>(m_views.size())};
    m_views.push_back(stored);
    m_index.emplace(stored, id);
    return id;
}

StringId StringPool::find(std::string_view s) const
{
    auto it = m_index.find(s);
    return it == m_index.end() ? StringId{} : it->second;
}

std::string_view StringPool::view(StringId id) const
{
    if (!id.valid() || static_cast<size_t>(id.value) >= m_views.size())
        return {};
    return m_views[static_cast<size_t>(id.value)];
}

} // namespace memscope
