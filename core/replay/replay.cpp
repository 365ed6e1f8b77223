#include "replay/replay.h"

namespace memscope {

const DeviceReplay* Replay::device(int ordinal) const
{
    for (const DeviceReplay& d : devices)
        if (d.device == ordinal)
            return &d;
    return nullptr;
}

std::shared_ptr<const Replay> replaySnapshot(std::shared_ptr<const Snapshot> snapshot)
{
    auto r = std::make_shared<Replay>();
    r->snapshot = snapshot;
    r->devices.reserve(snapshot->devices.size());
    for (const DeviceTrace& t : snapshot->devices)
        r->devices.push_back(replayDevice(*snapshot, t));
    return r;
}

} // namespace memscope
