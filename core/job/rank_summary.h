#pragma once

#include "analysis/analysis.h"
#include "attribute/collective_memory.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace memscope {

// One column of a rank's compact timeline: the requested bytes' range over a run of events.
struct RankTimelinePoint {
    int64_t timeUs = 0; // of the run's first event
    int64_t event = 0; // the run's first event
    int64_t low = 0;
    int64_t high = 0;
};

/*
 * The figures of one rank, small enough that a job of thousands of ranks fits in memory and
 * is written by each node next to its snapshot (`memscope summarize`, X.summary.json; keys in
 * docs/RANKS.md). The timeline keeps at most kRankTimelinePoints columns of min/max so the
 * job view can draw every rank without its snapshot.
 */
inline constexpr size_t kRankTimelinePoints = 256;

struct RankSummary {
    int rank = -1;
    std::string file; // the snapshot summarised, as it was named
    int device = 0; // the CUDA device shown for the rank (Analysis::focusDevice())
    int64_t events = 0;
    int64_t allocations = 0;
    int64_t peakRequested = 0;
    int64_t peakReserved = 0;
    int64_t peakEvent = -1;
    int64_t peakTimeUs = 0;
    std::string peakPhase; // phaseName(): "forward", "backward", …; empty before attribution
    int peakIteration = -1; // 0-based iteration holding the peak, -1 outside any
    int64_t startUs = 0; // the first and last event's time_us
    int64_t endUs = 0;
    std::vector<int64_t> iterationStartUs;
    bool oom = false;
    int64_t oomEvent = -1;
    int64_t oomTimeUs = 0;
    int64_t oomAskedBytes = 0; // the failed request's size
    std::string oomPhase;
    std::string oomWhere; // the innermost user frame of the failed request, as text
    int iteration = -1; // the launcher's iteration folder it came from (-1: none)
    bool oomDump = false; // the launcher wrote it on an OOM (…_exit, *oom* in the name)
    std::array<int64_t, kCollectiveKindCount> collectiveAtPeak{}; // communication bytes by kind
    int64_t collectivePeak = 0; // highest communication bytes
    std::vector<RankTimelinePoint> timeline;

    double peakSeconds() const { return static_cast<double>(peakTimeUs - startUs) / 1e6; }
    int64_t collectiveAtPeakTotal() const;
};

// The summary of device `deviceIndex` of an analysis that reached Attributed (Replayed gives
// one without phases or communication bytes). `rank` -1: the device's ordinal.
RankSummary summarizeRank(const Analysis& analysis, size_t deviceIndex, int rank = -1);

// X.summary.json's text, and back. parseRankSummary throws LoadError naming the file and the
// key when a key is missing or of the wrong type.
std::string rankSummaryJson(const RankSummary& summary);
RankSummary parseRankSummary(std::string_view text, const std::string& path);
RankSummary readRankSummaryFile(const std::string& path);

} // namespace memscope

namespace memscope {

// Where time `timeUs` falls in the rank's iterations: k + the fraction of iteration k gone
// (k from 0), so ranks line up step by step whatever their clocks; before the first
// iteration negative, after the last start measured by the last iteration's length (or
// seconds when there is one iteration or none).
double iterationPosition(const RankSummary& summary, int64_t timeUs);

} // namespace memscope
