// A job of many ranks opened from their summaries: the time RankSet::open() takes on a folder
// of N *.summary.json (docs/PERFORMANCE.md, "A job of 1,024 ranks").
//
//   memscope_bench_ranks [N=1024] [SNAPSHOT=tests/data/ranks/ddp_rank0.pickle] [RUNS=5]
//
// The summaries are made (untimed) from one real rank's: same timeline and figures, its rank
// and peak changed per file, one rank with an OOM. Then the folder is opened RUNS times, each
// a fresh RankSet (files from the page cache, as after a job's summaries were copied in).
#include "job/rank_set.h"
#include "job/rank_summary.h"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

using namespace memscope;

int main(int argc, char** argv)
{
    const int n = argc > 1 ? std::atoi(argv[1]) : 1024;
    const std::string snapshot = argc > 2 ? argv[2] : MEMSCOPE_TESTDATA_DIR "/ranks/ddp_rank0.pickle";
    const int runs = argc > 3 ? std::atoi(argv[3]) : 5;
    if (n <= 0 || runs <= 0) {
        std::fprintf(stderr, "usage: memscope_bench_ranks [N] [SNAPSHOT] [RUNS]\n");
        return 2;
    }

    AnalysisOptions options;
    options.until = AnalysisStage::Attributed;
    const auto analysis = analyze(AnalysisSource::file(snapshot), options);
    const RankSummary base = summarizeRank(*analysis, analysis->focusDevice(), 0);
    const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("memscope_bench_ranks_" + std::to_string(n));
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    uint64_t bytes = 0;
    for (int r = 0; r < n; ++r) {
        RankSummary s = base;
        s.rank = r;
        s.file = "node" + std::to_string(r / 8) + "/rank" + std::to_string(r) + "_memory_snapshot.pickle";
        s.peakRequested += (r * 7919 % 1000) * (1 << 20);
        s.oom = r == n / 3;
        if (s.oom) {
            s.oomEvent = s.events - 1;
            s.oomTimeUs = s.endUs;
            s.oomAskedBytes = 1 << 30;
            s.oomPhase = "backward";
            s.oomWhere = "train.py:42 step";
        }
        const std::string text = rankSummaryJson(s);
        bytes += text.size();
        std::ofstream(dir / ("rank" + std::to_string(r) + "_memory_snapshot.pickle.summary.json")) << text;
    }

    std::vector<double> seconds, cpu;
    size_t focus = 0;
    for (int k = 0; k < runs; ++k) {
        const auto t0 = std::chrono::steady_clock::now();
        const std::clock_t c0 = std::clock(); // the process's CPU time, every thread
        const auto set = RankSet::open(std::vector<std::string>{dir.string()});
        seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        cpu.push_back(static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC);
        focus = set->focusRank();
        if (set->size() != static_cast<size_t>(n) || !set->ranks()[focus].summary.oom) {
            std::fprintf(stderr, "opened %zu ranks, focus rank %d: wrong\n", set->size(), set->ranks()[focus].summary.rank);
            return 1;
        }
    }
    std::vector<double> sorted = seconds;
    std::sort(sorted.begin(), sorted.end());
    std::sort(cpu.begin(), cpu.end());
    std::printf("%d rank summaries, %.1f MB, %u threads: open median %.3f s (min %.3f, max %.3f), CPU %.3f s; "
                "focus rank %zu (the OOM)\n",
                n, static_cast<double>(bytes) / 1e6, RankSet::workerCount(discoverRanks({dir.string()}), {}),
                sorted[sorted.size() / 2], sorted.front(), sorted.back(), cpu[cpu.size() / 2], focus);
    std::filesystem::remove_all(dir);
    return sorted[sorted.size() / 2] <= 2.0 ? 0 : 1;
}
