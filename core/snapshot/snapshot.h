#pragma once

#include "snapshot/annotation.h"
#include "snapshot/event_table.h"
#include "snapshot/frame_pool.h"
#include "snapshot/segment.h"
#include "snapshot/stack_pool.h"
#include "common/string_pool.h"

#include <map>
#include <string>
#include <vector>

namespace memscope {

struct DeviceTrace {
    int device = 0;
    EventTable events;
};

enum class SnapshotFormat : uint8_t { Pickle, PickleGzip, Json, Live };

// Everything a snapshot file holds, interned and stored by column.
struct Snapshot {
    std::string path;
    SnapshotFormat format = SnapshotFormat::Pickle;
    int pickleProtocol = 0;
    uint64_t fileBytes = 0;

    // device_traces in order (device = its index), then host_traces as device -1 ("host").
    std::vector<DeviceTrace> devices;
    std::vector<Segment> segments; // state at dump time, all devices
    std::vector<Annotation> annotations;
    std::map<std::string, std::string> allocatorSettings; // scalar settings, printed as text
    bool traceOverflowed = false; // allocator_settings.trace_alloc_overflowed
    int64_t traceMaxEntries = -1; // allocator_settings.trace_alloc_max_entries, -1 if absent
    bool blockHistoryFormat = false; // PyTorch 2.0 block `history` lists were seen
    // Odd details the reader tolerated, one short counted message each ("3 frames had a line
    // number past 2^63 (torch.compile): shown as unknown"). Empty when nothing was odd.
    std::vector<std::string> warnings;

    StringPool strings;
    FramePool frames;
    StackPool stacks;

    const DeviceTrace* device(int ordinal) const;
    std::string_view str(StringId id) const { return strings.view(id); }
};

} // namespace memscope
