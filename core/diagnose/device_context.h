#pragma once

#include "attribute/attribution.h"
#include "snapshot/frame_classifier.h"

#include <cstddef>

namespace memscope {

// What every detector reads for one device: the snapshot, the device's trace and replay,
// its attribution (phases, categories, iterations) and the frame classifier for call sites.
struct DeviceContext {
    const Snapshot& snapshot;
    const DeviceTrace& trace;
    const DeviceReplay& replay;
    const DeviceAttribution& attribution;
    const FrameClassifier& frames;
    size_t deviceIndex = 0;

    const EventTable& events() const { return trace.events; }
    int device() const { return replay.device; }
};

} // namespace memscope
