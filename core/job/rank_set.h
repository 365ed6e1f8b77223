#pragma once

#include "analysis/analysis.h"
#include "job/rank_discovery.h"
#include "job/rank_summary.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace memscope {

// One rank of a job: where it came from, its figures, or why they could not be had.
struct RankEntry {
    RankFile source;
    RankSummary summary; // valid when error is empty
    std::string error; // the LoadError's message when the rank's file could not be read
    double aboveMean = 0; // (peak requested − the ranks' mean) / mean; 0.25 = 25 % above
    // A rank recorded live (a job attached whole): its state, "streaming", "lagging: …",
    // "dead: …", "ended"; empty for a rank read from a file. source.path is then its socket.
    std::string live;

    bool ok() const { return error.empty(); }
    bool canLoad() const { return !source.path.empty(); } // its full snapshot is here
};

struct RankSetOptions {
    // Worker threads; 0: the hardware's threads, fewer when memory would not hold that many
    // snapshots analysed at once (each takes ~kBytesPerFileByte × its file size).
    unsigned threads = 0;
    // Called from the workers after each rank: ranks done, ranks in all. False cancels.
    std::function<bool(size_t done, size_t total)> progress;
};

/*
 * A distributed job opened as one: every rank's summary, computed in parallel from its
 * snapshot (each analysed to the Attributed stage, summarised, then let go) or read from its
 * X.summary.json, and a rank's full analysis loaded again on demand. Ranks whose file fails
 * keep their error and do not stop the others. Immutable once opened.
 */
class RankSet {
public:
    static constexpr uint64_t kBytesPerFileByte = 12;

    // A folder (searched as discoverRanks() says) or files and folders named one by one.
    // Throws std::runtime_error when the paths hold no rank at all.
    static std::shared_ptr<const RankSet> open(const std::vector<std::string>& paths, const RankSetOptions& options = {});
    // Ranks already discovered (tests, and a caller that lists files itself).
    static std::shared_ptr<const RankSet> open(std::vector<RankFile> files, const RankSetOptions& options = {});
    // Ranks summarised already (a live job's, from each rank's recording so far), sorted by
    // rank here, with the mean and each rank's distance from it.
    static std::shared_ptr<const RankSet> fromEntries(std::vector<RankEntry> entries);

    const std::vector<RankEntry>& ranks() const { return m_ranks; }
    size_t size() const { return m_ranks.size(); }
    // Mean of the readable ranks' requested peaks.
    double meanPeak() const { return m_meanPeak; }
    // The rank shown first: one that ran out of memory (an OOM event, else an OOM dump), else
    // the highest requested peak; the index into ranks().
    size_t focusRank() const;
    // Index of the rank numbered `rank`, if any.
    std::optional<size_t> findRank(int rank) const;

    // The rank's full analysis from its snapshot. Throws std::runtime_error when only its
    // summary is here, LoadError when the file fails.
    std::shared_ptr<const Analysis> load(size_t index, const AnalysisOptions& options = {},
                                         const AnalysisCallbacks& callbacks = {}) const;

    // Threads open() uses for `files` under `options` (exposed for the benchmark and tests).
    static unsigned workerCount(const std::vector<RankFile>& files, const RankSetOptions& options);

private:
    void computeMean();

    std::vector<RankEntry> m_ranks;
    double m_meanPeak = 0;
};

} // namespace memscope
