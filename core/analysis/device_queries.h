#pragma once

#include "query/metadata_spans.h"
#include "query/pool_usage.h"
#include "query/segment_lives.h"
#include "replay/replay.h"
#include "snapshot/annotation_spans.h"

#include <vector>

namespace memscope {

// What the views and reports ask of one replayed device, computed once with the Replayed
// stage: its segments' lifetimes (sorted by address), its private pools, its user_metadata
// stretches and annotate markers, and its record_function annotation spans.
struct DeviceQueries {
    std::vector<SegmentLife> segments;
    DevicePools pools;
    std::vector<MetadataSpan> metadata;
    std::vector<AnnotationSpan> annotations;
};

// The queries of device `deviceIndex` of a replay.
DeviceQueries queryDevice(const Replay& replay, size_t deviceIndex);

} // namespace memscope
