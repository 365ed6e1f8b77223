#include "snapshot/frame_pool.h"

namespace memscope {

FrameId FramePool::intern(const Frame& f)
{
    if (auto it = m_index.find(f); it != m_index.end())
        return it->second;
    FrameId id{static_cast<int32_t>(m_frames.size())};
    m_frames.push_back(f);
    m_index.emplace(f, id);
    return id;
}

} // namespace memscope
