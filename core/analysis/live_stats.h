#pragma once

#include "analysis/incremental_analysis.h"

#include <cstdint>
#include <string>

namespace memscope {

/*
 * MEMSCOPE_LIVE_STATS=FILE: one JSON line per live view update, the same keys from the live
 * tab and from bench/live_stream.cpp:
 *
 *   {"t_s": 12.345, "events": 1234567, "update_ms": 3.21, "rss_bytes": 123456789,
 *    "dropped": 0, "lag_events": 512}
 *
 * t_s: seconds since attaching; events: shown; update_ms: from the data's arrival to the
 * repainted view (the tab adds its repaint to the view's ingestMs); rss_bytes: this
 * process's resident memory; dropped: the agent's dropped events; lag_events: received but
 * not yet shown.
 */
struct LiveStatsLine {
    double tS = 0;
    int64_t events = 0;
    double updateMs = 0;
    int64_t rssBytes = 0;
    uint64_t dropped = 0;
    int64_t lagEvents = 0;
};

// The line for a view: events, dropped and lag from it, rss_bytes read now.
LiveStatsLine liveStatsLine(const LiveView& view, double tS, double updateMs);
// The JSON object, without a newline.
std::string liveStatsJson(const LiveStatsLine& line);
// This process's resident memory in bytes (/proc/self/statm); 0 where unknown.
int64_t residentBytes();

} // namespace memscope
