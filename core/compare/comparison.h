#pragma once

#include "analysis/analysis.h"
#include "query/point_report.h"

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace memscope {

/*
 * Two recordings of the same training loop, side by side: what the change (a batch size,
 * checkpointing, mixed precision, a library upgrade) did to the memory.
 *
 * The normalised axis. Wall-clock time does not line up: a run at another batch size runs
 * at another speed and starts at another moment. Iterations and phases do. Iteration k's
 * phases occupy fixed slots of [k, k + 1):
 *
 *     plain code (the batch)  [k + 0.00, k + 0.05)
 *     forward                 [k + 0.05, k + 0.45)
 *     backward                [k + 0.45, k + 0.85)
 *     optimizer step          [k + 0.85, k + 0.95)
 *     zero_grad               [k + 0.95, k + 1.00)
 *
 * and the events of each slot spread evenly over it by their order. A phase range that comes
 * after a later slot in its iteration (the loss's own code after the backward began) joins
 * the slot reached so far, so the position never goes back. Events before the first
 * iteration (building the model) fill [-1, 0); events after the last one fill [n, n + 1).
 * Both runs therefore put iteration k's backward at the same x.
 *
 * Curves. Each run's requested curve and per-category curves are cut into bins of equal
 * width on that axis; a bin holds the state after the event of its highest requested bytes
 * (so no peak is lost however many events fall into one bin), or, when no event falls in it,
 * the state carried from the bin before. B − A is taken bin by bin.
 *
 * Figures. The global peak of each run is `buildPointReport(…, peakEvent(…))`, the very
 * function report.json is written from, so every delta equals the difference of the two
 * files' own report.json figures to the byte. A phase's peak is the highest requested bytes
 * over the events of that phase, with the categories `memscope report --at` would show there.
 *
 * Call sites. A stack is keyed by its frames as text (file base name, line, function; one
 * per line), which matches across files; sites of one user line (every activation of a
 * transformers model comes from the loop's `model(x)`) differ by their library frames and
 * are named by their op and module path besides the user frames. At the peak, each key's live bytes in A and in B;
 * its allocations are paired across the runs by size (an allocation whose size the other
 * run's site also has is "matched"), so a site whose allocations only changed size shows as
 * grown, not as removed and added. Over the whole trace, each key's bytes × lifetime on the
 * normalised axis (byte-iterations), so a tensor that now lives through the backward weighs
 * more even when the peak did not move.
 */

// Slots of one iteration on the normalised axis, in order.
inline constexpr std::array<Phase, 5> kAlignedPhaseOrder{Phase::Other, Phase::Forward, Phase::Backward, Phase::OptimizerStep,
                                                         Phase::ZeroGrad};
// Where phase p's slot starts within an iteration, and its width.
double alignedPhaseOffset(Phase p);
double alignedPhaseWidth(Phase p);

// A position on the normalised axis for every event of one device.
struct AlignedAxis {
    std::vector<double> position; // per event, non-decreasing
    int iterations = 0; // [0, iterations) are iterations; [-1, 0) setup; [n, n+1) tail
    double begin = -1; // the axis covers [begin, end)
    double end = 0;
};
AlignedAxis alignEvents(const DeviceAttribution& attribution, int64_t eventCount);

// Where one phase of a run peaked.
struct PhasePeak {
    Phase phase = Phase::Other;
    bool present = false; // the run has events of this phase
    int64_t bytes = 0;
    int64_t event = -1;
    int iteration = -1;
    std::array<int64_t, kCategoryCount> byCategory{};
};

// One run of the comparison: its global peak exactly as report.json has it, and its phases' peaks.
struct ComparedRun {
    std::string name; // the file
    size_t deviceIndex = 0;
    int device = 0;
    int64_t events = 0;
    int iterations = 0;
    PointReport peak; // buildPointReport at peakEvent: report.json's "peak"
    double peakPosition = 0; // the peak on the normalised axis
    std::array<PhasePeak, kPhaseCount> phases; // by static_cast<size_t>(Phase)
    // Bytes allocated in each phase over the whole trace, by category: where memory is made
    // (checkpointing moves activations' bytes from the forward to the backward's recomputation).
    std::array<std::array<int64_t, kCategoryCount>, kPhaseCount> allocated{}; // [phase][category]
    int64_t allocatedIn(Phase p) const;
    std::shared_ptr<const Analysis> analysis;
};

enum class SiteChange { Added, Removed, Grown, Shrunk, Same };
const char* siteChangeName(SiteChange c); // "added", "removed", "grown", "shrunk", "same"

struct CallSiteDelta {
    std::string key; // the stack as text, one frame a line
    std::string summary; // the user frames, innermost first (FrameClassifier::stackSummary)
    std::string topFrame; // the innermost user frame, or the library summary
    // What tells apart sites of one user line (the training loop's `model(x)`): the
    // operation and the nn.Module path of its stack (FrameClassifier::opText, moduleText).
    std::string op;
    std::string module;
    Category category = Category::Other; // holding most of its bytes (B's, else A's)
    int64_t bytesA = 0, bytesB = 0; // live at each run's peak
    int64_t countA = 0, countB = 0;
    int64_t matched = 0; // allocations at the peak paired across the runs by equal size
    double byteIterationsA = 0, byteIterationsB = 0; // over the whole trace: size × lifetime on the axis
    SiteChange change = SiteChange::Same; // by bytes at the peak
    int64_t delta() const { return bytesB - bytesA; }
    double lifetimeDelta() const { return byteIterationsB - byteIterationsA; }
};

// Both runs' curves on one axis: bin i covers [begin + i·width, begin + (i+1)·width).
struct AlignedCurves {
    double begin = -1;
    double width = 0;
    size_t bins = 0;
    std::array<std::vector<int64_t>, 2> total; // [run][bin]
    std::array<std::array<std::vector<int64_t>, kCategoryCount>, 2> byCategory; // [run][category][bin]
    double x(size_t bin) const { return begin + (static_cast<double>(bin) + 0.5) * width; }
    int64_t deltaTotal(size_t bin) const { return total[1][bin] - total[0][bin]; }
    int64_t deltaCategory(Category c, size_t bin) const
    {
        return byCategory[1][static_cast<size_t>(c)][bin] - byCategory[0][static_cast<size_t>(c)][bin];
    }
};

struct Comparison {
    std::array<ComparedRun, 2> runs; // A, B
    AlignedCurves curves;
    std::vector<CallSiteDelta> sites; // every key seen at either peak or in the trace, largest |Δ at peak| first

    const ComparedRun& a() const { return runs[0]; }
    const ComparedRun& b() const { return runs[1]; }
    int64_t peakDelta() const { return b().peak.requested - a().peak.requested; }
    int64_t categoryDelta(Category c) const
    {
        return b().peak.byCategory[static_cast<size_t>(c)] - a().peak.byCategory[static_cast<size_t>(c)];
    }
    // Sites by |Δ bytes × lifetime|, largest first (indexes into `sites`).
    std::vector<size_t> sitesByLifetime() const;
};

struct CompareOptions {
    std::optional<int> device; // the same ordinal in both; focusDevice() of each when empty
    int binsPerIteration = 200;
    size_t maxBins = 20000; // long runs get fewer bins per iteration (each keeps its highest event)
};

// Both analyses must have reached AnalysisStage::Attributed. Throws std::invalid_argument
// naming the file when a device is missing.
std::shared_ptr<const Comparison> compareRuns(std::shared_ptr<const Analysis> a, std::shared_ptr<const Analysis> b,
                                              const CompareOptions& options = {});

} // namespace memscope
