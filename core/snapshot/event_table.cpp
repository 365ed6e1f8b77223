#include "snapshot/event_table.h"

namespace memscope {

void EventTable::reserve(size_t n)
{
    action.reserve(n);
    addr.reserve(n);
    size.reserve(n);
    stream.reserve(n);
    timeUs.reserve(n);
    stack.reserve(n);
    userMetadata.reserve(n);
    compileContext.reserve(n);
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
