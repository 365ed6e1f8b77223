// Google Benchmark suite of the core: load, replay, attribution, live-set and
// level-of-detail queries, end to end. See docs/PERFORMANCE.md.
//
//   memscope_bench [--benchmark_filter=...]            samples/many_small.pickle
//   MEMSCOPE_BENCH_FILES=a.pickle:b.pickle memscope_bench   those files instead
//
// Not part of ctest: timings depend on the machine and its load.

#include "replay/replay.h"
#include "snapshot/snapshot_reader.h"

#include "attribute/attributor.h"
#include "replay/minmax_pyramid.h"

#include <benchmark/benchmark.h>

#include <cstdlib>
#include <random>
#include <string>
#include <vector>

using namespace memscope;

namespace {

std::vector<std::string> benchFiles()
{
    std::vector<std::string> files;
    if (const char* env = std::getenv("MEMSCOPE_BENCH_FILES")) {
        std::string all = env;
        size_t start = 0;
        while (start <= all.size()) {
            const size_t end = all.find(':', start);
            const std::string f = all.substr(start, end == std::string::npos ? std::string::npos : end - start);
            if (!f.empty())
                files.push_back(f);
            if (end == std::string::npos)
                break;
            start = end + 1;
        }
    }
    if (files.empty())
        files.push_back(std::string(MEMSCOPE_SAMPLES_DIR) + "/many_small.pickle");
    return files;
}

std::string baseName(const std::string& path)
{
    const size_t slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

void setEvents(benchmark::State& state, const Snapshot& s)
{
    int64_t events = 0;
    for (const DeviceTrace& d : s.devices)
        events += static_cast<int64_t>(d.events.count());
    state.SetItemsProcessed(state.iterations() * events);
    state.counters["events"] = static_cast<double>(events);
}

void load(benchmark::State& state, const std::string& file)
{
    std::shared_ptr<const Snapshot> s;
    for (auto _ : state) {
        s = readSnapshotFile(file);
        benchmark::DoNotOptimize(s.get());
    }
    setEvents(state, *s);
    state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(s->fileBytes));
}

// The same through the pickle VM alone (no trace-entry fast path).
void loadGeneric(benchmark::State& state, const std::string& file)
{
    LoadOptions options;
    options.fastPath = false;
    std::shared_ptr<const Snapshot> s;
    for (auto _ : state) {
        s = readSnapshotFile(file, options);
        benchmark::DoNotOptimize(s.get());
    }
    setEvents(state, *s);
    state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(s->fileBytes));
}

void replay(benchmark::State& state, const std::string& file)
{
    auto s = readSnapshotFile(file);
    for (auto _ : state) {
        auto r = replaySnapshot(s);
        benchmark::DoNotOptimize(r.get());
    }
    setEvents(state, *s);
}

void attribution(benchmark::State& state, const std::string& file)
{
    auto r = replaySnapshot(readSnapshotFile(file));
    for (auto _ : state) {
        auto a = attribute(r);
        benchmark::DoNotOptimize(a.get());
    }
    setEvents(state, *r->snapshot);
}

// The live set at the peak, then at random events (what a click on the timeline asks).
void activeAfter(benchmark::State& state, const std::string& file)
{
    auto r = replaySnapshot(readSnapshotFile(file));
    const DeviceReplay& d = r->devices.at(0);
    std::mt19937_64 rng(7);
    size_t total = 0;
    for (auto _ : state) {
        const int64_t at = d.eventCount ? static_cast<int64_t>(rng() % static_cast<uint64_t>(d.eventCount)) : -1;
        total += d.activeAfter(at).size();
    }
    benchmark::DoNotOptimize(total);
}

// One frame of a view: min/max per pixel for 2000 pixels, over the whole trace (arg 0)
// or 1/2^arg of it at a random place.
void lodQuery(benchmark::State& state, const std::string& file)
{
    auto r = replaySnapshot(readSnapshotFile(file));
    const DeviceReplay& d = r->devices.at(0);
    const MinMaxPyramid lod(&d.requested);
    std::mt19937_64 rng(11);
    std::vector<MinMaxPyramid::Extremes> out(2000);
    for (auto _ : state) {
        const int64_t n = d.eventCount;
        const int64_t width = state.range(0) == 0 ? n : std::max<int64_t>(1, n >> state.range(0));
        const int64_t x0 = n > width ? static_cast<int64_t>(rng() % static_cast<uint64_t>(n - width)) : 0;
        for (int64_t j = 0; j < 2000; ++j) {
            const int64_t first = x0 + width * j / 2000;
            out[static_cast<size_t>(j)] = lod.query(first, std::max(x0 + width * (j + 1) / 2000, first + 1));
        }
        benchmark::DoNotOptimize(out.data());
    }
}

void lodBuild(benchmark::State& state, const std::string& file)
{
    auto r = replaySnapshot(readSnapshotFile(file));
    const DeviceReplay& d = r->devices.at(0);
    for (auto _ : state) {
        MinMaxPyramid lod(&d.requested);
        benchmark::DoNotOptimize(&lod);
    }
    setEvents(state, *r->snapshot);
}

// File to full results: load, replay, attribution, the live set at each peak.
void endToEnd(benchmark::State& state, const std::string& file)
{
    std::shared_ptr<const Replay> r;
    for (auto _ : state) {
        r = replaySnapshot(readSnapshotFile(file));
        auto a = attribute(r);
        benchmark::DoNotOptimize(a.get());
        for (const DeviceReplay& d : r->devices)
            if (d.peakRequested.event.valid())
                benchmark::DoNotOptimize(d.activeAfter(d.peakRequested.event.value).size());
    }
    setEvents(state, *r->snapshot);
}

} // namespace

int main(int argc, char** argv)
{
    for (const std::string& file : benchFiles()) {
        const std::string name = baseName(file);
        benchmark::RegisterBenchmark(("Load/" + name).c_str(), load, file)->Unit(benchmark::kMillisecond)->UseRealTime();
        benchmark::RegisterBenchmark(("LoadGeneric/" + name).c_str(), loadGeneric, file)
            ->Unit(benchmark::kMillisecond)
            ->UseRealTime();
        benchmark::RegisterBenchmark(("Replay/" + name).c_str(), replay, file)->Unit(benchmark::kMillisecond)->UseRealTime();
        benchmark::RegisterBenchmark(("Attribution/" + name).c_str(), attribution, file)
            ->Unit(benchmark::kMillisecond)
            ->UseRealTime();
        benchmark::RegisterBenchmark(("LiveAfter/" + name).c_str(), activeAfter, file)->Unit(benchmark::kMicrosecond);
        benchmark::RegisterBenchmark(("LodBuild/" + name).c_str(), lodBuild, file)->Unit(benchmark::kMillisecond)->UseRealTime();
        benchmark::RegisterBenchmark(("LodQuery/" + name).c_str(), lodQuery, file)
            ->Unit(benchmark::kMicrosecond)
            ->Arg(0) // the whole trace
            ->Arg(6) // 1/64 of it
            ->Arg(12); // 1/4096 of it
        benchmark::RegisterBenchmark(("EndToEnd/" + name).c_str(), endToEnd, file)->Unit(benchmark::kMillisecond)->UseRealTime();
    }
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv))
        return 1;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
