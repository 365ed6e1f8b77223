#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace memscope {

/*
 * Which file holds which rank of a distributed job. Every launcher writes one snapshot per
 * rank, named its own way:
 *
 *   torchtitan       memory_snapshot/iteration_N/rankR_memory_snapshot.pickle
 *                    memory_snapshot/iteration_N_exit/rankR_memory_snapshot.pickle  (on OOM)
 *   torchtune        iteration_N/rankR_memory_snapshot.pickle
 *   Megatron-Bridge  snapshot_R.pickle, snapshot_oom_rank-R.pickle
 *   others           oom_rankR.pickle, rankR.pickle, ddp_rankR.pickle
 *
 * The rank is the last "rank" followed by a number in the file name (rank3, rank-3, rank_3),
 * else the number of Megatron's snapshot_R. A file named neither way gets its rank from its
 * contents once loaded (the device its events are on). "oom" in the name, or an iteration
 * folder ending in _exit, marks an out-of-memory dump. A folder is searched four levels
 * deep; for each rank the latest iteration is kept, an OOM dump before a regular one of the
 * same iteration. A snapshot's compact summary (`memscope summarize`) is X.summary.json next
 * to it, or alone when the snapshot stayed on its node.
 */
struct RankFile {
    std::string path; // the snapshot; empty when only its summary is here
    std::string summaryPath; // its .summary.json; empty when there is none
    std::optional<int> rank; // from the name
    int iteration = -1; // N of an iteration_N folder, -1 outside one
    bool oomDump = false;
};

// The rank a file name gives ("rank3_memory_snapshot.pickle" → 3), if any.
std::optional<int> rankFromFileName(std::string_view fileName);
// N of "iteration_N" or "iteration_N_exit" (the folder's own name); nullopt otherwise.
std::optional<int> iterationFromFolderName(std::string_view folderName, bool* exitDump = nullptr);
// A snapshot file by its name (.pickle, .pkl, .pickle.gz, a *snapshot*.json); not a summary.
bool isSnapshotFileName(std::string_view fileName);
bool isSummaryFileName(std::string_view fileName); // *.summary.json

// The ranks of a job in a folder, or of files (and folders) named one by one, sorted by rank,
// those whose name gives none last in the order found. Throws std::runtime_error naming the
// path when it does not exist or holds no snapshot or summary.
std::vector<RankFile> discoverRanks(const std::vector<std::string>& paths);

} // namespace memscope
