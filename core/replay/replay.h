#pragma once

#include "replay/device_replay.h"

#include <memory>

namespace memscope {

// A snapshot and the replay of each of its devices: immutable once built.
struct Replay {
    std::shared_ptr<const Snapshot> snapshot;
    std::vector<DeviceReplay> devices; // same order as snapshot->devices

    const DeviceReplay* device(int ordinal) const;
};

std::shared_ptr<const Replay> replaySnapshot(std::shared_ptr<const Snapshot> snapshot);

} // namespace memscope
