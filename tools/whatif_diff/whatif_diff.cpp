// memscope_whatif_diff: what the model-level what-if predicts at its peak against what a real
// run of the same change held at its own (a developer's tool for the what-if's rules, see
// docs/ALLOCATOR.md).
//
//   memscope_whatif_diff BASE.pickle.gz REAL.pickle.gz --recorded-batch 32 [--checkpoint all|N]
//       [--precision P] [--optimizer O] [--accumulate K] [--batch B] [--seq L --recorded-seq L0]
//       [--recorded-precision P] [--rows N] [--list CATEGORY] [--sizes 1] [--segments 1] [--align 1]
//       [--ops FROM[:TO]] [--occupancy OP] [--real-addresses 1]
//
// --real-addresses 1 replays the prediction with the addresses CUDA gave the real run's segments
// (in their order, by size): a miss that goes away with it is where a new segment went. --ops
// prints allocations of 1 MiB or more (all of them with WHATIF_DIFF_ALLOPS=1 in the environment).
//
// BASE is the recording the prediction starts from, REAL a recording of the changed run. Both
// sides are grouped by category, the phase the bytes were made in, and the innermost Python
// frame of the allocation (an op the what-if added is "(added)"), and the groups are printed
// with both sides' live bytes at each side's peak of requested bytes, largest difference first.
#include "allocator/caching_allocator_model.h"
#include "allocator/model_what_if.h"
#include "analysis/analysis.h"
#include "common/format_bytes.h"
#include "snapshot/python_stacks.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

using namespace memscope;

namespace {

using Key = std::tuple<std::string, std::string, std::string>; // category, phase, frame

std::string frameOf(const Snapshot& snap, const PythonStacks& stacks, StackId s)
{
    if (!s.valid())
        return "(no frames)";
    const auto frames = stacks.frames(s);
    if (frames.empty())
        return "(native only)";
    const Frame& f = snap.frames.frame(frames[0]);
    std::string file(snap.str(f.filename));
    if (const auto slash = file.rfind('/'); slash != std::string::npos)
        file = file.substr(slash + 1);
    std::string out = file + ":" + std::to_string(f.line) + " " + std::string(snap.str(f.name));
    const std::string_view op = stacks.op(s);
    if (!op.empty())
        out += " [" + std::string(op) + "]";
    return out;
}

std::shared_ptr<const Analysis> load(const std::string& path)
{
    AnalysisOptions o;
    o.until = AnalysisStage::Attributed;
    return analyze(AnalysisSource::file(path), o);
}

uint64_t rounded(uint64_t size) { return size < 512 ? 512 : (size + 511) / 512 * 512; }

} // namespace

int main(int argc, char** argv)
{
    if (argc < 3) {
        std::fprintf(stderr, "usage: memscope_whatif_diff BASE REAL --recorded-batch B [changes…] [--rows N]\n");
        return 2;
    }
    const std::string basePath = argv[1], realPath = argv[2];
    ModelChanges changes;
    double recordedBatch = 1, recordedSeq = 1;
    std::optional<Precision> recordedPrecision;
    size_t rows = 40;
    std::string listCategory; // print each live allocation of this category, both sides
    bool sizes = false; // print the live sizes of both sides (recordings without stacks)
    bool segments = false; // print each growth of the reserved bytes, both sides
    bool realAddresses = false; // new segments at the real run's addresses (is a miss placement alone?)
    bool align = false; // the predicted live set at the real peak's place (its iteration, phase and count of allocs)
    int64_t opsFrom = -1, opsTo = -1; // print the edited stream's ops in [from, to]
    int64_t occupancyAt = -1; // print the large segments' blocks before this op
    for (int i = 3; i + 1 < argc; i += 2) {
        const std::string k = argv[i], v = argv[i + 1];
        if (k == "--checkpoint")
            changes.checkpoint = v == "all" ? -1 : std::atoi(v.c_str());
        else if (k == "--precision")
            changes.precision = precisionFromName(v);
        else if (k == "--optimizer")
            changes.optimizer = optimizerFromName(v);
        else if (k == "--accumulate")
            changes.accumulate = std::atoi(v.c_str());
        else if (k == "--batch")
            changes.batch = std::atof(v.c_str());
        else if (k == "--seq")
            changes.seq = std::atof(v.c_str());
        else if (k == "--recorded-batch")
            recordedBatch = std::atof(v.c_str());
        else if (k == "--recorded-seq")
            recordedSeq = std::atof(v.c_str());
        else if (k == "--recorded-precision")
            recordedPrecision = precisionFromName(v);
        else if (k == "--ops") {
            opsFrom = std::atoll(v.c_str());
            const auto colon = v.find(':'); // FROM:TO, or FROM for 400 ops
            opsTo = colon == std::string::npos ? opsFrom + 400 : std::atoll(v.c_str() + colon + 1);
        } else if (k == "--occupancy")
            occupancyAt = std::atoll(v.c_str());
        else if (k == "--segments")
            segments = v == "1";
        else if (k == "--real-addresses")
            realAddresses = v == "1";
        else if (k == "--align")
            align = v == "1";
        else if (k == "--sizes")
            sizes = v == "1";
        else if (k == "--list")
            listCategory = v;
        else if (k == "--rows")
            rows = static_cast<size_t>(std::atoi(v.c_str()));
        else {
            std::fprintf(stderr, "unknown option %s\n", k.c_str());
            return 2;
        }
    }
    const auto base = load(basePath);
    const auto real = load(realPath);
    const DeviceAttribution& ba = base->attribution->devices.at(0);
    ModelWhatIf model(*base->replay, 0, ba);
    RecordedSetup r = model.recorded();
    r.batch = recordedBatch;
    r.batchKnown = true;
    r.seq = recordedSeq;
    r.seqKnown = recordedSeq != 1;
    if (recordedPrecision)
        r.precision = *recordedPrecision;
    model.setRecorded(r);
    std::printf("blocks found: %d (loop %s)\n", model.blocks().count(), model.blocks().loopFrame.c_str());
    if (std::getenv("WHATIF_DIFF_BLOCKS"))
        for (size_t it = 0; it < model.blocks().perIteration.size(); ++it)
            for (const BlockSpan& b : model.blocks().perIteration[it])
                std::printf("  iteration %zu block events %lld..%lld\n", it, static_cast<long long>(b.firstEvent),
                            static_cast<long long>(b.lastEvent));
    std::vector<std::string> notes;
    OpStream s = model.build(changes, &notes);
    if (realAddresses)
        s.recordedSegments = opsFromRecording(*real->replay, 0).recordedSegments;
    for (const auto& n : notes)
        std::printf("note: %s\n", n.c_str());
    const bool allOps = std::getenv("WHATIF_DIFF_ALLOPS") != nullptr;
    for (int64_t k = std::max<int64_t>(0, opsFrom); opsFrom >= 0 && k <= opsTo && k < static_cast<int64_t>(s.ops.size()); ++k) {
        const TraceOp& op = s.ops[static_cast<size_t>(k)];
        if (op.kind == TraceOp::Kind::Alloc && (op.size >= (1 << 20) || allOps))
            std::printf("  op %lld alloc %llu key %u origin %d event %lld %s %s\n", static_cast<long long>(k),
                        static_cast<unsigned long long>(op.size), op.key, op.origin, static_cast<long long>(op.event),
                        op.origin >= 0 ? std::string(phaseName(ba.allocationPhase[static_cast<size_t>(op.origin)])).c_str() : "-",
                        op.key == static_cast<uint32_t>(op.origin) ? "" : "(copy)");
        else if (op.kind == TraceOp::Kind::Free)
            std::printf("  op %lld free key %u event %lld\n", static_cast<long long>(k), op.key,
                        static_cast<long long>(op.event));
    }
    if (occupancyAt >= 0) {
        // the allocator model with the base recording's segment addresses, as simulateOps gives them
        CachingAllocatorModel::Hooks hooks;
        hooks.segmentAddress = CachingAllocatorModel::Hooks::recordedAddresses(s.recordedSegments);
        CachingAllocatorModel m({}, hooks);
        std::unordered_map<uint32_t, CachingAllocatorModel::BlockRef> refs;
        std::unordered_map<uint64_t, std::pair<int64_t, Category>> madeBy; // block address -> op, category
        for (int64_t k = 0; k < occupancyAt && k < static_cast<int64_t>(s.ops.size()); ++k) {
            const TraceOp& op = s.ops[static_cast<size_t>(k)];
            if (op.kind == TraceOp::Kind::Alloc) {
                if (auto b = m.malloc(op.size, op.stream)) {
                    refs[op.key] = *b;
                    madeBy[m.address(*b)] = {k, op.category};
                }
            } else if (op.kind == TraceOp::Kind::Free) {
                if (auto it = refs.find(op.key); it != refs.end()) {
                    m.freeCompleted(it->second);
                    refs.erase(it);
                }
            } else if (op.kind == TraceOp::Kind::EmptyCache)
                m.emptyCache();
        }
        for (const auto& seg : m.segments()) {
            if (seg.total() < (64u << 20))
                continue;
            std::printf("segment %llu MiB at %llx:", static_cast<unsigned long long>(seg.total() >> 20),
                        static_cast<unsigned long long>(seg.addr));
            for (const auto& b : seg.blocks)
                if (b.allocated)
                    std::printf(" @%llu:%.2fMiB#%lld/%s", static_cast<unsigned long long>((b.addr - seg.addr) >> 20),
                                static_cast<double>(b.size) / (1 << 20), static_cast<long long>(madeBy[b.addr].first),
                                std::string(categoryName(madeBy[b.addr].second)).c_str());
            std::printf("\n");
        }
    }
    SimulationOptions so;
    so.keepCurve = segments;
    const SimulationResult sim = simulateOps(s, &ba, so);
    if (segments) {
        std::printf("predicted reserved growth (op: +bytes -> reserved):\n");
        int64_t prev = 0;
        for (size_t k = 0; k < sim.reserved.size(); ++k) {
            if (sim.reserved[k] != prev)
                std::printf("  %zu%s: %+lld -> %lld\n", k, k < s.ops.size() && s.ops[k].origin < 0 ? " (added)" : "",
                            static_cast<long long>(sim.reserved[k] - prev), static_cast<long long>(sim.reserved[k]));
            prev = sim.reserved[k];
        }
    }
    std::printf("predicted: allocated peak %s, reserved %s\n", formatBytes(sim.allocatedPeak).c_str(),
                formatBytes(sim.reservedPeak).c_str());

    // the predicted live set at the highest rounded total
    const Snapshot& bs = *base->snapshot;
    const PythonStacks bstacks(bs);
    const DeviceReplay& bdr = base->replay->devices.at(0);
    std::unordered_map<uint32_t, const TraceOp*> live;
    int64_t total = 0, best = -1;
    size_t bestOp = 0;
    for (size_t k = 0; k < s.ops.size(); ++k) {
        const TraceOp& op = s.ops[k];
        if (op.kind == TraceOp::Kind::Alloc) {
            live[op.key] = &op;
            total += static_cast<int64_t>(rounded(op.size));
        } else if (op.kind == TraceOp::Kind::Free || op.kind == TraceOp::Kind::FreeRequested) {
            if (op.kind == TraceOp::Kind::FreeRequested)
                continue;
            if (auto it = live.find(op.key); it != live.end()) {
                total -= static_cast<int64_t>(rounded(it->second->size));
                live.erase(it);
            }
        }
        if (total > best) {
            best = total;
            bestOp = k;
        }
    }
    // the predicted live set once op `last` has run, and its rounded bytes
    auto liveAfter = [&](size_t last) {
        std::unordered_map<uint32_t, const TraceOp*> set;
        int64_t bytes = 0;
        for (size_t k = 0; k <= last && k < s.ops.size(); ++k) {
            const TraceOp& op = s.ops[k];
            if (op.kind == TraceOp::Kind::Alloc) {
                set[op.key] = &op;
                bytes += static_cast<int64_t>(rounded(op.size));
            } else if (op.kind == TraceOp::Kind::Free) {
                if (auto it = set.find(op.key); it != set.end()) {
                    bytes -= static_cast<int64_t>(rounded(it->second->size));
                    set.erase(it);
                }
            }
        }
        return std::pair{std::move(set), bytes};
    };
    std::map<Key, std::pair<int64_t, int64_t>> groups; // predicted, real
    // the live set's bytes by (category, phase, frame) on the predicted side; `list`: print
    // each allocation of listCategory
    auto groupPredicted = [&](bool list) {
        for (auto& [key, v] : groups)
            v.first = 0;
        for (const auto& [key, op] : live) {
            const bool recorded = op->origin >= 0 && static_cast<size_t>(op->origin) < bdr.allocations.size();
            const std::string frame = recorded ? frameOf(bs, bstacks, bdr.allocations[static_cast<size_t>(op->origin)].stack)
                                               : "(added)";
            const std::string phase = recorded ? std::string(phaseName(ba.allocationPhase[static_cast<size_t>(op->origin)]))
                                               : std::string("-");
            const std::string cat = std::string(
                categoryName(recorded ? ba.allocationCategory[static_cast<size_t>(op->origin)] : op->category));
            groups[{cat, phase, frame}].first += static_cast<int64_t>(rounded(op->size));
            if (list && cat == listCategory)
                std::printf("  predicted %-12s %12llu  key %u origin %d event %lld  %s\n", phase.c_str(),
                            static_cast<unsigned long long>(op->size), op->key, op->origin, static_cast<long long>(op->event),
                            frame.c_str());
        }
    };
    live = liveAfter(bestOp).first;
    const int64_t peakEvent = s.ops[bestOp].event;
    std::printf("predicted peak (rounded requests): %s at op %zu (recorded event %lld, %s)\n", formatBytes(best).c_str(), bestOp,
                static_cast<long long>(peakEvent),
                peakEvent >= 0 && static_cast<size_t>(peakEvent) < ba.eventPhase.size()
                    ? std::string(phaseName(ba.eventPhase[static_cast<size_t>(peakEvent)])).c_str()
                    : "?");
    groupPredicted(true);

    // the real run's live set at its highest rounded total
    const Snapshot& rs = *real->snapshot;
    const PythonStacks rstacks(rs);
    const DeviceReplay& rdr = real->replay->devices.at(0);
    const DeviceAttribution& ra = real->attribution->devices.at(0);
    const EventTable& ev = rs.devices.at(0).events;
    int64_t rtotal = 0, rbest = -1, rbestEvent = -1;
    for (const Allocation& al : rdr.allocations)
        if (al.preexisting())
            rtotal += static_cast<int64_t>(rounded(al.size));
    for (size_t e = 0; e < ev.count(); ++e) {
        const AllocationId id = rdr.eventAllocation[e];
        if (!id.valid())
            continue;
        const Allocation& al = rdr.allocation(id);
        if (al.allocEvent.value == static_cast<int64_t>(e))
            rtotal += static_cast<int64_t>(rounded(al.size));
        else if (al.freeEvent.valid() && al.freeEvent.value == static_cast<int64_t>(e))
            rtotal -= static_cast<int64_t>(rounded(al.size));
        if (rtotal > rbest) {
            rbest = rtotal;
            rbestEvent = static_cast<int64_t>(e);
        }
    }
    std::printf("real peak (rounded requests): %s at event %lld (%s)\n", formatBytes(rbest).c_str(),
                static_cast<long long>(rbestEvent),
                std::string(phaseName(ra.eventPhase[static_cast<size_t>(rbestEvent)])).c_str());
    if (align) {
        // The real peak's place: its iteration, its phase and how many allocations that phase of
        // that iteration had made; the predicted stream's op where its recorded allocations
        // (not the added ones) reach the same count.
        auto iterationOf = [](const DeviceAttribution& at, int64_t e) {
            for (size_t i = 0; i < at.iterations.size(); ++i)
                if (e >= at.iterations[i].firstEvent && e <= at.iterations[i].lastEvent)
                    return static_cast<int>(i);
            return -1;
        };
        const int rit = iterationOf(ra, rbestEvent);
        const Phase rph = ra.eventPhase[static_cast<size_t>(rbestEvent)];
        int64_t k = 0;
        for (int64_t e = rit >= 0 ? ra.iterations[static_cast<size_t>(rit)].firstEvent : 0; e <= rbestEvent; ++e) {
            const AllocationId id = rdr.eventAllocation[static_cast<size_t>(e)];
            k += id.valid() && rdr.allocation(id).allocEvent.value == e && ra.eventPhase[static_cast<size_t>(e)] == rph;
        }
        int64_t n = 0;
        size_t at = bestOp;
        for (size_t i = 0; i < s.ops.size(); ++i) {
            const TraceOp& op = s.ops[i];
            if (op.kind != TraceOp::Kind::Alloc || op.origin < 0 || op.event < 0 ||
                static_cast<size_t>(op.event) >= ba.eventPhase.size() || iterationOf(ba, op.event) != rit ||
                ba.eventPhase[static_cast<size_t>(op.event)] != rph)
                continue;
            at = i;
            if (++n >= k)
                break;
        }
        std::printf("aligned: real peak is allocation %lld of iteration %d's %s; predicted op %zu (%lld of %lld counted)\n",
                    static_cast<long long>(k), rit, std::string(phaseName(rph)).c_str(), at, static_cast<long long>(n),
                    static_cast<long long>(k));
        int64_t t = 0;
        std::tie(live, t) = liveAfter(at);
        std::printf("predicted there (rounded requests): %s\n", formatBytes(t).c_str());
        groupPredicted(false);
    }
    for (size_t a = 0; a < rdr.allocations.size(); ++a) {
        const Allocation& al = rdr.allocations[a];
        if (!al.activeAfter(rbestEvent))
            continue;
        const std::string cat(categoryName(ra.allocationCategory[a]));
        groups[{cat, std::string(phaseName(ra.allocationPhase[a])), frameOf(rs, rstacks, al.stack)}].second +=
            static_cast<int64_t>(rounded(al.size));
        if (cat == listCategory)
            std::printf("  real      %-12s %12llu  alloc %lld free %lld  %s\n",
                        std::string(phaseName(ra.allocationPhase[a])).c_str(), static_cast<unsigned long long>(al.size),
                        static_cast<long long>(al.allocEvent.value), static_cast<long long>(al.freeEvent.value),
                        frameOf(rs, rstacks, al.stack).c_str());
    }

    if (sizes) {
        std::map<uint64_t, std::pair<int, int>, std::greater<>> count; // rounded size -> predicted, real
        for (const auto& [key, op] : live)
            ++count[rounded(op->size)].first;
        for (const Allocation& al : rdr.allocations)
            if (al.activeAfter(rbestEvent))
                ++count[rounded(al.size)].second;
        std::printf("\n%14s %9s %9s\n", "size", "predicted", "real");
        for (const auto& [size, n] : count)
            if (size >= (1 << 20) && n.first != n.second)
                std::printf("%14llu %9d %9d\n", static_cast<unsigned long long>(size), n.first, n.second);
    }
    std::map<std::string, std::pair<int64_t, int64_t>> byCategory;
    std::vector<std::pair<Key, std::pair<int64_t, int64_t>>> list(groups.begin(), groups.end());
    for (const auto& [k, v] : list) {
        byCategory[std::get<0>(k)].first += v.first;
        byCategory[std::get<0>(k)].second += v.second;
    }
    std::printf("\n%-14s %14s %14s %14s\n", "category", "predicted", "real", "diff");
    for (const auto& [c, v] : byCategory)
        std::printf("%-14s %14s %14s %14s\n", c.c_str(), formatBytes(v.first).c_str(), formatBytes(v.second).c_str(),
                    formatBytes(v.first - v.second).c_str());
    std::sort(list.begin(), list.end(), [](const auto& x, const auto& y) {
        return std::llabs(x.second.first - x.second.second) > std::llabs(y.second.first - y.second.second);
    });
    std::printf("\n%-13s %-14s %12s %12s %12s  %s\n", "category", "phase", "predicted", "real", "diff", "frame");
    for (size_t i = 0; i < list.size() && i < rows; ++i) {
        const auto& [k, v] = list[i];
        std::printf("%-13s %-14s %12s %12s %12s  %s\n", std::get<0>(k).c_str(), std::get<1>(k).c_str(),
                    formatBytes(v.first).c_str(), formatBytes(v.second).c_str(), formatBytes(v.first - v.second).c_str(),
                    std::get<2>(k).c_str());
    }
    return 0;
}
