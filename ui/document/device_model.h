#pragma once

#include "analysis/analysis.h"
#include "common/compact_curve.h"
#include "replay/minmax_pyramid.h"
#include "ui/document/band_set.h"

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace memscope {

enum class XAxisMode { Time, EventIndex };

// A record_function range from `external_annotations`, placed on the event axis.
struct AnnotationRange {
    std::string name;
    int64_t firstEvent = 0; // first event at or after its START
    int64_t lastEvent = 0; // last event before its END
    int64_t startUs = 0;
    int64_t endUs = 0;
};

/*
 * The drawing structures of one device, computed once on the loader's thread: the x position
 * of every event (time from the first event, made non-decreasing), min/max pyramids of the
 * requested and reserved curves for per-pixel drawing, the annotation spans placed on the
 * event axis, and the timeline's phase, annotation, metadata and iteration bands in both x
 * modes. What the core computed (segments, pools, metadata spans, categories) is the
 * analysis's, reached through replay, attribution and queries.
 */
struct DeviceModel {
    size_t index = 0; // into replay->devices
    int device = 0;
    const DeviceReplay* replay = nullptr;
    const DeviceAttribution* attribution = nullptr; // set once the categories are ready
    const EventTable* events = nullptr;
    const DeviceQueries* queries = nullptr; // the analysis's: segments, pools, metadata spans
    int64_t t0Us = 0;
    // Each event's time in µs from t0, made non-decreasing (x = this / 1e6 in Time mode):
    // 4 bytes an event, shared by the models of every stage.
    std::shared_ptr<const CompactCurve> timeUs;
    MinMaxPyramid requested;
    MinMaxPyramid reserved;
    std::vector<AnnotationRange> annotations;
    std::array<bool, kCategoryCount> categoryPresent{};
    // The category timeline's bands, per x mode, made here so the GUI thread only draws them:
    // lanes row 0, each iteration's phases (style: the phase); row 1, the annotations (style:
    // kPhaseCount + index into annotationLabels); row 2, only where the device has any, the
    // metadata spans (style metadataStyle(), source: index into metadata) and annotate markers
    // (metadataStyle() + 1); lines, each iteration's start (style 0).
    std::array<std::shared_ptr<const BandSet>, 2> laneBands;
    std::array<std::shared_ptr<const BandSet>, 2> iterationLines;
    std::vector<std::string> annotationLabels; // distinct annotation names after any '#'
    const std::vector<SegmentLife>& segments() const { return queries->segments; } // sorted by address
    const DevicePools& pools() const { return queries->pools; } // private pools (empty: none)
    const std::vector<MetadataSpan>& metadata() const { return queries->metadata; }
    int laneRows() const { return metadata().empty() ? 2 : 3; }
    uint32_t metadataStyle() const { return static_cast<uint32_t>(kPhaseCount + annotationLabels.size()); }

    int64_t eventCount() const { return replay->eventCount; }
    double x(int64_t event, XAxisMode mode) const;
    // First event whose x is >= value (eventCount() when none).
    int64_t firstEventAtOrAfter(double value, XAxisMode mode) const;
    // firstEventAtOrAfter of each of ascending values (a frame's pixel edges).
    std::vector<int64_t> firstEventsAtOrAfter(std::span<const double> ascending, XAxisMode mode) const;
    // The event whose state is shown at x: the last event with x <= value (-1 before the first).
    int64_t eventAtX(double value, XAxisMode mode) const;
    double xMin(XAxisMode mode) const;
    double xMax(XAxisMode mode) const;
    int64_t categoryBytes(Category c, int64_t event) const;
    int64_t requestedAfter(int64_t event) const { return replay->requestedAfter(event); }
    int64_t reservedAfter(int64_t event) const { return replay->reservedAfter(event); }
    Phase phaseAt(int64_t event) const;
    int iterationAt(int64_t event) const; // -1 outside any
};

// Device `deviceIndex` of an analysis that has at least replayed (before Attributed: no
// phases or categories yet); `previous`, the same device's model of an earlier stage, lends
// what does not change.
DeviceModel buildDeviceModel(const Analysis& analysis, size_t deviceIndex, const DeviceModel* previous = nullptr);

} // namespace memscope
