#pragma once

#include "job/rank_set.h"

#include <string>

namespace memscope {

/*
 * `memscope summary DIR|FILE… [--json]` for a job: one row per rank.
 *
 * JSON: {"ranks_count", "focus_rank", "mean_peak_requested_bytes", "ranks": [{"rank", "file",
 * "summary_file", "device", "events", "peak_requested_bytes", "peak_reserved_bytes",
 * "peak_phase", "peak_time_us", "peak_seconds", "peak_iteration", "above_mean",
 * "communication_at_peak_bytes", "communication_peak_bytes", "oom": {"happened", "event_index",
 * "time_us", "asked_bytes", "phase", "where"}, "oom_dump", "iteration_folder", "error"}]}
 * (error only on a rank that could not be read; its figures are then absent). above_mean is a
 * fraction: 0.25 = 25 % above the ranks' mean requested peak.
 */
std::string jobSummaryJson(const RankSet& set);
std::string jobSummaryText(const RankSet& set);

} // namespace memscope
