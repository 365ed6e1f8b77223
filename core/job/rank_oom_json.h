#pragma once

#include "job/rank_summary.h"

#include <nlohmann/json.hpp>

namespace memscope {

// A rank's "oom" object, as a rank summary file and the job summary both write it:
// {happened, and when it happened event_index, time_us, asked_bytes, phase, where}.
// Internal to core/job (the one header of the layer that names nlohmann).
inline nlohmann::ordered_json rankOomJson(const RankSummary& s)
{
    nlohmann::ordered_json oom;
    oom["happened"] = s.oom;
    if (s.oom) {
        oom["event_index"] = s.oomEvent;
        oom["time_us"] = s.oomTimeUs;
        oom["asked_bytes"] = s.oomAskedBytes;
        oom["phase"] = s.oomPhase;
        oom["where"] = s.oomWhere;
    }
    return oom;
}

} // namespace memscope
