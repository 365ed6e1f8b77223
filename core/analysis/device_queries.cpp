#include "analysis/device_queries.h"

namespace memscope {

DeviceQueries queryDevice(const Replay& replay, size_t deviceIndex)
{
    const Snapshot& s = *replay.snapshot;
    const DeviceTrace& trace = s.devices.at(deviceIndex);
    DeviceQueries q;
    q.segments = segmentLives(s, trace);
    q.pools = poolUsage(replay.devices.at(deviceIndex), trace.events, q.segments);
    q.metadata = metadataSpans(s, trace.events);
    q.annotations = annotationSpans(s, replay.devices.at(deviceIndex).device);
    return q;
}

} // namespace memscope
