#include "replay/replay.h"

#include "common/thread_pool.h"

#include <optional>

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
    // Devices are independent (each replay reads its own trace and the shared pools): one
    // thread each, the same results in the same order.
    const size_t n = snapshot->devices.size();
    std::vector<std::optional<DeviceReplay>> replayed(n);
    if (n > 1)
        ThreadPool::shared().parallelFor(n, [&](size_t i) { replayed[i] = replayDevice(*snapshot, snapshot->devices[i]); });
    else if (n == 1)
        replayed[0] = replayDevice(*snapshot, snapshot->devices[0]);
    r->devices.reserve(n);
    for (auto& d : replayed)
        r->devices.push_back(std::move(*d));
    return r;
}

} // namespace memscope
