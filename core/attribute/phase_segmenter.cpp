#include "attribute/phase_segmenter.h"

#include "attribute/range_cursor.h"

#include "common/huge_pages.h"
#include "snapshot/annotation_spans.h"

#include <algorithm>
#include <array>
#include <limits>

namespace memscope {

namespace {

// What an event's own evidence says, before context is applied.
// Silent: an event of a kind the recording never gives frames (context="alloc" records
// none for frees); it takes the phase around it and says nothing itself.
enum class Raw : uint8_t { User, Frameless, Silent, Forward, Backward, Optimizer, ZeroGrad };

Phase phaseOf(Raw r)
{
    switch (r) {
    case Raw::Forward: return Phase::Forward;
    case Raw::Backward: return Phase::Backward;
    case Raw::Optimizer: return Phase::OptimizerStep;
    case Raw::ZeroGrad: return Phase::ZeroGrad;
    default: return Phase::Other;
    }
}

struct TimeRange {
    int64_t start = 0;
    int64_t end = 0;
    Raw kind = Raw::User;
};

struct AnnotationRanges {
    // optimizer step / zero_grad, and the markers mode's forward / backward, sorted by start
    std::vector<TimeRange> steps;
    bool optimizerRanges = false; // any optimizer step or zero_grad among them
    std::vector<int64_t> profilerSteps; // ProfilerStep#N start times, sorted
};

AnnotationRanges readAnnotations(const Snapshot& s, int device)
{
    AnnotationRanges out;
    bool any = false;
    for (const Annotation& a : s.annotations)
        any = any || a.device == device;
    for (const Annotation& a : s.annotations)
        if ((!any || a.device == device) && a.stage == AnnotationStage::Start && s.str(a.name).starts_with("ProfilerStep#"))
            out.profilerSteps.push_back(a.timeUs);
    for (const AnnotationSpan& span : annotationSpans(s, device)) {
        const std::string_view name = s.str(span.name);
        if (name.starts_with("Optimizer.step#"))
            out.steps.push_back({span.startUs, span.endUs, Raw::Optimizer});
        else if (name.starts_with("Optimizer.zero_grad#") || name == "memscope.zero_grad")
            out.steps.push_back({span.startUs, span.endUs, Raw::ZeroGrad});
        else if (name == "memscope.forward") // the agent's markers mode (agent/memscope_agent/markers.py)
            out.steps.push_back({span.startUs, span.endUs, Raw::Forward});
        else if (name == "memscope.backward")
            out.steps.push_back({span.startUs, span.endUs, Raw::Backward});
    }
    for (const TimeRange& r : out.steps)
        out.optimizerRanges = out.optimizerRanges || r.kind == Raw::Optimizer || r.kind == Raw::ZeroGrad;
    std::sort(out.steps.begin(), out.steps.end(), [](const TimeRange& x, const TimeRange& y) { return x.start < y.start; });
    std::sort(out.profilerSteps.begin(), out.profilerSteps.end());
    return out;
}

} // namespace

int PhaseSegmentation::iterationOf(int64_t i) const
{
    auto it = std::upper_bound(iterations.begin(), iterations.end(), i,
                               [](int64_t v, const Iteration& x) { return v < x.firstEvent; });
    if (it == iterations.begin())
        return -1;
    --it;
    return i <= it->lastEvent ? it->index : -1;
}

PhaseSegmentation segmentPhases(const Snapshot& snapshot, const DeviceTrace& trace, StackHints& hints, bool opensMidRun)
{
    const EventTable& ev = trace.events;
    const int64_t n = static_cast<int64_t>(ev.count());
    PhaseSegmentation out;
    assignHuge(out.eventPhase, static_cast<size_t>(n), Phase::Other);
    if (n == 0)
        return out;

    const AnnotationRanges ann = ev.hasTime ? readAnnotations(snapshot, trace.device) : AnnotationRanges{};

    // 1. Each event's own evidence: annotations by time, then its frames.
    // Frameless events are an autograd thread's when the trace has frames elsewhere and
    // either shows autograd at work somewhere (Tensor.backward's seed gradient, engine
    // frames) or has them in bulk; a few stray ones in an inference run are not a backward.
    int64_t framed = 0, autograd = 0;
    std::array<int64_t, 3> framedByKind{}, countByKind{}; // alloc, free, segment
    auto kindOf = [](Action a) -> size_t {
        return a == Action::Alloc ? 0 : (a == Action::FreeRequested || a == Action::FreeCompleted) ? 1 : 2;
    };
    for (int64_t i = 0; i < n; ++i) {
        const size_t k = static_cast<size_t>(i);
        const StackId st = ev.stack[k];
        ++countByKind[kindOf(ev.action[k])];
        if (st.valid()) {
            ++framed;
            ++framedByKind[kindOf(ev.action[k])];
            if (hints.of(st) & kHintBackward)
                ++autograd;
        }
    }
    const bool framesSeen = framed > 0 && (autograd > 0 || (n - framed) * 10 >= n);
    std::array<bool, 3> silentKind{};
    for (size_t j = 0; j < 3; ++j)
        silentKind[j] = framesSeen && countByKind[j] > 0 && framedByKind[j] == 0;
    std::vector<Raw> raw;
    assignHuge(raw, static_cast<size_t>(n), Raw::User);
    std::vector<uint8_t> byRangeOnly; // the phase came from an annotated range, not the event's frames
    assignHuge(byRangeOnly, static_cast<size_t>(n), uint8_t{0});
    RangeCursor<TimeRange> rawRanges(ann.steps);
    for (int64_t i = 0; i < n; ++i) {
        const size_t k = static_cast<size_t>(i);
        const uint16_t h = hints.of(ev.stack[k]);
        const TimeRange* range = rawRanges.at(ev.timeUs[k]);
        const Raw annotated = range ? range->kind : Raw::User;
        // Phases nest: an optimizer's closure runs forward and backward inside step(), so
        // the step's range and frames say OptimizerStep only for what the optimizer itself
        // runs. Frameless events in the range are the autograd thread's, when frames exist;
        // silent ones are judged in context below.
        const bool closure = h & kHintClosure;
        const bool silent = !(h & kHintFramed) && silentKind[kindOf(ev.action[k])];
        const bool ownEvidence = (h & (kHintForward | kHintBackward)) || closure || (!(h & kHintFramed) && framesSeen) || silent;
        Raw r = Raw::User;
        if (annotated != Raw::User && !ownEvidence) {
            r = annotated;
            byRangeOnly[k] = 1;
        } else if ((h & kHintOptimizer) && !closure)
            r = Raw::Optimizer;
        else if (h & kHintZeroGrad)
            r = Raw::ZeroGrad;
        else if (h & kHintBackward)
            r = Raw::Backward;
        else if (h & kHintForward)
            r = Raw::Forward;
        else if (!(h & kHintFramed) && silentKind[kindOf(ev.action[k])])
            r = Raw::Silent;
        else if (!(h & kHintFramed) && framesSeen)
            r = Raw::Frameless; // no Python frames: an autograd engine thread
        raw[k] = r;
    }

    // 2. Context. Events of the program's own code (loss, input, clipping) take the phase
    //    around them only when that phase goes on after them; frameless events after a
    //    forward are the backward's.
    //    The loss of a closure (Lightning's automatic optimization: training_step inside
    //    optimizer.step(closure), then zero_grad, then backward) is followed by the step's
    //    own bookkeeping and a zero_grad before its backward: `nextAutograd` looks past those
    //    (zero_grad, and events whose phase only an annotated range gave), so the loss keeps
    //    the forward's phase there too.
    std::vector<Raw> next;
    assignHuge(next, static_cast<size_t>(n), Raw::User);
    std::vector<Raw> nextAutograd;
    assignHuge(nextAutograd, static_cast<size_t>(n), Raw::User);
    Raw upcoming = Raw::User;
    Raw upcomingAutograd = Raw::User;
    for (int64_t i = n - 1; i >= 0; --i) {
        const size_t k = static_cast<size_t>(i);
        next[k] = upcoming;
        nextAutograd[k] = upcomingAutograd;
        if (raw[k] != Raw::User && raw[k] != Raw::Silent) {
            upcoming = raw[k];
            if (raw[k] != Raw::ZeroGrad && !byRangeOnly[k])
                upcomingAutograd = raw[k];
        }
    }
    byRangeOnly.clear();
    byRangeOnly.shrink_to_fit();
    // A silent event inside an annotated range takes the range's phase, unless what set the
    // current phase lies inside that range too (a free inside a closure's forward or backward);
    // after an annotated step or zero_grad has ended, it is not in it any more (the program's
    // frees after the last step: teardown).
    Phase cur = Phase::Other;
    int64_t curSetAt = std::numeric_limits<int64_t>::min(); // time of the event that set cur
    RangeCursor<TimeRange> silentRanges(ann.steps);
    for (int64_t i = 0; i < n; ++i) {
        const size_t k = static_cast<size_t>(i);
        const Raw r = raw[k];
        if (r == Raw::Silent) {
            const TimeRange* range = silentRanges.at(ev.timeUs[k]);
            if (range && curSetAt < range->start)
                cur = phaseOf(range->kind);
            else if (!range && ann.optimizerRanges && (cur == Phase::OptimizerStep || cur == Phase::ZeroGrad))
                cur = Phase::Other;
        } else if (r == Raw::Frameless) {
            if (cur == Phase::Forward)
                cur = Phase::Backward;
        } else if (r == Raw::User) {
            const Raw nx = next[k];
            const bool autogradNext = nx == Raw::Backward || nx == Raw::Frameless;
            const Raw na = nextAutograd[k];
            const bool closureLoss = cur == Phase::Forward && (na == Raw::Backward || na == Raw::Frameless);
            const bool inStep = cur == Phase::OptimizerStep || cur == Phase::ZeroGrad;
            const bool keep = ((cur == Phase::Forward || cur == Phase::Backward) && autogradNext) || closureLoss ||
                              (inStep && phaseOf(nx) == cur);
            if (!keep)
                cur = Phase::Other;
        } else {
            cur = phaseOf(r);
            curSetAt = ev.hasTime ? ev.timeUs[k] : 0;
        }
        out.eventPhase[k] = cur;
    }
    raw.clear();
    raw.shrink_to_fit();
    next.clear();
    next.shrink_to_fit();
    nextAutograd.clear();
    nextAutograd.shrink_to_fit();

    // 3. Iterations.
    const auto& phase = out.eventPhase;
    bool hasOpt = false, hasBwd = false, hasZero = false;
    for (Phase p : phase) {
        hasOpt = hasOpt || p == Phase::OptimizerStep;
        hasBwd = hasBwd || p == Phase::Backward;
        hasZero = hasZero || p == Phase::ZeroGrad;
    }
    std::vector<int64_t> starts;
    if (!ann.profilerSteps.empty() && ev.hasTime) {
        size_t j = 0;
        for (int64_t i = 0; i < n && j < ann.profilerSteps.size(); ++i) {
            if (ev.timeUs[static_cast<size_t>(i)] >= ann.profilerSteps[j]) {
                if (starts.empty() || starts.back() != i)
                    starts.push_back(i);
                while (j < ann.profilerSteps.size() && ann.profilerSteps[j] <= ev.timeUs[static_cast<size_t>(i)])
                    ++j;
            }
        }
    } else {
        // A new iteration begins at a forward once the current one has completed its
        // characteristic phase: an optimizer step when the trace has any, else a backward,
        // else (inference) the program's own code between two forwards. It takes along the
        // plain events before that forward (loading the next batch).
        // An annotated step that allocated nothing (SGD after its first step) still closes
        // the iteration: its END time lies between the iteration's forward and this one.
        const bool stepping = hasOpt || hasZero || ann.optimizerRanges;
        // A zero_grad counts only once the iteration has a backward: Lightning zeroes the
        // gradients between the forward and the backward of its closure.
        std::vector<int64_t> stepEnds, zeroGradEnds;
        for (const TimeRange& r : ann.steps)
            if (r.kind == Raw::Optimizer || r.kind == Raw::ZeroGrad)
                (r.kind == Raw::Optimizer ? stepEnds : zeroGradEnds).push_back(r.end);
        std::sort(stepEnds.begin(), stepEnds.end());
        std::sort(zeroGradEnds.begin(), zeroGradEnds.end());
        auto endedBetween = [](const std::vector<int64_t>& ends, int64_t from, int64_t to) {
            auto it = std::upper_bound(ends.begin(), ends.end(), from);
            return it != ends.end() && *it <= to;
        };
        // Closures nest iterations too: every forward inside one annotated step (LBFGS
        // evaluates its closure several times) belongs to the iteration of that step, and an
        // iteration whose forward runs inside a step begins where the step begins (a closure's
        // zero_grad comes before its forward).
        std::vector<TimeRange> optimizerSteps;
        for (const TimeRange& r : ann.steps)
            if (r.kind == Raw::Optimizer)
                optimizerSteps.push_back(r);
        auto stepHolding = [&](int64_t t) -> int64_t {
            auto it = std::upper_bound(optimizerSteps.begin(), optimizerSteps.end(), t,
                                       [](int64_t v, const TimeRange& r) { return v < r.start; });
            for (int k = 0; k < 4 && it != optimizerSteps.begin(); ++k) {
                --it;
                if (t <= it->end)
                    return it - optimizerSteps.begin();
            }
            return -1;
        };
        // Without annotations the frames tell: a forward whose stack holds an optimizer frame
        // (kHintClosure) is a closure's, and it stays in the step until the program runs code
        // outside any optimizer again.
        bool inIteration = false, closed = false, backwardSeen = false, iterationNested = false, leftOptimizer = false;
        int64_t lastPhased = -1, forwardTime = 0, backwardTime = 0, iterationStep = -1;
        for (int64_t i = 0; i < n; ++i) {
            const Phase p = phase[static_cast<size_t>(i)];
            const int64_t t = ev.hasTime ? ev.timeUs[static_cast<size_t>(i)] : 0;
            const uint16_t h = hints.of(ev.stack[static_cast<size_t>(i)]);
            const int64_t step = p == Phase::Forward && ev.hasTime ? stepHolding(t) : -1;
            const bool nested = p == Phase::Forward && (step >= 0 || (h & kHintClosure));
            if (p == Phase::Forward && inIteration && !closed && stepping && ev.hasTime)
                closed = endedBetween(stepEnds, forwardTime, t) || (backwardSeen && endedBetween(zeroGradEnds, backwardTime, t));
            if (p == Phase::Forward && inIteration && closed && nested && iterationNested &&
                (step >= 0 ? step == iterationStep : iterationStep < 0 && !leftOptimizer))
                closed = false;
            if (p == Phase::Forward && (!inIteration || closed)) {
                int64_t s = inIteration ? lastPhased + 1 : i;
                if (nested) {
                    const int64_t floor = starts.empty() ? 0 : starts.back() + 1;
                    int64_t e = i;
                    if (step >= 0)
                        while (e > floor &&
                               ev.timeUs[static_cast<size_t>(e - 1)] >= optimizerSteps[static_cast<size_t>(step)].start)
                            --e;
                    else
                        while (e > floor && (hints.of(ev.stack[static_cast<size_t>(e - 1)]) & kHintOptimizer))
                            --e;
                    while (inIteration && e > floor && phase[static_cast<size_t>(e - 1)] == Phase::Other)
                        --e;
                    s = std::min(s, e);
                }
                starts.push_back(s);
                inIteration = true;
                closed = false;
                backwardSeen = false;
                leftOptimizer = false;
                forwardTime = t;
                iterationStep = step;
                iterationNested = nested;
            }
            if ((h & kHintFramed) && !(h & kHintOptimizer))
                leftOptimizer = true;
            if (inIteration) {
                if (p == Phase::Backward && !backwardSeen)
                    backwardTime = t;
                backwardSeen = backwardSeen || p == Phase::Backward;
                // zero_grad between a forward and its backward (Lightning's closure) ends nothing
                if (stepping)
                    closed = closed || p == Phase::OptimizerStep || (p == Phase::ZeroGrad && backwardSeen);
                else if (hasBwd)
                    closed = closed || p == Phase::Backward;
                else
                    closed = closed || p == Phase::Other;
            }
            if (p != Phase::Other)
                lastPhased = i;
        }
        if (!starts.empty()) {
            // The first iteration's batch is loaded after the model is built: walk back over
            // plain events that do not build the model.
            int64_t s = starts.front();
            while (s > 0) {
                const size_t k = static_cast<size_t>(s - 1);
                if (phase[k] != Phase::Other)
                    break;
                if (ev.action[k] == Action::Alloc && (hints.of(ev.stack[k]) & kHintModelBuild))
                    break;
                --s;
            }
            starts.front() = s;
        }
        // A trace that opens inside a step (dropped ring-buffer entries, recording started
        // mid-run) gets a partial first iteration for what comes before the first forward. A
        // backward before any forward says so; an optimizer before it only in a trace that
        // opens mid-run (Adagrad, for one, makes its state when it is constructed).
        const int64_t firstStart = starts.empty() ? n : starts.front();
        bool midStep = false;
        for (int64_t i = 0; i < firstStart && !midStep; ++i) {
            const Phase p = phase[static_cast<size_t>(i)];
            midStep = p == Phase::Backward || (opensMidRun && (p == Phase::OptimizerStep || p == Phase::ZeroGrad));
        }
        if (midStep)
            starts.insert(starts.begin(), 0);
    }

    out.iterations.reserve(starts.size());
    for (size_t j = 0; j < starts.size(); ++j) {
        Iteration it;
        it.index = static_cast<int>(j);
        it.firstEvent = starts[j];
        it.lastEvent = j + 1 < starts.size() ? starts[j + 1] - 1 : n - 1;
        int64_t ff = -1;
        bool bwd = false;
        for (int64_t i = it.firstEvent; i <= it.lastEvent; ++i) {
            const Phase p = phase[static_cast<size_t>(i)];
            if (p == Phase::Forward && ff < 0)
                ff = i;
            bwd = bwd || p == Phase::Backward;
            if (it.phases.empty() || it.phases.back().phase != p)
                it.phases.push_back(PhaseRange{p, i, i});
            else
                it.phases.back().lastEvent = i;
        }
        out.firstForward.push_back(ff);
        out.iterationHasBackward.push_back(bwd ? 1 : 0);
        out.iterations.push_back(std::move(it));
    }
    return out;
}

} // namespace memscope
