// One timed `memscope diff` of two files, stage by stage: each file to its attribution (the two
// analyses run on two threads, as the comparison needs both), compareRuns (aligned axis, binned
// curves, phase peaks, call sites) and the text and JSON writers. Prints one JSON line.
//
//   memscope_perf_compare A B
#include "analysis/analysis.h"
#include "compare/comparison.h"
#include "compare/comparison_writer.h"

#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <future>

using namespace memscope;

namespace {

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

double cpu()
{
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

} // namespace

int main(int argc, char** argv)
{
    if (argc != 3) {
        std::fprintf(stderr, "usage: memscope_perf_compare A B\n");
        return 2;
    }
    const AnalysisOptions options{.load = {}, .until = AnalysisStage::Attributed};
    const double c0 = cpu(), t0 = now();
    auto fa = std::async(std::launch::async, [&] { return analyze(AnalysisSource::file(argv[1]), options); });
    const auto b = analyze(AnalysisSource::file(argv[2]), options);
    const auto a = fa.get();
    const double t1 = now();
    const auto comparison = compareRuns(a, b);
    const double t2 = now();
    const std::string text = comparisonText(*comparison);
    const std::string json = comparisonJson(*comparison);
    const double t3 = now(), c3 = cpu();
    std::printf("{\"a\": \"%s\", \"b\": \"%s\", \"events\": [%lld, %lld], \"analyze_s\": %.3f, \"compare_s\": %.3f, "
                "\"write_s\": %.3f, \"total_s\": %.3f, \"cpu_total_s\": %.3f, \"bins\": %zu, \"sites\": %zu, "
                "\"peak_delta\": %lld, \"text_bytes\": %zu, \"json_bytes\": %zu}\n",
                argv[1], argv[2], static_cast<long long>(comparison->a().events), static_cast<long long>(comparison->b().events),
                t1 - t0, t2 - t1, t3 - t2, t3 - t0, c3 - c0, comparison->curves.bins, comparison->sites.size(),
                static_cast<long long>(comparison->peakDelta()), text.size(), json.size());
    return 0;
}
