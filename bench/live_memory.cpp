// memscope_live_memory: where the live tab's memory goes with full analyses on (issue 26).
//
//   memscope_live_memory FILE [PIECES]
//
// Feeds FILE's events to an IncrementalAnalysis in PIECES pieces (default 20), as a live
// session receives them, then runs the full analysis the live tab runs and prints, in MiB
// and in bytes an event: the RSS each part adds (malloc_trim'd before each reading) and what
// its structures hold (vector capacities): the mirrored rows and the incremental replays,
// the Snapshot the full analysis builds, its Replay (allocations, per-event ids, curves,
// checkpoints), the device queries, the Attribution (per-event phase, per-allocation
// category, per-category curves) and the diagnoses. docs/LIVE.md, "Where the memory goes".
#include "analysis/analysis.h"
#include "analysis/incremental_analysis.h"
#include "live/live_recording.h"
#include "snapshot/snapshot_reader.h"

#include <malloc.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

using namespace memscope;

namespace {

double rssMiB()
{
    ::malloc_trim(0);
    std::FILE* f = std::fopen("/proc/self/statm", "r");
    long pages = 0, resident = 0;
    if (f) {
        if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2)
            resident = 0;
        std::fclose(f);
    }
    return static_cast<double>(resident) * static_cast<double>(::sysconf(_SC_PAGESIZE)) / (1 << 20);
}

template <class V>
size_t cap(const V& v)
{
    return v.capacity() * sizeof(typename V::value_type);
}

size_t snapshotBytes(const Snapshot& s)
{
    size_t b = 0;
    for (const DeviceTrace& d : s.devices) {
        const EventTable& e = d.events;
        // DictColumns: a byte a row while few distinct values (see dict_column.h).
        b += cap(e.action) + cap(e.addr) + cap(e.size) + cap(e.timeUs) + cap(e.stack) + 3 * e.count();
    }
    return b;
}

struct ReplayBytes {
    size_t allocations = 0, eventIds = 0, curves = 0, checkpoints = 0;
};

ReplayBytes replayBytes(const Replay& r)
{
    ReplayBytes b;
    for (const DeviceReplay& d : r.devices) {
        b.allocations += cap(d.allocations);
        b.eventIds += cap(d.eventAllocation);
        b.curves += (d.requested.size() + d.reserved.size()) * 4;
        for (const auto& c : d.checkpoints)
            b.checkpoints += cap(c) + sizeof(c);
    }
    return b;
}

struct AttributionBytes {
    size_t eventPhase = 0, perAllocation = 0, categoryCurves = 0, iterations = 0;
};

AttributionBytes attributionBytes(const Attribution& a)
{
    AttributionBytes b;
    for (const DeviceAttribution& d : a.devices) {
        b.eventPhase += cap(d.eventPhase);
        b.perAllocation += cap(d.allocationCategory) + cap(d.allocationPhase) + cap(d.allocationIteration);
        for (const auto& c : d.categoryBytes)
            b.categoryCurves += c.size() * 4;
        for (const Iteration& it : d.iterations)
            b.iterations += sizeof(it) + cap(it.phases);
    }
    return b;
}

} // namespace

int main(int argc, char** argv)
{
    if (argc < 2) {
        std::fprintf(stderr, "usage: memscope_live_memory FILE [PIECES]\n");
        return 2;
    }
    const int pieces = argc > 2 ? std::atoi(argv[2]) : 20;
    const double r0 = rssMiB();
    int64_t events = 0;
    IncrementalAnalysis inc;
    double rCore = 0;
    {
        std::shared_ptr<const Snapshot> full = readSnapshotFile(argv[1]);
        std::unique_ptr<Snapshot> growing = copySnapshot(*full);
        for (DeviceTrace& t : growing->devices) {
            events += static_cast<int64_t>(t.events.count());
            EventTable empty;
            empty.hasTime = t.events.hasTime;
            t.events = std::move(empty);
        }
        const double rSource = rssMiB();
        for (int p = 1; p <= pieces; ++p) {
            for (size_t d = 0; d < full->devices.size(); ++d) {
                const EventTable& src = full->devices[d].events;
                EventTable& dst = growing->devices[d].events;
                const size_t until = src.count() * static_cast<size_t>(p) / static_cast<size_t>(pieces);
                for (size_t k = dst.count(); k < until; ++k) {
                    dst.push(src.action[k], src.addr[k], src.size[k], src.stream[k], src.timeUs[k], src.stack[k],
                             src.userMetadata[k], src.compileContext[k]);
                    if (auto it = src.deviceFree.find(static_cast<int64_t>(k)); it != src.deviceFree.end())
                        dst.deviceFree.emplace(it->first, it->second);
                }
            }
            if (p == pieces)
                growing->segments = full->segments;
            inc.ingest(*growing);
        }
        inc.publish();
        rCore = rssMiB() - rSource;
    }
    const double rBase = rssMiB();
    const auto view = inc.publish();
    const double n = static_cast<double>(events);
    auto line = [&](const char* what, double mib, double heldMiB) {
        std::printf("%-44s %8.1f MiB %6.1f B/event   held %8.1f MiB %6.1f B/event\n", what, mib, mib * (1 << 20) / n, heldMiB,
                    heldMiB * (1 << 20) / n);
    };
    constexpr double M = 1 << 20;
    std::printf("%lld events, %d pieces; RSS before %.1f MiB\n", static_cast<long long>(events), pieces, r0);
    (void)rCore;
    line("core: incremental replays + mirrored rows", rBase - r0, static_cast<double>(view->heldBytes) / M);
    line("  of which mirrored rows", 0, static_cast<double>(view->rowBytes) / M);

    // What the live path holds after a full analysis: its Snapshot is the mirror's base, the
    // rows it holds are let go.
    {
        auto a = inc.runFullAnalysis();
        const auto v = inc.publish();
        std::printf("after a full analysis, its Snapshot shared as the mirror's base: %s\n",
                    inc.baseSnapshot() == a->snapshot ? "yes" : "no");
        line("core: incremental replays + rows since", 0, static_cast<double>(v->heldBytes) / M);
        line("  of which mirrored rows", 0, static_cast<double>(v->rowBytes) / M);
    }
    const double rCoreAfter = rssMiB();
    line("core + the full analysis it keeps (Snapshot = base)", rCoreAfter - r0, 0);

    double last = rssMiB();
    std::shared_ptr<const Snapshot> snap = inc.mirroredSnapshot();
    double now = rssMiB();
    line("next full analysis: Snapshot (base + rows since)", now - last, static_cast<double>(snapshotBytes(*snap)) / M);
    last = now;

    std::shared_ptr<const Analysis> stages[4];
    double rss[4] = {};
    AnalysisCallbacks cb;
    cb.stageReady = [&](const std::shared_ptr<const Analysis>& a) {
        stages[static_cast<int>(a->stage)] = a;
        rss[static_cast<int>(a->stage)] = rssMiB();
    };
    analyze(AnalysisSource::recording(snap, "live"), {}, cb);
    const ReplayBytes rb = replayBytes(*stages[1]->replay);
    line("  Replay (+ device queries)", rss[1] - rss[0],
         static_cast<double>(rb.allocations + rb.eventIds + rb.curves + rb.checkpoints) / M);
    line("    allocations", 0, static_cast<double>(rb.allocations) / M);
    line("    per-event allocation ids", 0, static_cast<double>(rb.eventIds) / M);
    line("    requested + reserved curves", 0, static_cast<double>(rb.curves) / M);
    line("    live-set checkpoints", 0, static_cast<double>(rb.checkpoints) / M);
    const AttributionBytes ab = attributionBytes(*stages[2]->attribution);
    line("  Attribution (+ frame classifier)", rss[2] - rss[1],
         static_cast<double>(ab.eventPhase + ab.perAllocation + ab.categoryCurves + ab.iterations) / M);
    line("    per-event phase", 0, static_cast<double>(ab.eventPhase) / M);
    line("    per-allocation category, phase, iteration", 0, static_cast<double>(ab.perAllocation) / M);
    line("    per-category curves", 0, static_cast<double>(ab.categoryCurves) / M);
    line("    iterations", 0, static_cast<double>(ab.iterations) / M);
    line("  Diagnoses + training measurement", rss[3] - rss[2], 0);
    line("whole full analysis (Snapshot .. Diagnosed)", rss[3] - rCoreAfter, 0);
    for (auto& s : stages)
        s.reset();
    snap.reset();
    std::printf("after releasing the analysis: RSS %.1f MiB (core + the kept analysis %.1f)\n", rssMiB(), rCoreAfter);
    return 0;
}
