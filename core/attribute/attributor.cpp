#include "attribute/attributor.h"

#include "attribute/collective_memory.h"
#include "attribute/phase_segmenter.h"
#include "attribute/stack_hints.h"
#include "common/huge_pages.h"
#include "common/prefaulter.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

namespace memscope {

namespace {

constexpr size_t idx(Category c) { return static_cast<size_t>(c); }

struct Categorizer {
    const Snapshot& snap;
    const DeviceReplay& d;
    const PhaseSegmentation& seg;
    StackHints& hints;
    DeviceAttribution& out;
    std::vector<int64_t> forwardStarts; // sorted first-forward events of the iterations
    int firstFullIteration = -1; // the first iteration with a forward
    int64_t workEnd = 0; // after the last event of any phase: what follows is teardown
    mutable size_t lastIteration = 0; // the iteration iterationOf found last
    std::vector<size_t> persistentBefore{}; // blocks alive before the trace and to its end, no hint

    // seg.iterationOf, answered without a search when the event is in the iteration found
    // last: allocations come in order, and most are freed in the iteration that made them.
    int iterationOf(int64_t e) const
    {
        const std::vector<Iteration>& its = seg.iterations;
        if (lastIteration < its.size()) {
            const Iteration& it = its[lastIteration];
            if (e >= it.firstEvent && e <= it.lastEvent &&
                (lastIteration + 1 == its.size() || its[lastIteration + 1].firstEvent > e))
                return it.index;
        }
        const int found = seg.iterationOf(e);
        if (found >= 0 && static_cast<size_t>(found) < its.size() && its[static_cast<size_t>(found)].index == found)
            lastIteration = static_cast<size_t>(found);
        return found;
    }

    // Kept until training is over: never freed, or freed only in the teardown after the last
    // phase (a program that frees its model and clears cuBLAS workspaces before it dumps).
    bool keptToEnd(const Allocation& a) const { return releasedAt(a) >= workEnd; }

    int64_t n() const { return d.eventCount; }

    // The event at which the program let go of an allocation; n when never.
    int64_t releasedAt(const Allocation& a) const
    {
        if (a.freeRequestedEvent.valid())
            return a.freeRequestedEvent.value;
        return a.freeEvent.valid() ? a.freeEvent.value : n();
    }
    Phase phaseAt(int64_t e) const { return e < n() ? seg.eventPhase[static_cast<size_t>(e)] : Phase::Other; }
    // Forward starts strictly inside (from, to).
    int64_t forwardsWithin(int64_t from, int64_t to) const
    {
        auto lo = std::upper_bound(forwardStarts.begin(), forwardStarts.end(), from);
        auto hi = std::lower_bound(forwardStarts.begin(), forwardStarts.end(), to);
        return hi > lo ? hi - lo : 0;
    }
    bool inPreForward(int64_t e) const
    {
        const int it = iterationOf(e);
        if (it < 0)
            return false;
        const int64_t ff = seg.firstForward[static_cast<size_t>(it)];
        return ff >= 0 && e < ff && seg.eventPhase[static_cast<size_t>(e)] == Phase::Other;
    }

    void run()
    {
        const size_t count = d.allocations.size();
        out.allocationCategory.assign(count, Category::Other);
        out.allocationPhase.assign(count, Phase::Other);
        out.allocationIteration.assign(count, -1);
        for (size_t j = 0; j < seg.iterations.size(); ++j) {
            const int64_t ff = seg.firstForward[j];
            if (ff >= 0) {
                forwardStarts.push_back(ff);
                if (firstFullIteration < 0)
                    firstFullIteration = static_cast<int>(j);
            }
        }
        std::sort(forwardStarts.begin(), forwardStarts.end());
        workEnd = n();
        while (workEnd > 0 && seg.eventPhase[static_cast<size_t>(workEnd - 1)] == Phase::Other)
            --workEnd;
        if (workEnd == 0)
            workEnd = n();

        const std::vector<uint8_t> graphKept = keptGraphs();
        bool stepState = false; // the optimizer created state inside the trace
        bool anyStep = false;
        for (Phase p : seg.eventPhase)
            anyStep = anyStep || p == Phase::OptimizerStep;

        for (size_t j = 0; j < count; ++j) {
            const Allocation& a = d.allocations[j];
            if (a.preexisting())
                continue;
            const int64_t i = a.allocEvent.value;
            const Phase pa = seg.eventPhase[static_cast<size_t>(i)];
            const int it = iterationOf(i);
            out.allocationPhase[j] = pa;
            out.allocationIteration[j] = it;
            const Category c = categorizeTraced(a, pa, it, graphKept);
            stepState = stepState || c == Category::OptimizerState;
            out.allocationCategory[j] = c;
        }
        categorizePreexisting(anyStep && !stepState);
        demoteWorkspacesNamedGradients();
        preexistingWorkspaces();
        dataMadeBeforeTheModelRuns();
        ddpBucketsAreGradients();
    }

    // DDP's flat gradient buckets (a c10d::Reducer frame, collective_memory.h) hold the
    // gradients the ranks all-reduce: GRADIENT, whatever their phase and lifetime made them
    // (built in the first backward and kept to the end with sizes no parameter has, they
    // read as temporaries). The communication sub-band still names them as buckets.
    void ddpBucketsAreGradients()
    {
        std::unordered_map<decltype(StackId{}.value), bool> bucketStack;
        for (size_t j = 0; j < d.allocations.size(); ++j) {
            const StackId stack = d.allocations[j].stack;
            if (!stack.valid())
                continue;
            auto [found, fresh] = bucketStack.try_emplace(stack.value, false);
            if (fresh)
                found->second = classifyCollectiveStack(snap, stack) == CollectiveKind::GradientBucket;
            if (found->second)
                out.allocationCategory[j] = Category::Gradient;
        }
    }

    // A tensor the program's own code made before the first iteration (no torch.nn, no
    // library on its stack) that no gradient matches in size is data, not a weight: a fixed
    // batch made once and reused every step. Only judged in training, where gradients say
    // which sizes the weights have.
    void dataMadeBeforeTheModelRuns()
    {
        std::vector<uint64_t> gradientSizes;
        for (size_t j = 0; j < d.allocations.size(); ++j)
            if (out.allocationCategory[j] == Category::Gradient)
                gradientSizes.push_back(d.allocations[j].size);
        if (gradientSizes.empty())
            return;
        std::sort(gradientSizes.begin(), gradientSizes.end());
        for (size_t j = 0; j < d.allocations.size(); ++j) {
            const Allocation& a = d.allocations[j];
            if (a.preexisting() || out.allocationCategory[j] != Category::Parameter || out.allocationIteration[j] >= 0 ||
                out.allocationPhase[j] != Phase::Other)
                continue;
            const uint16_t h = hints.of(a.stack);
            if (!(h & kHintFramed) || (h & (kHintModelBuild | kHintLibraryPy)))
                continue;
            if (!std::binary_search(gradientSizes.begin(), gradientSizes.end(), a.size))
                out.allocationCategory[j] = Category::Input;
        }
    }

    // Per iteration without a backward: do so many of its forward's allocations outlive the
    // forward that an autograd graph (not just the outputs) is being kept?
    std::vector<uint8_t> keptGraphs() const
    {
        const size_t m = seg.iterations.size();
        std::vector<int64_t> made(m, 0), outlived(m, 0);
        for (const Allocation& a : d.allocations) {
            if (a.preexisting())
                continue;
            const int64_t i = a.allocEvent.value;
            if (seg.eventPhase[static_cast<size_t>(i)] != Phase::Forward)
                continue;
            const int it = iterationOf(i);
            if (it < 0 || seg.iterationHasBackward[static_cast<size_t>(it)])
                continue;
            ++made[static_cast<size_t>(it)];
            const int64_t r = releasedAt(a);
            if (r >= n() || phaseAt(r) != Phase::Forward || iterationOf(r) != it)
                ++outlived[static_cast<size_t>(it)];
        }
        std::vector<uint8_t> kept(m, 0);
        for (size_t j = 0; j < m; ++j)
            kept[j] = outlived[j] >= 8 && outlived[j] * 10 >= made[j];
        return kept;
    }

    Category categorizeTraced(const Allocation& a, Phase pa, int it, const std::vector<uint8_t>& graphKept) const
    {
        const int64_t i = a.allocEvent.value;
        const uint16_t h = hints.of(a.stack);
        if (h & kHintWorkspace)
            return Category::Intermediate;
        const int64_t r = releasedAt(a);
        const bool alive = r >= n();
        const Phase pr = phaseAt(r);
        const int itr = alive ? -1 : iterationOf(r);
        const bool outlives = alive || pr != pa || itr != it;
        switch (pa) {
        case Phase::Other: {
            const int64_t spans = forwardsWithin(i, r);
            if (it < 0) {
                if (spans >= 1)
                    return Category::Parameter;
                if (seg.iterations.empty() && alive && (h & kHintModelBuild))
                    return Category::Parameter;
                return Category::Intermediate;
            }
            const int64_t ff = seg.firstForward[static_cast<size_t>(it)];
            // made after the forward began (the loss in training_step or a custom loop) and
            // freed by the same iteration's backward: saved for it, an activation
            if (ff >= 0 && i >= ff && !alive && pr == Phase::Backward && itr == it)
                return Category::Activation;
            if (ff < 0 || i >= ff || spans < 1)
                return Category::Intermediate;
            if (it == firstFullIteration && keptToEnd(a) && spans >= 2 && spans == static_cast<int64_t>(forwardStarts.size()))
                return Category::Parameter;
            return Category::Input;
        }
        case Phase::Forward:
            if (!alive && pr == Phase::Backward)
                return Category::Activation;
            // zero_grad frees nothing but gradients: a compiled backward (Inductor) reused
            // this dead forward buffer for a .grad
            if (!alive && pr == Phase::ZeroGrad)
                return Category::Gradient;
            if (it >= 0 && !seg.iterationHasBackward[static_cast<size_t>(it)] && graphKept[static_cast<size_t>(it)] && outlives)
                return Category::Activation;
            return Category::Intermediate;
        case Phase::Backward: return outlives ? Category::Gradient : Category::Intermediate;
        case Phase::OptimizerStep: return outlives ? Category::OptimizerState : Category::Intermediate;
        case Phase::ZeroGrad: return Category::Intermediate;
        }
        return Category::Intermediate;
    }

    void categorizePreexisting(bool stateBeforeTrace)
    {
        std::vector<size_t> persistent;
        for (size_t j = 0; j < d.allocations.size(); ++j) {
            const Allocation& a = d.allocations[j];
            if (!a.preexisting())
                continue;
            const uint16_t h = hints.of(a.stack);
            const int64_t r = releasedAt(a);
            Category c = Category::Other;
            if (r < n()) {
                switch (phaseAt(r)) {
                case Phase::ZeroGrad: c = Category::Gradient; break;
                case Phase::Backward: c = Category::Activation; break;
                case Phase::Other: c = inPreForward(r) ? Category::Input : Category::Other; break;
                default: c = Category::Other; break;
                }
            } else if (h & kHintOptimizer) {
                c = Category::OptimizerState;
            } else if (h & kHintModelBuild) {
                c = Category::Parameter;
            } else if (!forwardStarts.empty()) {
                persistent.push_back(j);
                c = Category::Parameter;
            }
            out.allocationCategory[j] = c;
        }
        if (persistent.empty())
            return;
        std::map<uint64_t, int64_t> gradients; // size -> most gradients of that size in one iteration
        {
            std::map<std::pair<int, uint64_t>, int64_t> perIteration;
            for (size_t j = 0; j < d.allocations.size(); ++j)
                if (out.allocationCategory[j] == Category::Gradient && !d.allocations[j].preexisting())
                    ++perIteration[{out.allocationIteration[j], d.allocations[j].size}];
            for (const auto& [key, k] : perIteration)
                gradients[key.second] = std::max(gradients[key.second], k);
        }
        persistentBefore = persistent;
        if (!stateBeforeTrace)
            return;
        // The optimizer steps in the trace but never allocates its state: the state existed
        // before, alongside the parameters, and each parameter has one gradient of its size.
        std::map<uint64_t, int64_t> taken;
        for (size_t j : persistent) {
            const uint64_t size = d.allocations[j].size;
            if (out.allocationCategory[j] != Category::Parameter)
                continue;
            auto g = gradients.find(size);
            if (g == gradients.end())
                continue;
            if (taken[size]++ >= g->second)
                out.allocationCategory[j] = Category::OptimizerState;
        }
    }

    // A block alive before the trace and to its end, made by no model-building code, of a
    // size no gradient of the trace has: a library's workspace (cuBLAS's 32 MiB, made by a
    // forward's first product), not a parameter (a precision what-if would halve it).
    void preexistingWorkspaces()
    {
        std::set<uint64_t> gradients;
        for (size_t j = 0; j < d.allocations.size(); ++j)
            if (out.allocationCategory[j] == Category::Gradient && !d.allocations[j].preexisting())
                gradients.insert(d.allocations[j].size);
        if (gradients.empty())
            return;
        for (size_t j : persistentBefore)
            if (out.allocationCategory[j] == Category::Parameter && !gradients.count(d.allocations[j].size))
                out.allocationCategory[j] = Category::Intermediate;
    }

    // A backward allocation alive at the end whose size no parameter has is a workspace or
    // a cache of the autograd thread (e.g. its cuBLAS workspace), not a .grad.
    void demoteWorkspacesNamedGradients()
    {
        std::vector<uint64_t> paramSizes;
        for (size_t j = 0; j < d.allocations.size(); ++j)
            if (out.allocationCategory[j] == Category::Parameter)
                paramSizes.push_back(d.allocations[j].size);
        std::sort(paramSizes.begin(), paramSizes.end());
        for (size_t j = 0; j < d.allocations.size(); ++j) {
            const Allocation& a = d.allocations[j];
            if (out.allocationCategory[j] == Category::Gradient && !a.preexisting() && keptToEnd(a) &&
                !std::binary_search(paramSizes.begin(), paramSizes.end(), a.size))
                out.allocationCategory[j] = Category::Intermediate;
        }
    }
};

void buildCurves(const DeviceReplay& d, DeviceAttribution& out)
{
    // One pass over the events writing every curve in order: an event changes at most the
    // category of the allocation it allocates or frees (eventAllocation), except an alloc
    // over a still-live address, which also closes the older block (replay's doubleAllocs):
    // those few closings are gathered first.
    const size_t n = static_cast<size_t>(d.eventCount);
    out.categoryAtStart.fill(0);
    std::vector<std::pair<int64_t, size_t>> closings; // (event, allocation) freed by another's alloc
    for (size_t j = 0; j < d.allocations.size(); ++j) {
        const Allocation& a = d.allocations[j];
        if (a.preexisting())
            out.categoryAtStart[idx(out.allocationCategory[j])] += static_cast<int64_t>(a.size);
    }
    if (d.doubleAllocs > 0) {
        for (size_t j = 0; j < d.allocations.size(); ++j) {
            const EventIndex f = d.allocations[j].freeEvent;
            if (f.valid() && d.eventAllocation[static_cast<size_t>(f.value)].value != static_cast<int32_t>(j))
                closings.emplace_back(f.value, j);
        }
        std::sort(closings.begin(), closings.end());
    }
    for (size_t c = 0; c < kCategoryCount; ++c) {
        out.categoryBytes[c].clear();
        out.categoryBytes[c].reserve(n);
    }
    std::array<int64_t, kCategoryCount> acc = out.categoryAtStart;
    const Allocation* const allocations = d.allocations.data();
    const AllocationId* const eventAllocation = d.eventAllocation.data();
    const Category* const category = out.allocationCategory.data();
    size_t nextClosing = 0;
    // A block of events at a time into a small buffer (in cache), then each curve encodes
    // the block in one pass (CompactCurve::append).
    constexpr size_t kChunk = CompactCurve::kBlock;
    std::vector<int64_t> chunk(kCategoryCount * kChunk);
    for (size_t from = 0; from < n; from += kChunk) {
        const size_t count = std::min(kChunk, n - from);
        for (size_t k = 0; k < count; ++k) {
            const size_t i = from + k;
            const AllocationId id = eventAllocation[i];
            if (id.valid()) {
                const Allocation& a = allocations[id.value];
                const int64_t size = static_cast<int64_t>(a.size);
                if (a.allocEvent.value == static_cast<int64_t>(i))
                    acc[idx(category[id.value])] += size;
                else if (a.freeEvent.value == static_cast<int64_t>(i))
                    acc[idx(category[id.value])] -= size;
            }
            while (nextClosing < closings.size() && closings[nextClosing].first == static_cast<int64_t>(i)) {
                const size_t j = closings[nextClosing++].second;
                acc[idx(category[j])] -= static_cast<int64_t>(allocations[j].size);
            }
            for (size_t c = 0; c < kCategoryCount; ++c)
                chunk[c * kChunk + k] = acc[c];
        }
        for (size_t c = 0; c < kCategoryCount; ++c)
            out.categoryBytes[c].append(chunk.data() + c * kChunk, count);
    }
}

std::array<int64_t, kCategoryCount> splitAt(const DeviceAttribution& a, int64_t event)
{
    std::array<int64_t, kCategoryCount> s{};
    for (size_t c = 0; c < s.size(); ++c)
        s[c] = event < 0 ? a.categoryAtStart[c] : a.categoryBytes[c][static_cast<size_t>(event)];
    return s;
}

} // namespace

DeviceAttribution attributeDevice(const Snapshot& snapshot, const DeviceReplay& d)
{
    DeviceAttribution out;
    out.device = d.device;
    // The curves' pages are faulted in on the other core while the phases and categories
    // are worked out.
    Prefaulter prefault;
    for (auto& curve : out.categoryBytes) {
        curve.reserve(static_cast<size_t>(d.eventCount));
        const auto [data, bytes] = curve.narrowBuffer();
        prefault.add(data, bytes);
    }
    prefault.start();
    const DeviceTrace* trace = snapshot.device(d.device);
    StackHints hints(snapshot);
    PhaseSegmentation seg = trace ? segmentPhases(snapshot, *trace, hints, d.truncated || d.unmatchedFrees > 0)
                                  : PhaseSegmentation{};
    seg.eventPhase.resize(static_cast<size_t>(d.eventCount), Phase::Other);

    Categorizer{snapshot, d, seg, hints, out, {}, -1}.run();
    prefault.join();
    buildCurves(d, out);

    for (Iteration& it : seg.iterations) {
        const int64_t best = static_cast<int64_t>(
            d.requested.firstMaxIndex(static_cast<size_t>(it.firstEvent), static_cast<size_t>(it.lastEvent) + 1));
        it.peak.bytes = d.requested[static_cast<size_t>(best)];
        it.peak.event = EventIndex{best};
        it.peak.timeUs = trace ? trace->events.timeUs[static_cast<size_t>(best)] : 0;
        it.peak.phase = seg.eventPhase[static_cast<size_t>(best)];
        it.peak.byCategory = splitAt(out, best);
    }
    const int64_t peak = d.peakRequested.event.valid() ? d.peakRequested.event.value : -1;
    out.peakByCategory = splitAt(out, peak);
    out.peakPhase = peak >= 0 ? seg.eventPhase[static_cast<size_t>(peak)] : Phase::Other;
    out.iterations = std::move(seg.iterations);
    out.eventPhase = std::move(seg.eventPhase);
    return out;
}

std::shared_ptr<const Attribution> attribute(std::shared_ptr<const Replay> replay)
{
    auto a = std::make_shared<Attribution>();
    a->replay = replay;
    a->devices.reserve(replay->devices.size());
    for (const DeviceReplay& d : replay->devices)
        a->devices.push_back(attributeDevice(*replay->snapshot, d));
    return a;
}

} // namespace memscope
