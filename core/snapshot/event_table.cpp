#include "snapshot/event_table.h"

#include "common/huge_pages.h"

#include <algorithm>

namespace memscope {

void EventTable::reserve(size_t n)
{
    reserveHuge(action, n);
    reserveHuge(addr, n);
    reserveHuge(size, n);
    stream.reserve(n);
    reserveHuge(timeUs, n);
    reserveHuge(stack, n);
    userMetadata.reserve(n);
    compileContext.reserve(n);
}

PoolId EventTable::poolOf(size_t row) const
{
    auto it = std::lower_bound(pool.begin(), pool.end(), row, [](const auto& e, size_t r) { return e.first < r; });
    return it != pool.end() && it->first == row ? it->second : PoolId{};
}

StackId EventTable::forwardFramesOf(size_t row) const
{
    auto it = std::lower_bound(forwardFrames.begin(), forwardFrames.end(), row,
                               [](const auto& e, size_t r) { return e.first < r; });
    return it != forwardFrames.end() && it->first == row ? it->second : StackId{};
}

void EventTable::push(Action a, uint64_t address, uint64_t bytes, uint64_t streamId, int64_t time, StackId stackId,
                      StringId metadata, StringId context)
{
    action.push_back(a);
    addr.push_back(address);
    size.push_back(bytes);
    stream.push_back(streamId);
    timeUs.push_back(time);
    stack.push_back(stackId);
    userMetadata.push_back(metadata);
    compileContext.push_back(context);
}

} // namespace memscope
