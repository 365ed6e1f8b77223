#pragma once

#include "attribute/attribution.h"
#include "query/point_report.h"
#include "snapshot/frame_classifier.h"

#include <cstddef>
#include <string>

namespace memscope {

/*
 * What is live at one point of a device (its peak, or the last event at a time), compact
 * enough for an assistant's context and a notebook: the Python module's peak() and
 * allocations_at(), and `memscope mcp`'s explain_peak and allocations_at.
 *
 *   file, device, events, live_allocations
 *   point            report.json's point object (reportPointJson): bytes, event_index, time_us,
 *                    seconds_from_start, phase, iteration, reserved_bytes, by_category
 *   is_global_peak
 *   top_allocations  the `top` largest live allocations: id, address, size_bytes, category,
 *                    phase, alloc_event, free_event (-1: before the trace / alive at the end),
 *                    top_user_frame, op, module (FrameClassifier::opText, moduleText)
 *   top_call_sites   the `top` call sites with the most live bytes, as report.json writes them:
 *                    bytes, count, category, top_user_frame, op, module, stack
 */
std::string pointJson(const Attribution& attribution, const PointReport& point, const FrameClassifier& frames, size_t top = 10);

} // namespace memscope
