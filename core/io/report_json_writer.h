#pragma once

#include "attribute/attribution.h"
#include "diagnose/diagnostic.h"
#include "snapshot/frame_classifier.h"
#include "query/point_report.h"

#include <string>

namespace memscope {

/*
 * report.json: the numbers of `memscope report` for one device.
 *
 *   file, device, events, allocations
 *   peak            the global requested peak: bytes, event_index, time_us, seconds_from_start,
 *                   phase, iteration (numbered from 1 as in the window; -1 outside any),
 *                   reserved_bytes, by_category {PARAMETER: bytes, …}
 *   peak_reserved   bytes, event_index, time_us
 *   at              the reported point (`--at`; the peak by default): the same fields as
 *                   `peak` plus live_allocations, top_call_sites (bytes, count, category,
 *                   top_user_frame, op, module, stack; FrameClassifier's opText and
 *                   moduleText) and modules: the live bytes by nn.Module path at every depth
 *                   from 1 to the deepest, [{depth, bytes, rows [{module, bytes, count,
 *                   category}]}], each depth's rows adding up to its bytes (the 8 largest,
 *                   then "(other modules: N)"; outside any module "(no module) · Parameters"
 *                   and so on, by category; query/module_breakdown.h)
 *   iterations      index (from 1), first_event, last_event, start_time_us, end_time_us, phases
 *                   [{phase, first_event, last_event}], peak {bytes, event_index, time_us,
 *                   phase, by_category}
 *   oom_events      event indices of `oom` entries
 *   diagnostics     when `diagnostics` is given: this device's findings, most severe first, as
 *                   diagnosticsToJson writes them (kind, severity, message, bytes,
 *                   bytes_per_iteration for growth, iterations, event_index, figures, fix, evidence)
 */
std::string reportJson(const Attribution& attribution, const PointReport& at, const FrameClassifier& frames,
                       const Diagnostics* diagnostics = nullptr);

// report.json's object for one point, as it writes "peak" and the fields "at" shares with it
// (bytes, event_index, time_us, seconds_from_start, phase, iteration, reserved_bytes,
// by_category), compact. `memscope diff` writes each run's "peak" with it.
std::string reportPointJson(const Attribution& attribution, const PointReport& point);

} // namespace memscope
