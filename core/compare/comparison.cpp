#include "compare/comparison.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <unordered_map>

namespace memscope {

namespace {

size_t slotOf(Phase p)
{
    for (size_t i = 0; i < kAlignedPhaseOrder.size(); ++i)
        if (kAlignedPhaseOrder[i] == p)
            return i;
    return 0;
}

constexpr std::array<double, 6> kSlotEdges{0.0, 0.05, 0.45, 0.85, 0.95, 1.0};

// Spreads events [first, last] evenly over [x0, x1).
void spread(std::vector<double>& pos, int64_t first, int64_t last, double x0, double x1)
{
    const int64_t n = last - first + 1;
    for (int64_t e = first; e <= last; ++e)
        pos[static_cast<size_t>(e)] = x0 + (x1 - x0) * static_cast<double>(e - first) / static_cast<double>(n);
}

bool haveCurves(const DeviceAttribution& a, int64_t eventCount)
{
    for (const auto& curve : a.categoryBytes)
        if (curve.size() != static_cast<size_t>(eventCount))
            return false;
    return true;
}

// One run's figures: report.json's peak, each phase's peak.
ComparedRun describeRun(const std::shared_ptr<const Analysis>& analysis, size_t index, const AlignedAxis& axis)
{
    const Attribution& attribution = *analysis->attribution;
    const DeviceReplay& d = analysis->replay->devices.at(index);
    const DeviceAttribution& a = attribution.devices.at(index);
    ComparedRun run;
    run.name = analysis->name;
    run.deviceIndex = index;
    run.device = d.device;
    run.events = d.eventCount;
    run.iterations = static_cast<int>(a.iterations.size());
    run.analysis = analysis;
    run.peak = buildPointReport(attribution, index, peakEvent(d));
    run.peakPosition = run.peak.event >= 0 ? axis.position[static_cast<size_t>(run.peak.event)] : axis.begin;

    for (size_t i = 0; i < d.allocations.size() && i < a.allocationPhase.size(); ++i) {
        if (d.allocations[i].preexisting())
            continue;
        const size_t c = i < a.allocationCategory.size() ? static_cast<size_t>(a.allocationCategory[i]) : kCategoryCount - 1;
        run.allocated[static_cast<size_t>(a.allocationPhase[i])][c] += static_cast<int64_t>(d.allocations[i].size);
    }

    std::array<int64_t, kPhaseCount> best;
    best.fill(-1);
    const size_t n = std::min(a.eventPhase.size(), d.requested.size());
    for (size_t e = 0; e < n; ++e) {
        const size_t p = static_cast<size_t>(a.eventPhase[e]);
        if (best[p] < 0 || d.requested[e] > d.requested[static_cast<size_t>(best[p])])
            best[p] = static_cast<int64_t>(e);
    }
    for (Phase p : kAllPhases) {
        PhasePeak& pp = run.phases[static_cast<size_t>(p)];
        pp.phase = p;
        const int64_t e = best[static_cast<size_t>(p)];
        if (e < 0)
            continue;
        const PointReport at = buildPointReport(attribution, index, e);
        pp.present = true;
        pp.bytes = at.requested;
        pp.event = at.event;
        pp.iteration = at.iteration;
        pp.byCategory = at.byCategory;
    }
    return run;
}

void binRun(const ComparedRun& run, const AlignedAxis& axis, AlignedCurves& curves, size_t side)
{
    const DeviceReplay& d = run.analysis->replay->devices.at(run.deviceIndex);
    const DeviceAttribution& a = run.analysis->attribution->devices.at(run.deviceIndex);
    const bool curvesOk = haveCurves(a, d.eventCount);
    constexpr int64_t kNone = std::numeric_limits<int64_t>::min();
    std::vector<int64_t> highest(curves.bins, kNone), last(curves.bins, kNone);
    for (int64_t e = 0; e < d.eventCount; ++e) {
        const double x = (axis.position[static_cast<size_t>(e)] - curves.begin) / curves.width;
        const size_t b = std::min(curves.bins - 1, static_cast<size_t>(std::max(0.0, std::floor(x))));
        if (highest[b] == kNone || d.requested[static_cast<size_t>(e)] > d.requested[static_cast<size_t>(highest[b])])
            highest[b] = e;
        last[b] = e;
    }
    curves.total[side].assign(curves.bins, 0);
    for (auto& c : curves.byCategory[side])
        c.assign(curves.bins, 0);
    int64_t carried = -1; // the state after this event holds until the next bin with events
    for (size_t b = 0; b < curves.bins; ++b) {
        const int64_t e = highest[b] != kNone ? highest[b] : carried;
        curves.total[side][b] = d.requestedAfter(e);
        for (size_t c = 0; c < kCategoryCount; ++c)
            curves.byCategory[side][c][b] = !curvesOk ? 0
                                            : e >= 0  ? a.categoryBytes[c][static_cast<size_t>(e)]
                                                      : a.categoryAtStart[c];
        if (last[b] != kNone)
            carried = last[b];
    }
}

bool isPythonFile(std::string_view file)
{
    return (file.size() > 3 && file.substr(file.size() - 3) == ".py") || (!file.empty() && file.front() == '<');
}

// The text key of each stack, cached: the same frames give the same key in any file. Only
// Python frames count, so a run recorded with stacks="all" (C++ frames too) matches one
// recorded with stacks="python"; a stack with no Python frame is keyed by its summary.
class StackKeys {
public:
    StackKeys(const Snapshot& snapshot, const FrameClassifier& frames) : m_snapshot(snapshot), m_frames(frames) { }
    const std::string& key(StackId stack)
    {
        auto [it, inserted] = m_keys.try_emplace(stack.value);
        if (!inserted || !stack.valid())
            return it->second;
        for (FrameId f : m_snapshot.stacks.frames(stack))
            if (isPythonFile(m_snapshot.str(m_snapshot.frames.frame(f).filename))) {
                it->second += m_frames.frameText(f);
                it->second += '\n';
            }
        if (it->second.empty())
            it->second = "native: " + m_frames.stackSummary(stack, 8);
        return it->second;
    }
    // The library's Python frames alone: the same library call made from another script
    // (train.py vs a copy of it with other line numbers). "" when there are none.
    std::string libraryKey(StackId stack) const
    {
        std::string out;
        if (!stack.valid())
            return out;
        for (FrameId f : m_snapshot.stacks.frames(stack))
            if (m_frames.isLibrary(f) && isPythonFile(m_snapshot.str(m_snapshot.frames.frame(f).filename))) {
                out += m_frames.frameText(f);
                out += '\n';
            }
        return out;
    }
    // The innermost Python frame (library or not), else the innermost frame.
    FrameId innermost(StackId stack) const
    {
        if (!stack.valid())
            return {};
        const auto frames = m_snapshot.stacks.frames(stack);
        for (FrameId f : frames)
            if (isPythonFile(m_snapshot.str(m_snapshot.frames.frame(f).filename)))
                return f;
        return frames.empty() ? FrameId{} : frames.front();
    }

private:
    const Snapshot& m_snapshot;
    const FrameClassifier& m_frames;
    std::unordered_map<int32_t, std::string> m_keys;
};

struct SiteSide {
    int64_t bytes = 0;
    int64_t count = 0;
    std::vector<int64_t> sizes; // at the peak
    std::array<int64_t, kCategoryCount> byCategory{};
    double byteIterations = 0;
    std::array<double, kCategoryCount> lifetimeByCategory{};
    StackId stack; // one stack of this key, for its summary
    bool seen = false;
};

struct SiteAcc {
    std::array<SiteSide, 2> side;
    std::string libraryKey; // the key's library frames alone, for a second chance to match
};

SiteChange changeOf(double a, double b, bool inA, bool inB)
{
    if (!inA && inB)
        return SiteChange::Added;
    if (inA && !inB)
        return SiteChange::Removed;
    return b > a ? SiteChange::Grown : b < a ? SiteChange::Shrunk : SiteChange::Same;
}

void collectSites(const ComparedRun& run, const AlignedAxis& axis, size_t side, std::unordered_map<std::string, SiteAcc>& sites)
{
    const Analysis& an = *run.analysis;
    const DeviceReplay& d = an.replay->devices.at(run.deviceIndex);
    const DeviceAttribution& a = an.attribution->devices.at(run.deviceIndex);
    StackKeys keys(*an.snapshot, *an.frames);

    for (const ActiveAllocation& l : run.peak.live) {
        SiteAcc& acc = sites[keys.key(l.stack)];
        if (acc.libraryKey.empty())
            acc.libraryKey = keys.libraryKey(l.stack);
        SiteSide& s = acc.side[side];
        s.bytes += l.size;
        s.count += 1;
        s.sizes.push_back(l.size);
        s.byCategory[static_cast<size_t>(l.category)] += l.size;
        s.stack = l.stack;
        s.seen = true;
    }

    // Bytes × lifetime per stack first (a stack id is cheap), then per key.
    std::unordered_map<int32_t, std::pair<double, std::array<double, kCategoryCount>>> byStack;
    for (size_t i = 0; i < d.allocations.size(); ++i) {
        const Allocation& al = d.allocations[i];
        const double from = al.allocEvent.valid() ? axis.position[static_cast<size_t>(al.allocEvent.value)] : axis.begin;
        const double to = al.freeEvent.valid() ? axis.position[static_cast<size_t>(al.freeEvent.value)] : axis.end;
        const double w = static_cast<double>(al.size) * std::max(0.0, to - from);
        auto& [total, cats] = byStack[al.stack.value];
        total += w;
        const Category c = i < a.allocationCategory.size() ? a.allocationCategory[i] : Category::Other;
        cats[static_cast<size_t>(c)] += w;
    }
    for (const auto& [stack, weights] : byStack) {
        SiteAcc& acc = sites[keys.key(StackId{stack})];
        if (acc.libraryKey.empty())
            acc.libraryKey = keys.libraryKey(StackId{stack});
        SiteSide& s = acc.side[side];
        s.byteIterations += weights.first;
        for (size_t c = 0; c < kCategoryCount; ++c)
            s.lifetimeByCategory[c] += weights.second[c];
        if (!s.seen) {
            s.stack = StackId{stack};
            s.seen = true;
        }
    }
}

int64_t matchedBySize(std::vector<int64_t> a, std::vector<int64_t> b)
{
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    int64_t n = 0;
    for (size_t i = 0, j = 0; i < a.size() && j < b.size();) {
        if (a[i] == b[j]) {
            ++n, ++i, ++j;
        } else if (a[i] < b[j]) {
            ++i;
        } else {
            ++j;
        }
    }
    return n;
}

template <typename T>
Category largest(const std::array<T, kCategoryCount>& v)
{
    return static_cast<Category>(std::max_element(v.begin(), v.end()) - v.begin());
}

} // namespace

int64_t ComparedRun::allocatedIn(Phase p) const
{
    int64_t sum = 0;
    for (int64_t v : allocated[static_cast<size_t>(p)])
        sum += v;
    return sum;
}

double alignedPhaseOffset(Phase p) { return kSlotEdges[slotOf(p)]; }
double alignedPhaseWidth(Phase p) { return kSlotEdges[slotOf(p) + 1] - kSlotEdges[slotOf(p)]; }

const char* siteChangeName(SiteChange c)
{
    switch (c) {
    case SiteChange::Added: return "added";
    case SiteChange::Removed: return "removed";
    case SiteChange::Grown: return "grown";
    case SiteChange::Shrunk: return "shrunk";
    case SiteChange::Same: break;
    }
    return "same";
}

AlignedAxis alignEvents(const DeviceAttribution& attribution, int64_t eventCount)
{
    AlignedAxis axis;
    const size_t n = static_cast<size_t>(std::max<int64_t>(0, eventCount));
    axis.position.assign(n, std::numeric_limits<double>::quiet_NaN());
    const auto& its = attribution.iterations;
    axis.iterations = static_cast<int>(its.size());
    if (its.empty()) {
        // Nothing to align by: the whole trace is one span.
        axis.begin = 0;
        axis.end = 1;
        if (n)
            spread(axis.position, 0, eventCount - 1, 0, 1);
        return axis;
    }
    axis.begin = -1;
    axis.end = static_cast<double>(its.size()) + 1;
    if (its.front().firstEvent > 0)
        spread(axis.position, 0, std::min(its.front().firstEvent, eventCount) - 1, -1, 0);
    for (size_t k = 0; k < its.size(); ++k) {
        const Iteration& it = its[k];
        // Each range joins its phase's slot, or the slot reached so far when that is later.
        std::array<int64_t, kAlignedPhaseOrder.size()> count{};
        std::vector<size_t> slotOfRange(it.phases.size());
        size_t reached = 0;
        for (size_t r = 0; r < it.phases.size(); ++r) {
            const PhaseRange& pr = it.phases[r];
            reached = std::max(reached, slotOf(pr.phase));
            slotOfRange[r] = reached;
            const int64_t first = std::max<int64_t>(pr.firstEvent, 0), last = std::min(pr.lastEvent, eventCount - 1);
            if (last >= first)
                count[reached] += last - first + 1;
        }
        std::array<int64_t, kAlignedPhaseOrder.size()> done{};
        const double base = static_cast<double>(k);
        for (size_t r = 0; r < it.phases.size(); ++r) {
            const PhaseRange& pr = it.phases[r];
            const size_t s = slotOfRange[r];
            const double x0 = base + kSlotEdges[s], w = kSlotEdges[s + 1] - kSlotEdges[s];
            const int64_t first = std::max<int64_t>(pr.firstEvent, 0), last = std::min(pr.lastEvent, eventCount - 1);
            for (int64_t e = first; e <= last; ++e)
                axis.position[static_cast<size_t>(e)] = x0 + w * static_cast<double>(done[s]++) / static_cast<double>(count[s]);
        }
    }
    const int64_t tail = its.back().lastEvent + 1;
    if (tail < eventCount)
        spread(axis.position, tail, eventCount - 1, axis.end - 1, axis.end);
    // Events no range covered (between iterations) keep the position before them; the axis
    // never goes back.
    double previous = axis.begin;
    for (double& x : axis.position) {
        if (std::isnan(x) || x < previous)
            x = previous;
        previous = x;
    }
    return axis;
}

std::vector<size_t> Comparison::sitesByLifetime() const
{
    std::vector<size_t> order(sites.size());
    for (size_t i = 0; i < order.size(); ++i)
        order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t x, size_t y) { return std::abs(sites[x].lifetimeDelta()) > std::abs(sites[y].lifetimeDelta()); });
    return order;
}

std::shared_ptr<const Comparison> compareRuns(std::shared_ptr<const Analysis> a, std::shared_ptr<const Analysis> b,
                                              const CompareOptions& options)
{
    auto result = std::make_shared<Comparison>();
    Comparison& c = *result;
    std::array<std::shared_ptr<const Analysis>, 2> runs{std::move(a), std::move(b)};
    std::array<AlignedAxis, 2> axes;
    for (size_t side = 0; side < 2; ++side) {
        const auto& an = runs[side];
        if (!an || !an->reached(AnalysisStage::Attributed) || !an->attribution)
            throw std::invalid_argument("compareRuns: " + (an ? an->name : std::string("a run")) + " is not attributed");
        const size_t index = an->deviceIndex(options.device);
        const DeviceReplay& d = an->replay->devices.at(index);
        axes[side] = alignEvents(an->attribution->devices.at(index), d.eventCount);
        c.runs[side] = describeRun(an, index, axes[side]);
    }

    c.curves.begin = std::min(axes[0].begin, axes[1].begin);
    const double end = std::max(axes[0].end, axes[1].end);
    const double span = end - c.curves.begin;
    const int per = static_cast<int>(std::clamp<double>(std::floor(static_cast<double>(options.maxBins) / span), 1.0,
                                                        static_cast<double>(std::max(1, options.binsPerIteration))));
    c.curves.bins = static_cast<size_t>(std::lround((end - c.curves.begin) * per));
    c.curves.width = 1.0 / per;
    for (size_t side = 0; side < 2; ++side)
        binRun(c.runs[side], axes[side], c.curves, side);

    std::unordered_map<std::string, SiteAcc> sites;
    for (size_t side = 0; side < 2; ++side)
        collectSites(c.runs[side], axes[side], side, sites);
    // Second chance: sites seen in one run only whose library frames equal those of sites
    // seen in the other run only are the same library call from renamed or moved user code.
    {
        std::unordered_map<std::string, std::array<std::vector<std::string>, 2>> oneSided;
        for (const auto& [key, acc] : sites)
            if (!acc.libraryKey.empty() && acc.side[0].seen != acc.side[1].seen)
                oneSided[acc.libraryKey][acc.side[0].seen ? 0 : 1].push_back(key);
        for (auto& [library, keys] : oneSided) {
            if (keys[0].empty() || keys[1].empty())
                continue;
            // Merged under B's first key (sorted, so the result does not depend on hashing).
            std::sort(keys[0].begin(), keys[0].end());
            std::sort(keys[1].begin(), keys[1].end());
            SiteAcc& into = sites[keys[1].front()];
            for (size_t side = 0; side < 2; ++side)
                for (const std::string& k : keys[side]) {
                    if (side == 1 && k == keys[1].front())
                        continue;
                    SiteSide& from = sites[k].side[side];
                    SiteSide& to = into.side[side];
                    to.bytes += from.bytes;
                    to.count += from.count;
                    to.sizes.insert(to.sizes.end(), from.sizes.begin(), from.sizes.end());
                    for (size_t c = 0; c < kCategoryCount; ++c) {
                        to.byCategory[c] += from.byCategory[c];
                        to.lifetimeByCategory[c] += from.lifetimeByCategory[c];
                    }
                    to.byteIterations += from.byteIterations;
                    if (!to.seen)
                        to.stack = from.stack;
                    to.seen = true;
                    sites.erase(k);
                }
        }
    }
    c.sites.reserve(sites.size());
    for (auto& [key, acc] : sites) {
        CallSiteDelta s;
        s.key = key;
        const SiteSide& sa = acc.side[0];
        const SiteSide& sb = acc.side[1];
        s.bytesA = sa.bytes;
        s.bytesB = sb.bytes;
        s.countA = sa.count;
        s.countB = sb.count;
        s.matched = matchedBySize(sa.sizes, sb.sizes);
        s.byteIterationsA = sa.byteIterations;
        s.byteIterationsB = sb.byteIterations;
        if (s.countA || s.countB)
            s.change = changeOf(static_cast<double>(s.bytesA), static_cast<double>(s.bytesB), s.countA > 0, s.countB > 0);
        else
            s.change = changeOf(s.byteIterationsA, s.byteIterationsB, sa.seen, sb.seen);
        // Named after the run that holds it at the peak (B first), else the one that has it.
        const size_t from = sb.count > 0 ? 1 : sa.count > 0 ? 0 : sb.seen ? 1 : 0;
        const SiteSide& named = acc.side[from];
        const FrameClassifier& frames = *c.runs[from].analysis->frames;
        const StackKeys keys(*c.runs[from].analysis->snapshot, frames);
        if (!named.stack.valid()) {
            s.summary = s.topFrame = "(no frames recorded)";
        } else {
            const FrameId top = frames.topUserFrame(named.stack);
            const FrameId inner = keys.innermost(named.stack);
            s.topFrame = top.valid() ? frames.frameText(top) : frames.librarySummary(named.stack);
            s.summary = frames.stackSummary(named.stack, 8);
            s.op = frames.opText(named.stack);
            s.module = frames.moduleText(named.stack);
            // Sites that differ only below the user's code (two library calls from one line)
            // are told apart by their innermost frame.
            if (inner.valid() && inner != top && frames.isLibrary(inner) && top.valid())
                s.summary = frames.frameText(inner) + " < " + s.summary;
        }
        s.category = named.bytes > 0 ? largest(named.byCategory) : largest(named.lifetimeByCategory);
        c.sites.push_back(std::move(s));
    }
    std::sort(c.sites.begin(), c.sites.end(), [](const CallSiteDelta& x, const CallSiteDelta& y) {
        const int64_t dx = std::abs(x.delta()), dy = std::abs(y.delta());
        if (dx != dy)
            return dx > dy;
        const double lx = std::abs(x.lifetimeDelta()), ly = std::abs(y.lifetimeDelta());
        if (lx != ly)
            return lx > ly;
        return x.key < y.key;
    });
    return result;
}

} // namespace memscope
