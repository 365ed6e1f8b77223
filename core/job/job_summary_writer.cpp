#include "job/job_summary_writer.h"
#include "common/format_number.h"
#include "job/rank_oom_json.h"

#include "common/format_bytes.h"

#include <cstdio>

namespace memscope {

namespace {

using Json = nlohmann::ordered_json;

} // namespace

std::string jobSummaryJson(const RankSet& set)
{
    Json root;
    root["ranks_count"] = set.size();
    root["focus_rank"] = set.size() ? set.ranks()[set.focusRank()].summary.rank : -1;
    root["mean_peak_requested_bytes"] = static_cast<int64_t>(set.meanPeak() + 0.5);
    Json ranks = Json::array();
    for (const RankEntry& e : set.ranks()) {
        const RankSummary& s = e.summary;
        Json j;
        j["rank"] = s.rank;
        j["file"] = e.source.path;
        j["summary_file"] = e.source.summaryPath;
        if (!e.ok()) {
            j["error"] = e.error;
            ranks.push_back(std::move(j));
            continue;
        }
        j["device"] = s.device;
        j["events"] = s.events;
        j["peak_requested_bytes"] = s.peakRequested;
        j["peak_reserved_bytes"] = s.peakReserved;
        j["peak_phase"] = s.peakPhase;
        j["peak_time_us"] = s.peakTimeUs;
        j["peak_seconds"] = s.peakSeconds();
        j["peak_iteration"] = s.peakIteration;
        j["above_mean"] = e.aboveMean;
        j["communication_at_peak_bytes"] = s.collectiveAtPeakTotal();
        j["communication_peak_bytes"] = s.collectivePeak;
        j["oom"] = rankOomJson(s);
        j["oom_dump"] = s.oomDump;
        j["iteration_folder"] = s.iteration;
        ranks.push_back(std::move(j));
    }
    root["ranks"] = std::move(ranks);
    return root.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

std::string jobSummaryText(const RankSet& set)
{
    std::string out = std::to_string(set.size()) + (set.size() == 1 ? " rank" : " ranks") + ", mean requested peak " +
                      formatBytes(static_cast<int64_t>(set.meanPeak() + 0.5)) + "\n";
    char line[1024];
    std::snprintf(line, sizeof line, "%5s %6s %12s %12s %-14s %9s %12s %8s  %s\n", "rank", "device", "peak", "reserved", "phase",
                  "at", "comm@peak", "vs mean", "OOM");
    out += line;
    const size_t focus = set.focusRank();
    for (size_t i = 0; i < set.size(); ++i) {
        const RankEntry& e = set.ranks()[i];
        const RankSummary& s = e.summary;
        if (!e.ok()) {
            out += "rank " + std::to_string(s.rank) + ": " + e.error + "\n";
            continue;
        }
        const std::string oom = s.oom ? "OOM in " + (s.oomPhase.empty() ? std::string("?") : s.oomPhase) +
                                            (s.oomWhere.empty() ? "" : " at " + s.oomWhere)
                                : s.oomDump ? "OOM dump"
                                            : "";
        const double above = e.aboveMean * 100;
        const std::string aboveText = (above >= 0 ? "+" : "") + formatFixed(above, 1) + "%";
        std::snprintf(line, sizeof line, "%5d %6d %12s %12s %-14s %8ss %12s %8s  %s%s\n", s.rank, s.device,
                      formatBytes(s.peakRequested).c_str(), formatBytes(s.peakReserved).c_str(),
                      s.peakPhase.empty() ? "-" : s.peakPhase.c_str(), formatFixed(s.peakSeconds(), 3).c_str(),
                      formatBytes(s.collectiveAtPeakTotal()).c_str(), aboveText.c_str(), oom.c_str(),
                      i == focus ? "  <- shown first" : "");
        out += line;
    }
    return out;
}

} // namespace memscope
