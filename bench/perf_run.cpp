// memscope_perf: one timed run from a snapshot file to full results, phase by phase.
//
//   memscope_perf FILE [--check EXPECTED.json|STATS.json] [--queries N] [--repeat R] [--threads N]
//
// Runs analyze() up to the attribution, as the app and the command line do, and prints one
// JSON object: wall seconds of load (map + parse + columns), replay (curves,
// allocations, live-set checkpoints), attribution (phases, categories, per-category
// curves, iteration peaks), queries (the live set at the peak and N random live-set
// queries, and a level-of-detail query of the curves for a 2000-pixel view), the total,
// the peak RSS (getrusage), and what the model holds in bytes. With --check, the replay's
// peaks are compared with `requested_peak`/`reserved_peak` (generator) or torch's
// `requested_bytes.all.peak`/`max_reserved` (a real run's stats.json); a mismatch exits 1.
// Run it under /usr/bin/time -v for the kernel's view of peak memory.
//
// --repeat R runs it all R times in one process, a JSON line each ("run": 1..R), each run's
// results freed before the next. Run 1 writes into fresh memory; the later runs into pages
// the earlier ones gave back, which the kernel hands out again without asking the host for
// them. On this virtual machine a fresh page costs far more than the work that fills it
// (`memscope_page_cost`): run 1 against run 2 separates the two.

#include "analysis/analysis.h"
#include "common/thread_pool.h"
#include "replay/minmax_pyramid.h"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <sys/resource.h>
#include <time.h>

using namespace memscope;

namespace {

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

// CPU seconds of the whole process (all threads): steadier than wall time on a busy machine.
// The calling thread's CPU time: with a parallel parse, the VM's own (its critical path).
double threadCpu()
{
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double cpu()
{
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

long peakRssKiB()
{
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss;
}

long currentRssKiB()
{
    std::ifstream f("/proc/self/statm");
    long pages = 0, resident = 0;
    f >> pages >> resident;
    return resident * 4;
}

template <class V>
size_t bytesOf(const V& v)
{
    return v.capacity() * sizeof(typename V::value_type);
}

// A number after "key": in a small JSON file, without a JSON library.
long long jsonNumber(const std::string& text, const std::string& key)
{
    const std::string needle = "\"" + key + "\"";
    const size_t at = text.find(needle);
    if (at == std::string::npos)
        return -1;
    size_t p = text.find(':', at + needle.size());
    if (p == std::string::npos)
        return -1;
    return std::strtoll(text.c_str() + p + 1, nullptr, 10);
}

// One run from the file to full results; prints its JSON line. `run` counts from 1: with
// --repeat, the later runs reuse the pages the earlier ones freed (see the header).
bool runOnce(const std::string& file, const std::string& check, int queries, int run)
{
    // Through analyze(), as every caller: the stages' times are taken as each is published.
    double t1 = 0, t2 = 0, t3 = 0, c1 = 0, c2 = 0, c3 = 0, m1 = 0;
    long rssAfterLoad = 0, peakAfterLoad = 0, rssAfterReplay = 0, rssAfterAttribution = 0;
    AnalysisOptions options;
    options.until = AnalysisStage::Attributed;
    uint64_t parallelBatches = 0;
    options.load.parallelBatches = &parallelBatches;
    AnalysisCallbacks callbacks;
    callbacks.stageReady = [&](const std::shared_ptr<const Analysis>& a) {
        switch (a->stage) {
        case AnalysisStage::Loaded:
            t1 = now(), c1 = cpu(), m1 = threadCpu(), rssAfterLoad = currentRssKiB(), peakAfterLoad = peakRssKiB();
            break;
        case AnalysisStage::Replayed: t2 = now(), c2 = cpu(), rssAfterReplay = currentRssKiB(); break;
        case AnalysisStage::Attributed: t3 = now(), c3 = cpu(), rssAfterAttribution = currentRssKiB(); break;
        case AnalysisStage::Diagnosed: break;
        }
    };
    const double c0 = cpu();
    const double m0 = threadCpu();
    const double t0 = now();
    const std::shared_ptr<const Analysis> analysis = analyze(AnalysisSource::file(file), options, callbacks);
    const std::shared_ptr<const Snapshot> snap = analysis->snapshot;
    const std::shared_ptr<const Replay> replay = analysis->replay;
    const std::shared_ptr<const Attribution> attribution = analysis->attribution;

    // Queries: the live set at each device's peak, random live-set queries, one LOD view.
    int64_t events = 0;
    int64_t liveAtPeak = 0;
    size_t querySum = 0;
    std::mt19937_64 rng(7);
    for (const DeviceReplay& d : replay->devices) {
        events += d.eventCount;
        if (d.peakRequested.event.valid())
            liveAtPeak += static_cast<int64_t>(d.activeAfter(d.peakRequested.event.value).size());
        for (int q = 0; q < queries && d.eventCount > 0; ++q)
            querySum += d.activeAfter(static_cast<int64_t>(rng() % static_cast<uint64_t>(d.eventCount))).size();
    }
    const double t4 = now();
    // Levels of detail of the requested and reserved curves, and one 2000-pixel view each.
    for (const DeviceReplay& d : replay->devices) {
        const MinMaxPyramid requested(&d.requested);
        const MinMaxPyramid reserved(&d.reserved);
        const int64_t n = d.eventCount;
        std::vector<MinMaxPyramid::Extremes> pixels(2000);
        for (const MinMaxPyramid* p : {&requested, &reserved})
            for (int64_t j = 0; j < 2000; ++j) {
                const int64_t first = n * j / 2000;
                pixels[static_cast<size_t>(j)] = p->query(first, std::max(n * (j + 1) / 2000, first + 1));
            }
    }
    const double t5 = now();
    const double c5 = cpu();

    // What the model holds.
    size_t columns = 0, replayBytes = 0, checkpointBytes = 0;
    for (const DeviceTrace& t : snap->devices) {
        const EventTable& e = t.events;
        columns += bytesOf(e.action) + bytesOf(e.addr) + bytesOf(e.size) + e.stream.bytes() + bytesOf(e.timeUs) +
                   bytesOf(e.stack) + e.userMetadata.bytes() + e.compileContext.bytes();
    }
    size_t attributionBytes = 0, wideBlocks = 0;
    for (const DeviceReplay& d : replay->devices)
        wideBlocks += d.reserved.wideBlocks();
    for (const DeviceAttribution& a : attribution->devices) {
        attributionBytes += bytesOf(a.eventPhase) + bytesOf(a.allocationCategory) + bytesOf(a.allocationPhase) +
                            bytesOf(a.allocationIteration);
        for (const CompactCurve& c : a.categoryBytes) {
            attributionBytes += c.bytes();
            wideBlocks += c.wideBlocks();
        }
    }
    for (const DeviceReplay& d : replay->devices) {
        replayBytes += bytesOf(d.allocations) + bytesOf(d.eventAllocation) + d.requested.bytes() + d.reserved.bytes();
        for (const auto& c : d.checkpoints)
            checkpointBytes += bytesOf(c);
    }

    bool ok = true;
    std::string checkText;
    if (!check.empty()) {
        std::ifstream f(check);
        std::stringstream ss;
        ss << f.rdbuf();
        const std::string text = ss.str();
        long long wantRequested = jsonNumber(text, "requested_peak");
        if (wantRequested < 0)
            wantRequested = jsonNumber(text, "requested_bytes.all.peak");
        const long long wantReserved = jsonNumber(text, "reserved_peak") >= 0 ? jsonNumber(text, "reserved_peak")
                                                                              : jsonNumber(text, "max_reserved");
        // torch's counters are the recording device's: the device with events (a rank's
        // file under torchrun has an empty cuda:0 beside its own cuda:N).
        const DeviceReplay* busiest = &replay->devices.at(0);
        for (const DeviceReplay& r : replay->devices)
            if (r.eventCount > busiest->eventCount)
                busiest = &r;
        const DeviceReplay& d = *busiest;
        ok = d.peakRequested.bytes == wantRequested && d.peakReserved.bytes == wantReserved;
        checkText = ", \"check\": \"" + std::string(ok ? "ok" : "MISMATCH") +
                    "\", \"requested_peak\": " + std::to_string(d.peakRequested.bytes) +
                    ", \"expected_requested_peak\": " + std::to_string(wantRequested) +
                    ", \"reserved_peak\": " + std::to_string(d.peakReserved.bytes) +
                    ", \"expected_reserved_peak\": " + std::to_string(wantReserved);
    }

    std::printf(
        "{\"run\": %d, \"file\": \"%s\", \"file_bytes\": %llu, \"events\": %lld, \"strings\": %zu, \"frames\": %zu, \"stacks\": %zu,\n"
        " \"load_s\": %.3f, \"replay_s\": %.3f, \"attribution_s\": %.3f, \"queries_s\": %.3f, \"lod_s\": %.3f, "
        "\"total_s\": %.3f, \"attribution\": %s,\n"
        " \"cpu_load_s\": %.3f, \"cpu_replay_s\": %.3f, \"cpu_attribution_s\": %.3f, \"cpu_total_s\": %.3f,\n"
        " \"rss_after_load_mib\": %.1f, \"peak_rss_after_load_mib\": %.1f, \"rss_after_replay_mib\": %.1f, "
        "\"rss_after_attribution_mib\": %.1f, \"peak_rss_mib\": %.1f,\n"
        " \"columns_mib\": %.1f, \"replay_mib\": %.1f, \"checkpoints_mib\": %.1f, \"attribution_mib\": %.1f, \"wide_blocks\": %zu, \"live_at_peak\": %lld, \"query_sum\": %zu, "
        "\"threads\": %u, \"parallel_batches\": %llu, \"cpu_load_main_s\": %.3f%s}\n",
        run, file.c_str(), static_cast<unsigned long long>(snap->fileBytes), static_cast<long long>(events), snap->strings.size(),
        snap->frames.size(), snap->stacks.size(), t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4, t5 - t0, "true", c1 - c0, c2 - c1,
        c3 - c2, c5 - c0, rssAfterLoad / 1024.0, peakAfterLoad / 1024.0, rssAfterReplay / 1024.0, rssAfterAttribution / 1024.0,
        peakRssKiB() / 1024.0, columns / 1048576.0, replayBytes / 1048576.0, checkpointBytes / 1048576.0,
        attributionBytes / 1048576.0, wideBlocks, static_cast<long long>(liveAtPeak), querySum, threadCount(),
        static_cast<unsigned long long>(parallelBatches), m1 - m0, checkText.c_str());
    std::fflush(stdout);
    return ok;
}

} // namespace

int main(int argc, char** argv)
{
    if (argc < 2) {
        std::fprintf(stderr, "usage: memscope_perf FILE [--check EXPECTED.json] [--queries N] [--repeat R] [--threads N]\n");
        return 2;
    }
    const std::string file = argv[1];
    std::string check;
    int queries = 1000;
    int repeat = 1;
    for (int i = 2; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--check") && i + 1 < argc)
            check = argv[++i];
        else if (!std::strcmp(argv[i], "--queries") && i + 1 < argc)
            queries = std::atoi(argv[++i]);
        else if (!std::strcmp(argv[i], "--repeat") && i + 1 < argc)
            repeat = std::max(1, std::atoi(argv[++i]));
        else if (!std::strcmp(argv[i], "--threads") && i + 1 < argc)
            setThreadCount(static_cast<unsigned>(std::max(1, std::atoi(argv[++i]))));
        else {
            std::fprintf(stderr, "memscope_perf: unknown argument %s\n", argv[i]);
            return 2;
        }
    }
    bool ok = true;
    for (int run = 1; run <= repeat; ++run)
        ok = runOnce(file, check, queries, run) && ok;
    return ok ? 0 : 1;
}
