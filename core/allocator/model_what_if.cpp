#include "allocator/model_what_if.h"

#include "allocator/autocast_ops.h"
#include "allocator/conv_workspaces.h"
#include "allocator/shard_edit.h"
#include "allocator/reduction_buffers.h"
#include "common/thread_pool.h"
#include "snapshot/python_stacks.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

namespace memscope {

namespace {

constexpr uint64_t kWeightCopyMin = 16 << 10; // weights autocast casts (not norms' or biases')
constexpr uint64_t kRecurrentCallMin = 1 << 20; // a recurrent layer's line makes its output, not only B x H states
constexpr int64_t kSummedPartEvents = 64; // a gradient's last part is freed this soon after it is made
constexpr uint64_t kSummedGradientMin = 1 << 20; // (a bias's gradient's size is too common)
constexpr uint64_t kFloatInputMin = 1 << 20; // inputs that are float data, not token ids
// A second loop over blocks joins the one found where its blocks hold at least 1/8 of that loop's
// activation bytes (MobileViT's transformer layers, 1/4 of its inverted residuals'; from 1/5
// to 1/16 the rows are the same, with no limit DeepLabV3's, SegFormer's and ModernBERT's small
// loops join and 11 rows go out)
constexpr int64_t kUnionShare = 8;
constexpr uint64_t kCublasWorkspace = uint64_t(32) << 20; // cuBLAS's on Hopper (CUBLAS_WORKSPACE_CONFIG unset)
constexpr uint32_t kAnyBatch = UINT32_MAX; // m_perSequence: one sequence's at any recorded batch
constexpr size_t kCheckpointWindow = 2; // a checkpointed forward's tensor lives until the 2nd tensor after it
constexpr uint64_t kOutputFraction = 16; // a block's output is at least 1/16 of its largest activation
constexpr size_t kFormulaRun = 5; // tensors one line makes in a row: a hand-written element-wise formula

bool endsWith(std::string_view s, std::string_view tail)
{
    return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}
bool contains(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }

// torch's own Python files (an installed torch, or a source checkout's nn, utils, autograd, amp,
// optim and private modules): the frames a model's code calls into
bool isTorchFile(std::string_view file)
{
    return contains(file, "packages/torch/") || contains(file, "/torch/nn/") || contains(file, "/torch/utils/") ||
           contains(file, "/torch/autograd/") || contains(file, "/torch/amp/") || contains(file, "/torch/optim/") ||
           contains(file, "/torch/_");
}

uint64_t scaled(uint64_t size, double f)
{
    if (f == 1.0)
        return size;
    const double x = std::ceil(static_cast<double>(size) * f);
    return x < 1.0 ? 1 : static_cast<uint64_t>(x);
}

double weightBytes(Precision p) { return p == Precision::Bf16 || p == Precision::Fp16 ? 2.0 : 4.0; }
double activationBytes(Precision p, bool matmul)
{
    if (p == Precision::Fp32)
        return 4.0;
    if (!isAmp(p))
        return 2.0;
    return matmul ? 2.0 : 4.0;
}

// Inserts `extra` (each placed after every op whose event is <= its event) into `ops`.
void insertAfterEvents(std::vector<TraceOp>& ops, std::vector<TraceOp> extra)
{
    if (extra.empty())
        return;
    std::stable_sort(extra.begin(), extra.end(), [](const TraceOp& a, const TraceOp& b) { return a.event < b.event; });
    std::vector<TraceOp> out;
    out.reserve(ops.size() + extra.size());
    size_t k = 0;
    for (const TraceOp& op : ops) {
        while (k < extra.size() && extra[k].event < op.event)
            out.push_back(extra[k++]);
        out.push_back(op);
    }
    while (k < extra.size())
        out.push_back(extra[k++]);
    ops.swap(out);
}

// The most common size of a count by size (the smallest of a tie) and its count.
std::pair<uint64_t, int> mostCommon(const std::map<uint64_t, int>& count)
{
    std::pair<uint64_t, int> best{0, 0};
    for (const auto& [size, n] : count)
        if (n > best.second)
            best = {size, n};
    return best;
}

// The block finder's "sub" of a call: up to two frames inward of the callee, each as its
// FrameId + 1 in 32 bits, the outer one in the high half (0: none).
uint64_t withSubFrame(uint64_t sub, FrameId f) { return (sub << 32) | (static_cast<uint32_t>(f.value) + 1u); }

template <typename Visit>
void forEachSubFrame(uint64_t sub, Visit visit)
{
    for (; sub != 0; sub >>= 32)
        if ((sub & 0xffffffffu) != 0)
            visit(static_cast<uint32_t>((sub & 0xffffffffu) - 1u));
}

// A predicate of a stack, computed once per stack (the rules ask it of every allocation).
template <typename Predicate>
auto memoByStack(Predicate predicate)
{
    return [predicate, memo = std::unordered_map<int32_t, bool>()](StackId s) mutable {
        if (!s.valid())
            return false;
        const auto [it, fresh] = memo.try_emplace(s.value, false);
        if (fresh)
            it->second = predicate(s);
        return it->second;
    };
}

// Takes the frees of recorded allocations that `eventOf` moves (a new event, or -1 to leave the
// free where it is) out of `ops` into `moved`, for insertAfterEvents().
template <typename EventOf>
void takeFrees(std::vector<TraceOp>& ops, const EventOf& eventOf, std::vector<TraceOp>& moved)
{
    std::erase_if(ops, [&](const TraceOp& op) {
        if ((op.kind != TraceOp::Kind::Free && op.kind != TraceOp::Kind::FreeRequested) || op.origin < 0 ||
            static_cast<uint32_t>(op.origin) != op.key)
            return false;
        const int64_t event = eventOf(op);
        if (event < 0)
            return false;
        TraceOp m = op;
        m.event = event;
        moved.push_back(m);
        return true;
    });
}

// The same for the keys of `to` (recorded key -> its free's new event).
void takeFrees(std::vector<TraceOp>& ops, const std::map<uint32_t, int64_t>& to, std::vector<TraceOp>& moved)
{
    takeFrees(
        ops,
        [&](const TraceOp& op) {
        const auto m = to.find(op.key);
        return m != to.end() ? m->second : int64_t{-1};
        },
        moved);
}

// A backward operator of a matrix product, convolution or recurrent layer: what makes a weight's
// gradient where autocast casts that weight.
bool isProductBackward(std::string_view op)
{
    return autocastDtypeOf(op) == AutocastDtype::Low || contains(op, "convolution_backward") || contains(op, "_rnn_backward");
}

using MadeAt = std::unordered_map<uint32_t, std::pair<size_t, uint64_t>>; // key -> its alloc's op index, bytes

MadeAt madeAt(const std::vector<TraceOp>& ops)
{
    MadeAt made;
    for (size_t k = 0; k < ops.size(); ++k)
        if (ops[k].kind == TraceOp::Kind::Alloc)
            made[ops[k].key] = {k, ops[k].size};
    return made;
}

// Where a product's backward is done, seen from the 16-bit weight gradient it made at ops[k]: the
// first free, within 64 ops, of a tensor made before it of `bytes` or more (its 16-bit output
// gradient); the op index of that free, or ops.size() where there is none.
size_t productBackwardDone(const std::vector<TraceOp>& ops, const MadeAt& made, size_t k, uint64_t bytes)
{
    for (size_t j = k + 1; j < ops.size() && j < k + 64; ++j) {
        if (ops[j].kind != TraceOp::Kind::Free)
            continue;
        const auto m = made.find(ops[j].key);
        if (m != made.end() && m->second.first < k && m->second.second >= bytes)
            return j;
    }
    return ops.size();
}

// Only the frees of the keys of `until` that come before their key's event, moved there: the
// tensor is kept alive until then (a free already later stays).
void delayFrees(std::vector<TraceOp>& ops, const std::map<uint32_t, int64_t>& until, std::vector<TraceOp>& moved)
{
    takeFrees(
        ops,
        [&](const TraceOp& op) {
        const auto k = until.find(op.key);
        return k != until.end() && k->second > op.event ? k->second : int64_t{-1};
        },
        moved);
}

struct IterationRanges {
    int64_t first = -1; // the iteration's first event
    int64_t forwardStart = -1;
    int64_t backwardStart = -1;
    int64_t backwardEnd = -1;
    int64_t stepStart = -1;
};

IterationRanges rangesOf(const Iteration& it, const DeviceAttribution& a)
{
    IterationRanges r;
    r.first = it.firstEvent;
    for (int64_t e = it.firstEvent; e <= it.lastEvent && e < static_cast<int64_t>(a.eventPhase.size()); ++e) {
        const Phase p = a.eventPhase[static_cast<size_t>(e)];
        if (p == Phase::Forward && r.forwardStart < 0)
            r.forwardStart = e;
        if (p == Phase::Backward) {
            if (r.backwardStart < 0)
                r.backwardStart = e;
            r.backwardEnd = e;
        }
        if (p == Phase::OptimizerStep && r.stepStart < 0)
            r.stepStart = e;
    }
    return r;
}

// Splits the blocks that the callee's lines could not tell apart: two calls of a module whose
// allocations all come from one line of its forward (an MBConv without a residual add runs
// everything under `self.block(input)`) run into each other. A sub-module that every block
// calls and some block calls once (the squeeze-excitation: the same callee line and the next
// two frames inward, one contiguous run) counts the calls a run holds. Where most blocks make
// as many tensors at that callee line after its last run, each run but the last ends its
// block that many tensors later.
template <typename Entry>
void splitWrapperCall(const std::vector<Entry>& entries, std::vector<std::pair<size_t, size_t>>& ranges);

template <typename Entry>
void splitAtLandmarks(const std::vector<Entry>& entries, std::vector<std::pair<size_t, size_t>>& ranges)
{
    if (ranges.size() == 1)
        splitWrapperCall(entries, ranges);
    if (ranges.size() < 2)
        return;
    using Sig = std::pair<int32_t, uint64_t>; // callee line, sub-module
    auto sig = [&](size_t x) { return Sig{entries[x].calleeLine, entries[x].sub}; };
    // the tensors after the landmark, not the workspaces freed before the next allocation (one
    // convolution's plan takes one, the next one's may not)
    auto counted = [&](size_t x, int32_t line) {
        return entries[x].calleeLine == line &&
               (x + 1 >= entries.size() || entries[x].freeEvent < 0 || entries[x].freeEvent > entries[x + 1].event);
    };
    // per landmark candidate (key(x)): its runs in each block (their last entries)
    auto runsBy = [&](auto key) {
        std::map<decltype(key(size_t{0})), std::vector<std::vector<size_t>>> runs;
        for (size_t b = 0; b < ranges.size(); ++b)
            for (size_t x = ranges[b].first; x < ranges[b].second; ++x) {
                if (entries[x].sub == 0 || (x + 1 < ranges[b].second && key(x + 1) == key(x)))
                    continue; // not the last entry of a run
                auto& perBlock = runs[key(x)];
                perBlock.resize(ranges.size());
                perBlock[b].push_back(x);
            }
        return runs;
    };
    size_t bestPieces = ranges.size();
    std::vector<std::pair<size_t, size_t>> best;
    // a landmark every block calls, and some block once (a sub-module every block calls
    // several times, a layer's projections, is no landmark), that makes more blocks than the
    // best so far
    auto candidate = [&](const std::vector<std::vector<size_t>>& perBlock, size_t& pieces) {
        bool single = false;
        pieces = 0;
        for (const std::vector<size_t>& inBlock : perBlock) {
            if (inBlock.empty())
                return false;
            pieces += inBlock.size();
            single = single || inBlock.size() == 1;
        }
        return single && pieces > bestPieces;
    };
    // each run but a block's last ends a block at end(run), where valid(x, first, next run,
    // block) holds; the split is the best so far
    auto split = [&](const std::vector<std::vector<size_t>>& perBlock, size_t pieces, auto end, auto valid) {
        std::vector<std::pair<size_t, size_t>> out;
        for (size_t b = 0; b < ranges.size(); ++b) {
            size_t first = ranges[b].first;
            for (size_t r = 0; r + 1 < perBlock[b].size(); ++r) {
                const size_t x = end(perBlock[b][r], b);
                if (!valid(x, first, perBlock[b][r + 1], b))
                    return;
                out.push_back({first, x});
                first = x;
            }
            out.push_back({first, ranges[b].second});
        }
        bestPieces = pieces;
        best = std::move(out);
    };
    for (const auto& landmark : runsBy(sig)) {
        const Sig& s = landmark.first; // (a name lambdas capture: clang does not take a structured binding)
        const std::vector<std::vector<size_t>>& perBlock = landmark.second;
        size_t pieces = 0;
        if (!candidate(perBlock, pieces))
            continue;
        // tensors after the last run at the landmark's callee line: the blocks' common tail
        // (most of them agree on it)
        std::map<int64_t, size_t> tails;
        for (size_t b = 0; b < ranges.size(); ++b) {
            int64_t t = 0;
            for (size_t x = perBlock[b].back() + 1; x < ranges[b].second; ++x)
                t += counted(x, s.first) ? 1 : 0;
            ++tails[t];
        }
        int64_t tail = -1;
        size_t agree = 0;
        for (const auto& [t, n] : tails)
            if (n > agree) {
                agree = n;
                tail = t;
            }
        if (agree * 3 < ranges.size() * 2)
            continue;
        split(
            perBlock, pieces,
            [&](size_t run, size_t b) {
            size_t x = run + 1;
            for (int64_t t = 0; x < ranges[b].second && t < tail; ++x)
                t += counted(x, s.first) ? 1 : 0;
            return x;
            },
            [](size_t x, size_t first, size_t next, size_t) { return x < next && x > first; });
    }
    if (!best.empty()) {
        ranges = std::move(best);
        return;
    }
    // A landmark the blocks call from different lines (the two branches of an if: MobileNetV2's
    // `return x + self.conv(x)` and `return self.conv(x)`) is its sub-module alone. Each run
    // but a block's last ends its block after the tensors its statement then makes itself
    // (the residual add's), none where the next call begins at once; a call begins the way its
    // block began (its first sub-module).
    for (const auto& [sub, perBlock] : runsBy([&](size_t x) { return entries[x].sub; })) {
        size_t pieces = 0;
        if (!candidate(perBlock, pieces))
            continue;
        split(
            perBlock, pieces,
            [&](size_t run, size_t b) {
            size_t x = run + 1;
            while (x < ranges[b].second && entries[x].sub == 0 && entries[x].calleeLine == entries[run].calleeLine)
                ++x;
            return x;
            },
            [&](size_t x, size_t first, size_t next, size_t b) {
            return x <= next && x > first && entries[x].sub == entries[ranges[b].first].sub;
        });
    }
    if (!best.empty())
        ranges = std::move(best);
}

// Inverted residuals in nn.Sequential (MobileNetV3's `result = self.block(input)`, the
// residual added in place, squeeze-excitation in some) have no line and no sub-module of
// their own that separates two calls. A call begins with its expanding convolution, right
// after the last call's projection and its norm: a convolution's output at least 1.5 times
// the norm's right before it (within a call the depthwise convolution after the expansion's
// norm is no larger, nor the projection after the depthwise one's). Only for calls of one
// statement in nn.Sequential's loop over modules (a model's single call from a training step,
// a bottleneck's expanding last convolution, would split the same way), where this finds more
// calls than the landmarks.
template <typename Entry>
void splitAtExpansions(const std::vector<Entry>& entries, std::vector<std::pair<size_t, size_t>>& ranges)
{
    // the calls' lines split them elsewhere (its squeeze-excitation's own lines): adjacent
    // ranges are one span first
    std::vector<std::pair<size_t, size_t>> spans;
    for (const auto& r : ranges)
        if (!spans.empty() && spans.back().second == r.first && entries[r.first].pos == entries[r.first - 1].pos + 1)
            spans.back().second = r.second;
        else
            spans.push_back(r);
    std::vector<std::pair<size_t, size_t>> pieces;
    for (const auto& [begin, end] : spans) {
        size_t first = begin;
        size_t prev = end; // the last tensor of 4 KiB or more
        for (size_t x = begin; x < end; ++x) {
            if (entries[x].size < 4096)
                continue;
            if (prev != end && entries[x].inner == 1 && entries[prev].inner == 2 &&
                2 * entries[x].size >= 3 * entries[prev].size) {
                pieces.push_back({first, x});
                first = x;
            }
            prev = x;
        }
        pieces.push_back({first, end});
    }
    if (pieces.size() >= 3)
        ranges = std::move(pieces);
}

// A loop whose every call is one statement (MaxViT's layer, `x = self.layers(x)`, run by a
// loop of stages) makes one range: the calls cannot be told apart by their lines. They are
// told apart by a sub-module each call runs once: a call begins with its run, or with the
// runs right before it of sub-modules that only ever come right before it (the first layer of
// a stage: its downsampling projection), and so does the range. The calls must be alike:
// within a factor of two of the median call's tensors, and no sub-module that half of them or
// more run and under three quarters runs in every other call (MaxViT's attention, twice a
// layer as window and as grid attention, would make half-layers, every other one without the
// convolution; its last stage's layers lack two of the others' sub-modules; VGG's pooling
// follows five of its eight convolutions). Most landmarks win.
template <typename Entry>
void splitWrapperCall(const std::vector<Entry>& entries, std::vector<std::pair<size_t, size_t>>& ranges)
{
    const auto [begin, end] = ranges.front();
    for (size_t x = begin; x < end; ++x)
        if (entries[x].calleeLine != entries[begin].calleeLine || entries[x].sub == 0)
            return;
    struct Run {
        uint64_t sub;
        size_t first;
    };
    std::vector<Run> runs;
    for (size_t x = begin; x < end; ++x)
        if (x == begin || entries[x].sub != entries[x - 1].sub)
            runs.push_back({entries[x].sub, x});
    std::map<uint64_t, std::vector<size_t>> runsOf; // sub-module -> its runs (indices into runs)
    for (size_t r = 0; r < runs.size(); ++r)
        runsOf[runs[r].sub].push_back(r);
    std::vector<std::pair<size_t, size_t>> best;
    for (const auto& landmark : runsOf) {
        const std::vector<size_t>& own = landmark.second;
        if (own.size() < 3 || own.size() <= best.size())
            continue;
        // the sub-modules whose every run comes right before one of the landmark's
        std::set<uint64_t> before;
        for (const auto& [sub, its] : runsOf)
            if (sub != landmark.first && std::all_of(its.begin(), its.end(), [&](size_t r) {
                    return r + 1 < runs.size() && runs[r + 1].sub == landmark.first;
                }))
                before.insert(sub);
        // the first call begins the range
        size_t start = own.front();
        while (start > 0 && before.count(runs[start - 1].sub))
            --start;
        if (start != 0)
            continue;
        std::vector<std::pair<size_t, size_t>> pieces;
        size_t first = begin;
        for (size_t k = 1; k < own.size(); ++k) {
            size_t r = own[k];
            while (r > own[k - 1] + 1 && before.count(runs[r - 1].sub))
                --r;
            pieces.push_back({first, runs[r].first});
            first = runs[r].first;
        }
        pieces.push_back({first, end});
        std::map<uint64_t, std::vector<size_t>> piecesRunning; // sub-module -> the pieces that run it
        for (size_t q = 0; q < pieces.size(); ++q) {
            std::set<uint64_t> subs;
            for (size_t x = pieces[q].first; x < pieces[q].second; ++x)
                subs.insert(entries[x].sub);
            for (uint64_t sub : subs)
                piecesRunning[sub].push_back(q);
        }
        // and of a size: within a factor of two of the median piece
        std::vector<size_t> sizes;
        for (const auto& [from, to] : pieces)
            sizes.push_back(to - from);
        std::sort(sizes.begin(), sizes.end());
        const size_t median = sizes[sizes.size() / 2];
        bool alike = 2 * sizes.front() >= median && sizes.back() <= 2 * median;
        for (const auto& [sub, qs] : piecesRunning) {
            const size_t n = qs.size();
            // every other piece: half-layers
            bool alternate = 2 * n == pieces.size() || 2 * n + 1 == pieces.size();
            for (size_t k = 1; k < n && alternate; ++k)
                alternate = qs[k] == qs[k - 1] + 2;
            alike = alike && (2 * n < pieces.size() || 4 * n >= 3 * pieces.size() || !alternate);
        }
        if (alike)
            best = std::move(pieces);
    }
    if (!best.empty())
        ranges = std::move(best);
}

} // namespace

int ForwardBlocks::count() const
{
    int n = 0;
    for (const auto& blocks : perIteration)
        for (const BlockSpan& b : blocks)
            n = std::max(n, b.position + 1);
    return n;
}

int ForwardBlocks::runs() const
{
    int most = 0;
    for (const auto& blocks : perIteration) {
        int n = 0;
        for (const BlockSpan& b : blocks)
            n += b.position == 0 ? 1 : 0;
        most = std::max(most, n);
    }
    return most;
}

bool ForwardBlocks::checkpointed(const BlockSpan& block, int checkpoint) { return checkpoint < 0 || block.position < checkpoint; }

ForwardBlocks findForwardBlocks(const Replay& replay, size_t deviceIndex, const DeviceAttribution& attribution)
{
    return findForwardBlocks(replay, deviceIndex, attribution, PythonStacks(*replay.snapshot));
}

ForwardBlocks findForwardBlocks(const Replay& replay, size_t deviceIndex, const DeviceAttribution& attribution,
                                const PythonStacks& stacks)
{
    const Snapshot& snap = *replay.snapshot;
    const DeviceReplay& dr = replay.devices.at(deviceIndex);
    const EventTable& ev = snap.devices.at(deviceIndex).events;
    ForwardBlocks out;
    out.perIteration.resize(attribution.iterations.size());
    std::unordered_map<int64_t, bool> isForwardName; // by StringId
    auto forwardNamed = [&](StringId name) {
        auto [it, fresh] = isForwardName.try_emplace(name.value, false);
        if (fresh)
            it->second = snap.str(name) == "forward";
        return it->second;
    };
    std::unordered_map<int32_t, bool> isMachinery; // by FrameId
    auto machinery = [&](FrameId f) {
        auto [it, fresh] = isMachinery.try_emplace(f.value, false);
        if (fresh)
            it->second = endsWith(snap.str(snap.frames.frame(f).filename), "torch/nn/modules/module.py");
        return it->second;
    };
    struct Entry {
        int64_t pos; // index among the iteration's forward allocs
        int64_t event;
        uint32_t callee; // FrameId of the callee's forward frame
        int32_t calleeLine;
        int64_t activationBytes;
        uint64_t sub; // the next two frames inward of the callee (FrameIds), the sub-module called
        int64_t freeEvent; // -1: alive at the end
        int pass; // which run of the loop's function this is (a bi-encoder's encoder runs twice a step)
        uint64_t size;
        uint8_t inner; // the innermost frame: 1 a convolution's, 2 a norm's, 0 another
        uint64_t via; // the frames between the loop frame and the callee (0: none but nn.Module's)
    };
    std::map<std::string, int> votes; // the loop frame chosen per iteration
    for (size_t itIndex = 0; itIndex < attribution.iterations.size(); ++itIndex) {
        const Iteration& it = attribution.iterations[itIndex];
        // by loop frame: its FrameId and which of its occurrences on the stack, from the
        // outside (nested nn.Sequential stages share one `for module in self` frame)
        std::unordered_map<uint64_t, std::vector<Entry>> byFrame;
        // a frame's runs (the frame, not its function: every module's method is a `forward`): where
        // its current run of consecutive allocations began, its last one, and per loop frame its
        // last entry and run count
        std::unordered_map<int32_t, std::pair<int64_t, int64_t>> frameRun; // (begin, last)
        std::unordered_map<uint64_t, std::pair<int64_t, int>> framePass; // (last entry's pos, pass)
        int64_t pos = 0;
        for (int64_t e = it.firstEvent; e <= it.lastEvent; ++e) {
            const size_t i = static_cast<size_t>(e);
            if (ev.action[i] != Action::Alloc || attribution.eventPhase[i] != Phase::Forward)
                continue;
            const AllocationId id = dr.eventAllocation[i];
            if (!id.valid())
                continue;
            const Allocation& al = dr.allocation(id);
            const int64_t act = attribution.category(id) == Category::Activation ? static_cast<int64_t>(al.size) : 0;
            const auto frames = stacks.frames(al.stack); // innermost first
            for (const FrameId fid : frames) {
                auto [run, fresh] = frameRun.try_emplace(fid.value, pos, pos);
                if (!fresh && run->second.second < pos - 1)
                    run->second.first = pos;
                run->second.second = pos;
            }
            uint8_t inner = 0;
            if (!frames.empty()) {
                const std::string_view name = snap.str(snap.frames.frame(frames[0]).name);
                inner = contains(name, "conv") ? 1 : contains(name, "norm") ? 2 : 0;
            }
            std::unordered_map<uint32_t, uint32_t> occurrences;
            // outermost first: each frame's callee is the next frame inward named "forward"
            for (size_t k = frames.size(); k-- > 0;) {
                const uint32_t f = static_cast<uint32_t>(frames[k].value);
                if (machinery(frames[k]))
                    continue; // nn.Module's call machinery calls every module: no loop
                const uint64_t key = (static_cast<uint64_t>(occurrences[f]++) << 32) | f;
                for (size_t j = k; j-- > 0;) {
                    const Frame& c = snap.frames.frame(frames[j]);
                    if (forwardNamed(c.name)) {
                        uint64_t sub = 0;
                        int depth = 0;
                        for (size_t m = j; m-- > 0 && depth < 2;)
                            if (!machinery(frames[m])) {
                                sub = withSubFrame(sub, frames[m]);
                                ++depth;
                            }
                        uint64_t via = 0;
                        for (size_t m = j + 1; m < k; ++m)
                            if (!machinery(frames[m]))
                                via = via * 1000003u + static_cast<uint32_t>(frames[m].value) + 1u;
                        auto [fp, fresh] = framePass.try_emplace(key, pos, 0);
                        if (!fresh && fp->second.first < frameRun[frames[k].value].first)
                            ++fp->second.second;
                        fp->second.first = pos;
                        byFrame[key].push_back({pos, e, static_cast<uint32_t>(frames[j].value), c.line, act, sub,
                                                al.freeEvent.valid() ? al.freeEvent.value : -1, fp->second.second, al.size, inner,
                                                via});
                        break;
                    }
                }
            }
            ++pos;
        }
        struct Candidate {
            int64_t coverage;
            uint32_t frame;
            std::vector<BlockSpan> blocks;
            bool torchLoop; // nn.Sequential's own loop
            bool loop; // two or more blocks in one run of the frame (not a statement run once per call)
        };
        std::vector<Candidate> candidates;
        for (auto& [key, entries] : byFrame) {
            const auto f = static_cast<uint32_t>(key & 0xffffffffu);
            using Range = std::pair<size_t, size_t>; // entries [first, second)
            std::vector<Range> ranges;
            std::vector<uint64_t> calleeFunction; // per block: its callee's file and function
            // a call restarts where its callee's line goes back to one this call has already
            // run, or far back; a few lines back is one statement's arguments evaluated
            // before its call (GPT-NeoX: `self.attention(` on 260, `self.input_layernorm(...)` on 261)
            // A call also restarts where a statement it has finished (its line made its own
            // tensor: MobileNetV2's and RegNet's `x + self.conv(x)`) begins again the way it
            // began (the same sub-module), or where the call's first sub-module comes again at
            // a line a few lines back that it has not run (the other branch of an if:
            // MobileNetV2's `return self.conv(x)` two lines below `return x + self.conv(x)`).
            // A line whose statement is seen beginning again right after its own tensor ends
            // calls, and so does one whose own tensor comes after the same sub-module's (RegNet's
            // first block of a stage, `self.proj(x) + self.f(x)`): what follows it begins a call
            // where it is at a line some call began at without this rule (MobileNetV2's block
            // without the add, after one with it; not ConvNeXt's stochastic depth, after its
            // `self.layer_scale * self.block(input)`).
            std::set<int32_t> ends;
            std::map<int32_t, std::set<uint64_t>> lastSub; // line -> the sub-modules right before its own tensors
            for (size_t x = 1; x < entries.size(); ++x) {
                if (entries[x].sub == 0 && entries[x - 1].sub != 0 && entries[x - 1].calleeLine == entries[x].calleeLine)
                    lastSub[entries[x].calleeLine].insert(entries[x - 1].sub);
                if (entries[x - 1].sub != 0 || entries[x].sub == 0 || entries[x].calleeLine != entries[x - 1].calleeLine ||
                    entries[x].pos != entries[x - 1].pos + 1)
                    continue;
                size_t begin = x - 1; // the statement's first entry before its own tensor
                while (begin > 0 && entries[begin - 1].calleeLine == entries[x].calleeLine &&
                       entries[begin - 1].pos + 1 == entries[begin].pos)
                    --begin;
                if (entries[begin].sub == entries[x].sub)
                    ends.insert(entries[x].calleeLine);
            }
            {
                std::set<uint64_t> endingSubs;
                for (int32_t line : ends)
                    endingSubs.insert(lastSub[line].begin(), lastSub[line].end());
                for (const auto& [line, subs] : lastSub)
                    for (uint64_t sub : subs)
                        if (endingSubs.count(sub))
                            ends.insert(line);
            }
            std::set<int32_t> startLines; // where calls began, without the rule of `ends`
            for (const bool endsRule : {false, true}) {
                ranges.clear();
                calleeFunction.clear();
                std::set<int32_t> seen; // the current call's lines
                std::map<int32_t, uint64_t> began; // the current call's lines -> the sub-module each began with
                for (size_t x = 0; x < entries.size(); ++x) {
                    const Entry& e = entries[x];
                    const Frame& callee = snap.frames.frame(FrameId{static_cast<int32_t>(e.callee)});
                    const Entry* prev = x > 0 ? &entries[x - 1] : nullptr;
                    const Entry* first = ranges.empty() ? nullptr : &entries[ranges.back().first];
                    const auto statement = began.find(e.calleeLine);
                    const bool beginsAgain =
                        prev && first && e.sub != 0 &&
                        ((prev->sub == 0 && prev->calleeLine == e.calleeLine && statement != began.end() &&
                          statement->second == e.sub) ||
                         (endsRule && prev->sub == 0 && ends.count(prev->calleeLine) && startLines.count(e.calleeLine)) ||
                         (e.sub == first->sub && e.calleeLine < prev->calleeLine && !seen.count(e.calleeLine)));
                    if (!prev || e.pos != prev->pos + 1 || e.via != prev->via ||
                        callee.filename != snap.frames.frame(FrameId{static_cast<int32_t>(prev->callee)}).filename ||
                        (e.calleeLine < prev->calleeLine && (seen.count(e.calleeLine) || e.calleeLine + 8 < prev->calleeLine)) ||
                        beginsAgain) {
                        seen.clear();
                        began.clear();
                        ranges.push_back({x, x});
                        calleeFunction.push_back((static_cast<uint64_t>(static_cast<uint32_t>(callee.filename.value)) << 32) |
                                                 static_cast<uint32_t>(callee.name.value));
                        if (!endsRule)
                            startLines.insert(e.calleeLine);
                    }
                    ranges.back().second = x + 1;
                    seen.insert(e.calleeLine);
                    began.try_emplace(e.calleeLine, e.sub);
                }
                if (ends.empty())
                    break;
            }
            // A function that calls its modules one statement each, with other frames between it
            // and their forwards (Inception v3's `_forward`: its stem's convolutions, then eleven
            // Mixed blocks of five classes, every one a method named forward in one file): its
            // calls are its statements, and the blocks are those whose modules are not parts of
            // the others (the stem's BasicConv2d runs inside every Mixed block).
            bool byStatement = ranges.size() >= 2;
            for (size_t b = 0; b < ranges.size() && byStatement; ++b)
                byStatement = entries[ranges[b].first].via != 0 &&
                              (b == 0 || entries[ranges[b].first].via != entries[ranges[b - 1].first].via);
            if (byStatement) {
                std::set<uint64_t> inner; // the frames right inside each call's callee
                for (const auto& r : ranges)
                    for (size_t x = r.first; x < r.second; ++x)
                        forEachSubFrame(entries[x].sub, [&](uint32_t frame) { inner.insert(frame); });
                // (and of the most common function among those: not the pooling, dropout and
                // head between them, torch's own modules)
                std::vector<size_t> outer;
                std::map<uint64_t, size_t> functions;
                for (size_t b = 0; b < ranges.size(); ++b) {
                    bool part = false;
                    for (size_t x = ranges[b].first; x < ranges[b].second && !part; ++x)
                        part = inner.count(entries[x].callee) != 0;
                    if (!part) {
                        outer.push_back(b);
                        ++functions[calleeFunction[b]];
                    }
                }
                const auto most = std::max_element(functions.begin(), functions.end(),
                                                   [](const auto& a, const auto& b) { return a.second < b.second; });
                std::erase_if(outer, [&](size_t b) { return calleeFunction[b] != most->first; });
                if (outer.size() >= 2 && outer.size() < ranges.size()) {
                    std::vector<std::pair<size_t, size_t>> kept;
                    for (size_t b : outer)
                        kept.push_back(ranges[b]);
                    ranges = std::move(kept);
                    calleeFunction.assign(ranges.size(), most->first);
                } else {
                    byStatement = false;
                }
            }
            // the repeated blocks are calls of one function (a decoder layer's forward, an
            // MBConv's): a loop that also runs other modules (a stem's convolution and norm
            // in the same nn.Sequential) keeps only the blocks of its most common callee
            std::map<uint64_t, size_t> callees;
            for (uint64_t c : calleeFunction)
                ++callees[c];
            auto common = std::max_element(callees.begin(), callees.end(),
                                           [](const auto& a, const auto& b) { return a.second < b.second; });
            // (unless the most common is a nested nn.Sequential's forward, a stem's and a head's
            // convolution and norm, and another callee's calls hold more activation bytes:
            // MobileNetV3's 15 inverted residuals, one statement each, ran into one range)
            bool oneRangeOfCalls = false;
            if (common != callees.end() &&
                endsWith(snap.str(StringId{static_cast<int32_t>(common->first >> 32)}), "torch/nn/modules/container.py")) {
                std::map<uint64_t, int64_t> bytesOf;
                for (size_t b = 0; b < ranges.size(); ++b)
                    for (size_t x = ranges[b].first; x < ranges[b].second; ++x)
                        bytesOf[calleeFunction[b]] += entries[x].activationBytes;
                const auto most = std::max_element(bytesOf.begin(), bytesOf.end(),
                                                   [](const auto& a, const auto& b) { return a.second < b.second; });
                if (most != bytesOf.end() && most->first != common->first && most->second > 2 * bytesOf[common->first]) {
                    common = callees.find(most->first);
                    oneRangeOfCalls = common->second == 1;
                }
            }
            if (!byStatement && common != callees.end() && (common->second >= 2 || oneRangeOfCalls)) {
                for (size_t b = ranges.size(); b-- > 0;)
                    if (calleeFunction[b] != common->first)
                        ranges.erase(ranges.begin() + static_cast<std::ptrdiff_t>(b));
                // Two methods named forward in one file (ConvNeXt's LayerNorm2d, then its
                // CNBlocks) run into one block: a call of the function starts at the line most
                // blocks start at, and what comes before that line in a block is not its own.
                std::map<int32_t, size_t> firstLines;
                for (const auto& r : ranges)
                    ++firstLines[entries[r.first].calleeLine];
                const int32_t line = std::max_element(firstLines.begin(), firstLines.end(), [](const auto& a, const auto& b) {
                                         return a.second < b.second;
                                     })->first;
                // (a call starting a few lines from it runs the other branch of an if: MobileNetV2's
                // blocks without a residual add)
                // (and a block that never reaches that line but starts where others start too
                // is another stack's layer: Whisper's decoder layers after its encoder's, two
                // forwards of one file called from one loop frame)
                std::vector<size_t> lengths; // of the blocks starting at that line
                std::vector<int64_t> sizes; // their activation bytes
                const auto& loopEntries = entries; // (clang captures no structured binding)
                auto bytesOf = [&](const std::pair<size_t, size_t>& r) {
                    int64_t b = 0;
                    for (size_t x = r.first; x < r.second; ++x)
                        b += loopEntries[x].activationBytes;
                    return b;
                };
                for (const auto& r : ranges)
                    if (std::abs(entries[r.first].calleeLine - line) <= 8) {
                        lengths.push_back(r.second - r.first);
                        sizes.push_back(bytesOf(r));
                    }
                std::sort(lengths.begin(), lengths.end());
                std::sort(sizes.begin(), sizes.end());
                const size_t median = lengths.empty() ? 0 : lengths[lengths.size() / 2];
                const int64_t medianBytes = sizes.empty() ? 0 : sizes[sizes.size() / 2];
                for (size_t b = ranges.size(); b-- > 0;) {
                    size_t x = ranges[b].first;
                    if (std::abs(entries[x].calleeLine - line) <= 8)
                        continue;
                    // (of a layer's size, in tensors or in bytes: not ConvNeXt's LayerNorm2d
                    // between its stages; EfficientNetV2's fused MBConvs, half an MBConv's
                    // tensors at four times its resolution)
                    const bool ownStart = firstLines[entries[x].calleeLine] >= 2 &&
                                          (2 * (ranges[b].second - ranges[b].first) >= median ||
                                           2 * bytesOf(ranges[b]) >= medianBytes);
                    while (x < ranges[b].second && entries[x].calleeLine != line)
                        ++x;
                    if (x == ranges[b].second) {
                        if (!ownStart)
                            ranges.erase(ranges.begin() + static_cast<std::ptrdiff_t>(b));
                    } else {
                        ranges[b].first = x;
                    }
                }
            }
            // calls of one statement each (every entry at one line of the callee) in nn.Sequential's loop
            bool oneStatement = !ranges.empty() &&
                                endsWith(snap.str(snap.frames.frame(FrameId{static_cast<int32_t>(f)}).filename),
                                         "torch/nn/modules/container.py");
            // (a block's own forward, not a nested nn.Sequential's, whose every call is one statement)
            oneStatement =
                oneStatement &&
                !endsWith(
                    snap.str(snap.frames.frame(FrameId{static_cast<int32_t>(entries[ranges.front().first].callee)}).filename),
                    "torch/nn/modules/container.py");
            for (const auto& r : ranges)
                for (size_t x = r.first; x < r.second && oneStatement; ++x)
                    oneStatement = entries[x].calleeLine == entries[ranges.front().first].calleeLine &&
                                   entries[x].callee == entries[ranges.front().first].callee;
            auto byExpansion = oneStatement ? ranges : std::vector<std::pair<size_t, size_t>>{};
            splitAtLandmarks(entries, ranges);
            if (oneStatement) {
                splitAtExpansions(entries, byExpansion);
                if (byExpansion.size() > ranges.size())
                    ranges = std::move(byExpansion);
            }
            std::vector<BlockSpan> blocks;
            std::vector<int64_t> bytes;
            for (const auto& [first, last] : ranges) {
                blocks.push_back({entries[first].event, entries[last - 1].event, static_cast<int>(blocks.size())});
                bytes.push_back(0);
                for (size_t x = first; x < last; ++x)
                    bytes.back() += entries[x].activationBytes;
            }
            // The loop's function run twice or more a step over the same blocks (a bi-encoder's
            // encoder on queries, then on documents): every run has as many blocks, each of the
            // activation bytes of the one at its place in the first run: a block's place is its position.
            {
                std::vector<size_t> runStarts;
                for (size_t b = 0; b < ranges.size(); ++b)
                    if (b == 0 || entries[ranges[b].first].pass != entries[ranges[b - 1].first].pass)
                        runStarts.push_back(b);
                const size_t per = runStarts.size() >= 2 ? runStarts[1] : 0;
                bool same = per >= 2 && ranges.size() == per * runStarts.size();
                for (size_t b = per; same && b < ranges.size(); ++b)
                    same = b % per != 0 || runStarts[b / per] == b;
                for (size_t b = per; same && b < ranges.size(); ++b) // (the first step's first block makes a few more)
                    same = 10 * std::abs(bytes[b] - bytes[b % per]) <= bytes[b % per];
                if (same)
                    for (size_t b = 0; b < blocks.size(); ++b)
                        blocks[b].position = static_cast<int>(b % per);
            }
            // repeated blocks, not one call holding everything: what all blocks but the
            // largest cover
            int64_t coverage = 0, largest = 0;
            size_t withActivations = 0;
            for (int64_t b : bytes) {
                coverage += b;
                largest = std::max(largest, b);
                withActivations += b > 0 ? 1 : 0;
            }
            coverage -= largest;
            if (withActivations < 2)
                continue;
            std::map<int, int> perPass;
            for (const auto& r : ranges)
                ++perPass[entries[r.first].pass];
            bool loop = false;
            for (const auto& [pass, n] : perPass)
                loop = loop || n >= 2;
            candidates.push_back({coverage, f, std::move(blocks),
                                  endsWith(snap.str(snap.frames.frame(FrameId{static_cast<int32_t>(f)}).filename),
                                           "torch/nn/modules/container.py"),
                                  loop});
        }
        // The loop covering the most activation bytes outside its largest block holds the
        // blocks. Another loop's blocks join them where they run outside them, in runs of two or
        // more, and hold a share of those bytes (kUnionShare): MobileViT's transformer layers
        // after its inverted residuals. Of loops that overlap, the one of more blocks joins
        // (the transformer layers, not the three stages that run them).
        // (of loops of equal bytes and blocks, the first found: transformers' own layer call
        // against a model's loop over its layers)
        std::stable_sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
            return a.coverage != b.coverage ? a.coverage > b.coverage : a.blocks.size() > b.blocks.size();
        });
        std::vector<BlockSpan> best;
        std::vector<uint32_t> loopFrames;
        if (!candidates.empty()) {
            best = candidates.front().blocks;
            loopFrames.push_back(candidates.front().frame);
            auto inOrder = [](const std::vector<BlockSpan>& blocks) { // one run a step (not a bi-encoder's)
                for (size_t b = 0; b < blocks.size(); ++b)
                    if (blocks[b].position != static_cast<int>(b))
                        return false;
                return true;
            };
            std::vector<const Candidate*> others;
            for (size_t c = 1; c < candidates.size() && inOrder(best); ++c)
                if (!candidates[c].torchLoop && candidates[c].loop && inOrder(candidates[c].blocks) &&
                    kUnionShare * candidates[c].coverage >= candidates.front().coverage)
                    others.push_back(&candidates[c]);
            std::stable_sort(others.begin(), others.end(),
                             [](const Candidate* a, const Candidate* b) { return a->blocks.size() > b->blocks.size(); });
            const size_t first = best.size();
            for (const Candidate* c : others) {
                const bool outside = std::none_of(c->blocks.begin(), c->blocks.end(), [&](const BlockSpan& x) {
                    return std::any_of(best.begin(), best.end(), [&](const BlockSpan& y) {
                        return x.firstEvent <= y.lastEvent && y.firstEvent <= x.lastEvent;
                    });
                });
                if (outside) {
                    best.insert(best.end(), c->blocks.begin(), c->blocks.end());
                    loopFrames.push_back(c->frame);
                }
            }
            if (best.size() > first) {
                std::sort(best.begin(), best.end(),
                          [](const BlockSpan& a, const BlockSpan& b) { return a.firstEvent < b.firstEvent; });
                for (size_t b = 0; b < best.size(); ++b)
                    best[b].position = static_cast<int>(b);
            }
        }
        if (!best.empty()) {
            out.perIteration[itIndex] = std::move(best);
            std::string where;
            for (const uint32_t f : loopFrames) {
                const Frame& fr = snap.frames.frame(FrameId{static_cast<int32_t>(f)});
                where += (where.empty() ? "" : " and ") + std::string(snap.str(fr.filename)) + ":" + std::to_string(fr.line) +
                         " (" + std::string(snap.str(fr.name)) + ")";
            }
            ++votes[where];
        }
    }
    int most = 0;
    for (const auto& [frame, n] : votes)
        if (n > most) {
            most = n;
            out.loopFrame = frame;
        }
    return out;
}

ModelWhatIf::ModelWhatIf(const Replay& replay, size_t deviceIndex, const DeviceAttribution& attribution)
    : m_replay(replay), m_index(deviceIndex), m_attribution(attribution)
{
    const Snapshot& snap = *replay.snapshot;
    const DeviceReplay& dr = replay.devices.at(deviceIndex);
    const PythonStacks stacks(snap);
    m_recorded.operatorsRecorded = stacks.hasNativeFrames();
    m_trains = std::any_of(attribution.iterations.begin(), attribution.iterations.end(), [&](const Iteration& it) {
        const IterationRanges r = rangesOf(it, attribution);
        return r.forwardStart >= 0 && r.backwardEnd >= 0;
    });
    for (size_t f = 0; f < snap.frames.size(); ++f) {
        const std::string_view file = snap.str(snap.frames.frame(FrameId{static_cast<int32_t>(f)}).filename);
        m_recorded.lightning = m_recorded.lightning || contains(file, "/lightning/pytorch/") ||
                               contains(file, "/pytorch_lightning/");
        m_recorded.compiled = m_recorded.compiled || contains(file, "torch/_inductor/") ||
                              contains(file, "torch/_functorch/_aot_autograd/");
        m_recorded.distributed = m_recorded.distributed || contains(file, "torch/distributed/fsdp/") ||
                                 contains(file, "torch/nn/parallel/distributed.py") ||
                                 contains(file, "torch/distributed/optim/zero_redundancy_optimizer.py");
    }
    m_opensMidRun = dr.truncated;
    if (!m_opensMidRun && dr.preexistingCount > 0) {
        bool parametersMadeHere = false;
        for (size_t a = 0; a < dr.allocations.size() && !parametersMadeHere; ++a)
            parametersMadeHere = attribution.allocationCategory[a] == Category::Parameter && !dr.allocations[a].preexisting();
        m_opensMidRun = !parametersMadeHere;
    }
    m_blocks = findForwardBlocks(replay, deviceIndex, attribution, stacks);

    // How long a checkpointed forward keeps what transformers' model code binds to a name. A
    // tensor that ends a statement of the first frame outside torch that made it (its
    // caller: `attn_ln = self.input_layernorm(hidden_states)`) lives until the next statement
    // of that frame that allocates has run (`h, _ = self.self_attn(...)` rebinds or has used
    // it), or the frame returns. The tensors inside a statement are its temporaries, and the
    // window after them holds (kCheckpointWindow). (A tensor its frame returns at once, an
    // RMSNorm's `return output.type_as(x)`, is its caller's to bind; read so, the forward's frees
    // come nearer the real runs' but the reserved bytes of checkpointed rows do not: mean error
    // 2.87 -> 2.97 points, session 29.)
    m_boundUntil.assign(dr.allocations.size(), -1);
    auto inTorch = [&](FrameId f) { return isTorchFile(snap.str(snap.frames.frame(f).filename)); };
    for (size_t a = 0; a < dr.allocations.size(); ++a) {
        const Allocation& al = dr.allocations[a];
        if (attribution.allocationCategory[a] != Category::Activation || !al.stack.valid() || !al.allocEvent.valid())
            continue;
        const auto frames = stacks.frames(al.stack);
        size_t j = 0;
        while (j < frames.size() && inTorch(frames[j]))
            ++j;
        if (j >= frames.size() || !contains(snap.str(snap.frames.frame(frames[j]).filename), "transformers/models/"))
            continue;
        const Frame& caller = snap.frames.frame(frames[j]);
        const size_t depth = frames.size() - j; // the caller and the frames outside it
        const int64_t end = std::min<int64_t>(static_cast<int64_t>(dr.eventAllocation.size()), al.allocEvent.value + 20000);
        std::optional<FrameId> next; // the caller's next statement that allocates
        for (int64_t e = al.allocEvent.value + 1; e < end; ++e) {
            const AllocationId id = dr.eventAllocation[static_cast<size_t>(e)];
            if (!id.valid() || dr.allocation(id).allocEvent.value != e || !dr.allocation(id).stack.valid())
                continue;
            const auto g = stacks.frames(dr.allocation(id).stack);
            bool running = g.size() >= depth;
            for (size_t k = 1; running && k < depth; ++k)
                running = g[g.size() - depth + k] == frames[j + k];
            const FrameId here = running ? g[g.size() - depth] : FrameId{};
            if (running) {
                const Frame& h = snap.frames.frame(here);
                running = h.filename == caller.filename && h.name == caller.name;
            }
            if (!running) {
                m_boundUntil[a] = e;
                break;
            }
            if (!next && here == frames[j]) {
                if (dr.allocation(id).size * 4 >= al.size) // a temporary of its statement (not a norm's statistics)
                    break;
            } else if (!next)
                next = here;
            else if (here != *next) {
                m_boundUntil[a] = e;
                break;
            }
        }
    }
    m_recorded.blocks = m_blocks.count();

    // The dtype each forward op produces under autocast, from its innermost frames: a
    // matrix product, convolution or attention gives the low precision; norms, softmax
    // and losses give fp32; a model's own forward code mixing a sub-module's output with
    // its fp32 stream (residual adds: a size an fp32 tensor of the forward had) gives fp32
    // by type promotion; any other op (an
    // activation function, dropout, batch norm) follows the op before it, its likely input.
    enum : uint8_t { kFollow, kLow, kFull, kMix };
    std::unordered_map<int32_t, uint8_t> byStack;
    std::unordered_map<int32_t, uint64_t> largestOf; // by stack: its largest allocation
    for (const Allocation& al : dr.allocations)
        if (al.stack.valid())
            largestOf[al.stack.value] = std::max(largestOf[al.stack.value], al.size);
    // by innermost frame: the most tensors one call of its line made in a row
    std::unordered_map<int32_t, int> callTensors;
    {
        int32_t line = -1;
        int run = 0;
        for (const Allocation& al : dr.allocations) {
            const auto frames = al.stack.valid() ? stacks.frames(al.stack) : std::span<const FrameId>();
            const int32_t here = frames.empty() ? -1 : frames[0].value;
            run = here == line ? run + 1 : 1;
            line = here;
            if (here >= 0)
                callTensors[here] = std::max(callTensors[here], run);
        }
    }
    auto classify = [&](StackId s) -> uint8_t {
        if (!s.valid())
            return kFollow;
        auto [it, fresh] = byStack.try_emplace(s.value, kFollow);
        if (!fresh)
            return it->second;
        // the operator itself, where the recording has native frames (stacks="all")
        switch (autocastDtypeOf(stacks.op(s))) {
        case AutocastDtype::Low: return it->second = kLow;
        case AutocastDtype::Full: return it->second = kFull;
        case AutocastDtype::Follow: break;
        }
        const auto frames = stacks.frames(s);
        for (size_t k = 0; k < frames.size() && k < 3; ++k) {
            const Frame& f = snap.frames.frame(frames[k]);
            const std::string_view file = snap.str(f.filename);
            const std::string_view name = snap.str(f.name);
            if (contains(name, "batch_norm") || endsWith(file, "modules/batchnorm.py") || contains(name, "dropout") ||
                (endsWith(file, "modules/activation.py") && !contains(name, "attention")) ||
                // transformers' activation modules: one function of the input (GELUActivation);
                // NewGELUActivation's one line of many ops, its pow at fp32, promotes
                (k == 0 && endsWith(file, "transformers/activations.py") && callTensors[frames[0].value] == 1))
                break;
            if (contains(name, "layer_norm") || contains(name, "group_norm") || contains(name, "rms_norm") ||
                contains(name, "softmax") || contains(name, "cross_entropy") || contains(name, "nll_loss") ||
                contains(name, "mse_loss") || endsWith(file, "modules/normalization.py") || contains(file, "RMSNorm") ||
                name == "interpolate" ||
                (name == "_norm" && contains(file, "transformers/models/"))) { // Gemma's `self._norm(x.float())`
                it->second = kFull;
                break;
            }
            if (endsWith(file, "modules/linear.py") || endsWith(file, "modules/conv.py") || contains(file, "sdpa_attention") ||
                (endsWith(file, "transformers/pytorch_utils.py") && name == "forward") || // GPT-2's Conv1D (addmm)
                (endsWith(file, "modules/rnn.py") && name == "forward" && stacks.op(s).empty() &&
                 largestOf[s.value] >= kRecurrentCallMin) || // cuDNN's LSTM/GRU (AutocastRNN), not its zero states
                contains(name, "scaled_dot_product") ||
                contains(name, "attention_forward") || contains(name, "multi_head_attention") || name == "linear" ||
                name == "matmul" || name == "bmm" || name == "conv2d" || name == "conv1d" || name == "einsum") {
                it->second = kLow;
                break;
            }
            if (k == 0 && name == "forward" && !contains(file, "torch/nn/")) {
                it->second = kMix;
                break;
            }
        }
        return it->second;
    };
    // A model's own line that calls the attention kernel (Falcon's, nanoGPT's
    // `F.scaled_dot_product_attention(...)` in their forward): from Python frames no frame names
    // it. One call of one line that makes at least 5 tensors (of at least 1/64 of the largest),
    // two of one size at least twice the size most of them have (the math kernel's scores and
    // their softmax), is that call.
    std::set<int32_t> attentionLines;
    {
        size_t a = 0;
        while (a < dr.allocations.size()) {
            const auto frames = stacks.frames(dr.allocations[a].stack);
            const std::string_view file = frames.empty() ? std::string_view() : snap.str(snap.frames.frame(frames[0]).filename);
            // (a norm's line is none: Gemma-3's RMS norm of each head of 64, `x *
            // torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)`, makes two tensors of x's size
            // and three 1/64 of it)
            if (attribution.allocationPhase[a] != Phase::Forward || frames.empty() || isTorchFile(file) ||
                contains(snap.str(snap.frames.frame(frames[0]).name), "norm")) {
                ++a;
                continue;
            }
            const int32_t line = frames[0].value;
            std::map<uint64_t, int> count;
            size_t b = a;
            for (; b < dr.allocations.size(); ++b) {
                if (attribution.allocationPhase[b] != Phase::Forward)
                    break;
                const auto f = stacks.frames(dr.allocations[b].stack);
                if (f.empty() || f[0].value != line)
                    break;
                if (dr.allocations[b].size >= 4096)
                    ++count[dr.allocations[b].size];
            }
            a = std::max(b, a + 1);
            // tensors, not a reduction's small results (an RMS norm's line makes two x-sized
            // tensors and three B x L ones)
            const uint64_t largest = count.empty() ? 0 : count.rbegin()->first;
            std::erase_if(count, [&](const auto& kv) { return kv.first * 64 < largest; });
            int tensors = 0;
            for (const auto& [size, n] : count)
                tensors += n;
            const uint64_t mode = mostCommon(count).first;
            bool scores = false;
            for (const auto& [size, n] : count)
                scores = scores || (n >= 2 && size >= 2 * mode);
            if (tensors >= 5 && scores)
                attentionLines.insert(line);
        }
    }
    auto isAttention = memoByStack([&](StackId s) {
        if (isAttentionOp(stacks.op(s)))
            return true;
        const auto frames = stacks.frames(s);
        if (frames.empty())
            return false;
        if (attentionLines.count(frames[0].value))
            return true;
        // the kernel's own call, not the projections around it
        const std::string_view name = snap.str(snap.frames.frame(frames[0]).name);
        const std::string_view file = snap.str(snap.frames.frame(frames[0]).filename);
        return contains(file, "sdpa_attention") || contains(name, "scaled_dot_product") || contains(name, "attention_forward") ||
               contains(name, "multi_head_attention");
    });
    m_half.assign(dr.allocations.size(), 0);
    m_castBytes.assign(dr.allocations.size(), 0);
    m_layoutCopy.assign(dr.allocations.size(), 0);
    m_castSource.assign(dr.allocations.size(), -1);
    // ops whose backward reads their own output, which therefore stays alive beside any copy
    auto savesOutput = memoByStack([&](StackId s) {
        const std::string_view op = stacks.op(s);
        bool saves = contains(op, "softmax") || contains(op, "sigmoid") || contains(op, "tanh") || op == "relu" ||
                     op == "relu_" || op == "threshold" || op == "exp" || op == "elu";
        const auto frames = stacks.frames(s);
        for (size_t k = 0; k < frames.size() && k < 2 && !saves; ++k) {
            const std::string_view name = snap.str(snap.frames.frame(frames[k]).name);
            saves = name == "softmax" || name == "log_softmax" || name == "sigmoid" || name == "tanh" || name == "relu" ||
                    name == "relu6" || name == "elu" || name == "hardtanh";
        }
        return saves;
    });
    m_quadratic.assign(dr.allocations.size(), 0);
    m_mathAttention.assign(dr.allocations.size(), 0);
    std::vector<std::pair<std::vector<size_t>, int64_t>> fused; // a fused kernel's calls, the allocation after each
    // attention's L x L scores: in a run of attention allocations, those at least twice the
    // run's most common size (its B x L x H tensors)
    {
        std::vector<size_t> run;
        int64_t next = -1; // the allocation after the run (-1: none)
        auto flush = [&] {
            std::map<uint64_t, int> count;
            for (size_t a : run)
                if (dr.allocations[a].size >= 4096)
                    ++count[dr.allocations[a].size];
            const auto [mode, best] = mostCommon(count);
            bool scores = false;
            if (best >= 2)
                for (size_t a : run)
                    if (dr.allocations[a].size >= 2 * mode)
                        m_quadratic[a] = 1, scores = true;
            // Eager attention that transforms its scores (Gemma-2's soft-capping: the scores, their
            // scaled and tanh'd forms) makes more L x L tensors than any other size: they are
            // those, three or more, at least twice the call's smallest tensor (B x L x H). Only
            // their sizes follow the sequence; the kernel is the model's own at any precision.
            if (!scores) {
                uint64_t smallest = 0;
                for (size_t a : run)
                    if (dr.allocations[a].size >= 4096 && (smallest == 0 || dr.allocations[a].size < smallest))
                        smallest = dr.allocations[a].size;
                if (smallest > 0 && count[mode] >= 3 && mode >= 2 * smallest)
                    for (size_t a : run)
                        if (dr.allocations[a].size == mode)
                            m_quadratic[a] = 1;
            }
            // Scores mean the math kernel ran. At 16 bits the flash kernel replaces it only
            // for a call with no mask of the caller's: the math kernel built its own causal
            // mask (`tril`, or from Python frames an L x L bool beside its L x L x 4 float
            // form). With a mask passed in (T5's position bias) 16 bits run the math kernel
            // again, which computes in fp32: its tensors keep their bytes.
            if (scores) {
                std::set<int32_t> lines; // the kernel's call: the scores' innermost frames
                for (size_t a : run)
                    if (m_quadratic[a] && !stacks.frames(dr.allocations[a].stack).empty())
                        lines.insert(stacks.frames(dr.allocations[a].stack)[0].value);
                std::vector<size_t> call;
                for (size_t a : run) {
                    const auto frames = stacks.frames(dr.allocations[a].stack);
                    if (!frames.empty() && lines.count(frames[0].value))
                        call.push_back(a);
                }
                // the call's own causal mask (a mask the model builds before the call, T5's
                // decoder's, is the caller's)
                bool causal = false;
                std::map<uint64_t, int> sizes;
                for (size_t a : call) {
                    ++sizes[dr.allocations[a].size];
                    if (dr.allocations[a].stack.valid())
                        for (const FrameId f : snap.stacks.frames(dr.allocations[a].stack))
                            causal = causal || snap.str(snap.frames.frame(f).name).starts_with("at::_ops::tril::");
                }
                // the kernel's own causal mask is L x L bools made twice (`ones`, then `tril`)
                // before its float form; a caller's B x L x L bool mask is negated once, after it
                for (const auto& [m, n] : sizes)
                    causal = causal || (m >= 1024 && m < mode && n >= 2 && sizes.count(4 * m));
                if (!causal) {
                    for (size_t a : call)
                        m_mathAttention[a] = 1;
                } else if (!call.empty()) {
                    // The flash kernel keeps none of the math kernel's tensors but its output;
                    // it saves its inputs instead (the tensors the call consumed, freed before
                    // the next allocation after it), for as long as the scores were kept.
                    FlashCall fc;
                    fc.dropped.assign(call.begin(), call.end() - 1);
                    const int64_t first = dr.allocations[call.front()].allocEvent.value;
                    int64_t next = dr.allocations[call.back()].allocEvent.value + 1;
                    while (next < static_cast<int64_t>(dr.eventAllocation.size()) &&
                           !(dr.eventAllocation[static_cast<size_t>(next)].valid() &&
                             dr.allocation(dr.eventAllocation[static_cast<size_t>(next)]).allocEvent.value == next))
                        ++next;
                    for (size_t a : call)
                        if (m_quadratic[a] && dr.allocations[a].freeEvent.valid())
                            fc.saveUntil = std::max(fc.saveUntil, dr.allocations[a].freeEvent.value);
                    for (int64_t e = first; e < next && fc.saveUntil >= 0; ++e) {
                        const AllocationId id = dr.eventAllocation[static_cast<size_t>(e)];
                        if (!id.valid())
                            continue;
                        const Allocation& in = dr.allocation(id);
                        if (in.freeEvent.valid() && in.freeEvent.value == e && in.allocEvent.valid() &&
                            in.allocEvent.value < first &&
                            attribution.allocationPhase[static_cast<size_t>(id.value)] == Phase::Forward)
                            fc.inputs.push_back(id.value);
                    }
                    if (fc.saveUntil >= 0)
                        m_flashCalls.push_back(std::move(fc));
                }
            }
            if (!scores && !run.empty())
                fused.push_back({run, next});
            run.clear();
        };
        for (size_t a = 0; a < dr.allocations.size(); ++a) {
            if (attribution.allocationPhase[a] != Phase::Forward)
                continue;
            if (isAttention(dr.allocations[a].stack) && !dr.allocations[a].aliveAtEnd())
                run.push_back(a);
            else if (dr.allocations[a].size >= 4096 && !run.empty()) {
                next = static_cast<int64_t>(a);
                flush();
            }
        }
        next = -1;
        flush();
    }
    // Attention written out in a model's own code (BLOOM's baddbmm, softmax and bmm in its
    // forward) is named by no kernel. Its probabilities are a softmax at least twice the size of
    // the tensors its function makes around it (B x L x hidden); that function's tensors of the
    // softmax's size (the scores, their masked form) are L x L as well. A router's softmax over
    // a few experts is smaller than those tensors, and a fused projection (B x L x 3 hidden) is
    // not of the softmax's size.
    {
        auto frameKey = [&](FrameId f) {
            const Frame& fr = snap.frames.frame(f);
            return std::pair<uint32_t, uint32_t>(fr.filename.value, fr.name.value);
        };
        auto isSoftmax = [&](const Allocation& al) {
            const auto frames = stacks.frames(al.stack);
            return frames.size() >= 2 && snap.str(snap.frames.frame(frames[0]).name) == "softmax";
        };
        std::vector<size_t> forward;
        for (size_t a = 0; a < dr.allocations.size(); ++a)
            if (attribution.allocationPhase[a] == Phase::Forward && dr.allocations[a].stack.valid())
                forward.push_back(a);
        for (size_t i = 0; i < forward.size(); ++i) {
            const Allocation& sm = dr.allocations[forward[i]];
            if (m_quadratic[forward[i]] || sm.size < 4096 || !isSoftmax(sm))
                continue;
            const auto caller = frameKey(stacks.frames(sm.stack)[1]);
            auto inCaller = [&](size_t a) {
                const auto frames = stacks.frames(dr.allocations[a].stack);
                return !frames.empty() &&
                       (frameKey(frames[0]) == caller || (isSoftmax(dr.allocations[a]) && frameKey(frames[1]) == caller));
            };
            size_t lo = i, hi = i;
            while (lo > 0 && (inCaller(forward[lo - 1]) || dr.allocations[forward[lo - 1]].size < 4096))
                --lo;
            while (hi + 1 < forward.size() && (inCaller(forward[hi + 1]) || dr.allocations[forward[hi + 1]].size < 4096))
                ++hi;
            std::map<uint64_t, int> count;
            for (size_t k = lo; k <= hi; ++k)
                if (const Allocation& al = dr.allocations[forward[k]];
                    al.size >= 4096 && !al.aliveAtEnd() && inCaller(forward[k]))
                    ++count[al.size];
            const auto [mode, best] = mostCommon(count);
            // (or the softmax of scores found L x L above: eager attention's, after its transforms)
            bool ofScores = false;
            for (size_t k = lo; k <= hi; ++k)
                ofScores = ofScores ||
                           (m_quadratic[forward[k]] && dr.allocations[forward[k]].size == sm.size && inCaller(forward[k]));
            if (ofScores) {
                m_quadratic[forward[i]] = 1;
                continue;
            }
            if (best < 2 || sm.size < 2 * mode)
                continue;
            for (size_t k = lo; k <= hi; ++k) {
                const uint64_t z = dr.allocations[forward[k]].size;
                if (inCaller(forward[k]) && (z == sm.size || 2 * z == sm.size || z == 2 * sm.size))
                    m_quadratic[forward[k]] = 1;
            }
        }
    }
    // transformers' eager attention takes its probabilities in fp32 whatever the model's dtype
    // (`softmax(scores, dtype=torch.float32).to(query.dtype)`: BLOOM's, Gemma-2's, Llama's): an
    // L x L softmax called from a model of transformers keeps 4 bytes in a 16-bit model, and its
    // 16-bit copy is what the next product saves. (An fp32 recording cannot tell a softmax without
    // the dtype, GPT-2's eager one: taken for fp32 too, over by its copy and half its bytes.)
    m_fp32Softmax.assign(dr.allocations.size(), 0);
    for (size_t a = 0; a < dr.allocations.size(); ++a) {
        if (!m_quadratic[a] || attribution.allocationPhase[a] != Phase::Forward)
            continue;
        const auto frames = stacks.frames(dr.allocations[a].stack);
        m_fp32Softmax[a] = frames.size() >= 2 && snap.str(snap.frames.frame(frames[0]).name) == "softmax" &&
                           contains(snap.str(snap.frames.frame(frames[1]).filename), "transformers/models/");
    }
    for (size_t a = 0; a < dr.allocations.size(); ++a)
        if (attribution.allocationCategory[a] == Category::Input && dr.allocations[a].size % 8 == 0 &&
            std::find(m_inputSizes.begin(), m_inputSizes.end(), dr.allocations[a].size) == m_inputSizes.end())
            m_inputSizes.push_back(dr.allocations[a].size);
    // A fused kernel's call (no scores) with grouped-query attention: its projections before
    // it make one size twice (k and v) that divides the query's (the output's) size
    {
        int64_t previousOutput = -1;
        for (const auto& [call, next] : fused) {
            size_t out = call.front();
            for (size_t a : call)
                if (dr.allocations[a].size >= dr.allocations[out].size)
                    out = a;
            const uint64_t o = dr.allocations[out].size;
            GqaCall g;
            g.output = static_cast<int32_t>(out);
            g.after = next >= 0 ? dr.allocations[static_cast<size_t>(next)].allocEvent.value : -1;
            for (size_t a : call) {
                if (a == out)
                    continue;
                const Allocation& al = dr.allocations[a];
                g.others.push_back(static_cast<int32_t>(a));
                const bool freedInBackward = al.freeEvent.valid() &&
                                             attribution.eventPhase[static_cast<size_t>(al.freeEvent.value)] == Phase::Backward;
                if (!freedInBackward)
                    continue;
                if (g.backwardAt < 0 || al.freeEvent.value < g.backwardAt)
                    g.backwardAt = al.freeEvent.value;
                // the log-sum-exp: B x H x L fp32 beside the B x L x H x D output (D/2 = 8..256 at 16 bits)
                if (al.size > 0 && o % al.size == 0 && o / al.size >= 8 && o / al.size <= 256)
                    g.logSumExp = std::max(g.logSumExp, al.size);
            }
            std::map<uint64_t, int> smaller;
            bool query = false;
            for (int64_t a = static_cast<int64_t>(call.front()) - 1; a > previousOutput; --a) {
                const Allocation& al = dr.allocations[static_cast<size_t>(a)];
                if (attribution.allocationPhase[static_cast<size_t>(a)] != Phase::Forward)
                    break;
                // a product's output: its call's last tensor (autocast's copies of the weight and
                // input come before it), not a cuBLAS workspace
                if (classify(al.stack) != kLow || al.size < 4096 || al.aliveAtEnd())
                    continue;
                size_t later = static_cast<size_t>(a) + 1; // the next tensor of the forward, workspaces aside
                while (later + 1 < call.front() && dr.allocations[later].aliveAtEnd())
                    ++later;
                if (dr.allocations[later].stack == al.stack)
                    continue;
                query = query || al.size == o;
                if (al.size < o && o % al.size == 0)
                    ++smaller[al.size];
            }
            previousOutput = static_cast<int64_t>(out);
            const bool grouped = query &&
                                 std::any_of(smaller.begin(), smaller.end(), [](const auto& kv) { return kv.second >= 2; });
            if (grouped && g.logSumExp > 0 && g.backwardAt >= 0 && dr.allocations[out].freeEvent.valid())
                m_gqaCalls.push_back(std::move(g));
        }
    }
    // A hand-written element-wise formula: one line of a forward that makes kFormulaRun or
    // more tensors in a row (GPT-2's tanh GELU, `0.5 * x * (1 + tanh(c * (x + 0.044715 *
    // pow(x, 3))))`, makes 8). Such formulas are made of the ops autocast runs in fp32
    // (pow, exp, rsqrt), and type promotion carries fp32 through the rest of the line. Only
    // where the recording has no native frames: elsewhere each op's own dtype is known.
    std::vector<uint8_t> formula(dr.allocations.size(), 0);
    if (!stacks.hasNativeFrames()) {
        for (const Iteration& it : attribution.iterations) {
            std::vector<size_t> run;
            auto flush = [&] {
                if (run.size() >= kFormulaRun && classify(dr.allocations[run.front()].stack) == kMix)
                    for (size_t a : run)
                        formula[a] = 1;
                run.clear();
            };
            for (int64_t e = it.firstEvent; e <= it.lastEvent; ++e) {
                const AllocationId id = dr.eventAllocation[static_cast<size_t>(e)];
                if (!id.valid() || dr.allocation(id).allocEvent.value != e ||
                    attribution.eventPhase[static_cast<size_t>(e)] != Phase::Forward || dr.allocation(id).size < 4096)
                    continue;
                const size_t a = static_cast<size_t>(id.value);
                if (!run.empty() && dr.allocations[run.front()].stack != dr.allocations[a].stack)
                    flush();
                run.push_back(a);
            }
            flush();
        }
    }
    auto normSavingInput = [&](StackId s) {
        const std::string_view op = stacks.op(s);
        if (op == "layer_norm" || op == "native_layer_norm" || op == "group_norm" || op == "native_group_norm")
            return true;
        const auto frames = stacks.frames(s);
        for (size_t k = 0; k < frames.size() && k < 2; ++k) {
            const std::string_view name = snap.str(snap.frames.frame(frames[k]).name);
            if (name == "layer_norm" || name == "group_norm")
                return true;
        }
        return false;
    };
    for (const Iteration& it : attribution.iterations) {
        bool prevLow = false;
        uint64_t prevSize = 0;
        AllocationId prevId; // the last allocation of 4 KiB or more
        bool plainLow = false; // the last op that is no matrix product: the likely input of the next ones
        uint64_t plainSize = 0;
        AllocationId plain;
        StackId lastProduct; // the product since `plain` that cast its input: one call's further outputs cast nothing
        StackId lastLow; // the last matrix product's allocation
        std::set<uint64_t> fullSizes; // sizes of this forward's fp32 tensors
        for (int64_t e = it.firstEvent; e <= it.lastEvent; ++e) {
            const size_t i = static_cast<size_t>(e);
            const AllocationId id = dr.eventAllocation[i];
            if (!id.valid() || dr.allocation(id).allocEvent.value != e)
                continue;
            const Phase ph = attribution.eventPhase[i];
            if (ph != Phase::Forward &&
                !(ph == Phase::Other && attribution.allocationPhase[static_cast<size_t>(id.value)] == Phase::Other &&
                  prevSize > 0))
                continue;
            const Allocation& al = dr.allocation(id);
            const uint8_t c = formula[static_cast<size_t>(id.value)] ? static_cast<uint8_t>(kFull) : classify(al.stack);
            // arithmetic on the line that called the last product reads that product's output
            // (`self.q_proj(x) * self.scaling`): it follows it, and is no input of later products
            const bool onProduct = c == kMix && lastLow.valid() && [&] {
                const auto mine = stacks.frames(al.stack), product = stacks.frames(lastLow);
                for (size_t k = 1; k < product.size(); ++k)
                    if (!endsWith(snap.str(snap.frames.frame(product[k]).filename), "torch/nn/modules/module.py"))
                        return !mine.empty() && mine[0] == product[k];
                return false;
            }();
            // a model's own arithmetic is fp32 when it mixes in the fp32 stream (a size an fp32
            // tensor of this forward had: residual adds), else it follows (a product of two
            // 16-bit outputs)
            // (where the recording names operators, a sum on that line adds an fp32 tensor to the
            // product's output, a bias or the residual stream: BART's and Marian's
            // `self.lm_head(x) + self.final_logits_bias`, fp32 logits by type promotion)
            const bool addsToProduct = onProduct && stacks.hasNativeFrames() && stacks.op(al.stack).starts_with("add");
            const bool mixesFull = c == kMix && (addsToProduct || (!onProduct && fullSizes.count(al.size) > 0));
            const bool low = c == kLow ? true : c == kFull || mixesFull ? false : prevLow;
            if (!low && al.size >= 4096)
                fullSizes.insert(al.size);
            m_half[static_cast<size_t>(id.value)] = low ? 1 : 0;
            // A layer or group norm runs in fp32 under autocast and saves its input: a 16-bit
            // input (ConvNeXt's depthwise convolution) is copied to fp32, and the copy is saved
            // where the recording saved the input; the 16-bit input dies at the cast. The input
            // keeps its fp32 bytes (measured: ConvNeXt's norms' inputs, 98 MiB at the peak).
            if (c == kFull && prevLow && prevId.valid() && normSavingInput(al.stack))
                m_half[static_cast<size_t>(prevId.value)] = 0;
            const bool sameCall = c == kLow && lastProduct.valid() && [&] {
                const auto a = stacks.frames(lastProduct), b = stacks.frames(al.stack);
                return !a.empty() && std::equal(a.begin(), a.end(), b.begin(), b.end());
            }();
            // a fused attention kernel right after a product reads the projections' 16-bit outputs
            // (BERT's q, k and v after its layer norm), and its output is the next product's input
            // (not eager attention's products: their softmax is fp32, then copied to 16 bits)
            const bool attention = c == kLow && isAttention(al.stack) && [&] {
                const auto frames = stacks.frames(al.stack);
                return frames.empty() || !contains(snap.str(snap.frames.frame(frames[0]).name), "eager");
            }();
            // A linear layer's call that first copies its input into a layout of its own (a
            // transposed input made contiguous), then makes its output on the same line, reads a
            // tensor of that copy's size: where that is not the last plain op's size, that op's
            // output is some later op's input (SegFormer's upsampled maps, kept for a `cat`), not
            // this call's, and is neither cast nor consumed by it.
            const bool readsOther = c == kLow && !sameCall && al.size != plainSize && !al.aliveAtEnd() && [&] {
                const size_t next = static_cast<size_t>(id.value) + 1;
                if (next >= dr.allocations.size() || attribution.allocationPhase[next] != Phase::Forward)
                    return false;
                // one call: the same Python frames (q, k and v, one line each, are three calls)
                const auto mine = stacks.frames(al.stack), theirs = stacks.frames(dr.allocations[next].stack);
                return !mine.empty() && std::equal(mine.begin(), mine.end(), theirs.begin(), theirs.end()) &&
                       endsWith(snap.str(snap.frames.frame(mine[0]).filename), "modules/linear.py");
            }();
            if (readsOther)
                lastProduct = al.stack;
            if (c == kLow && !plainLow && plainSize >= 4096 && !m_quadratic[static_cast<size_t>(id.value)] && !sameCall &&
                !(attention && prevLow) && !readsOther) {
                lastProduct = al.stack;
                m_castBytes[static_cast<size_t>(id.value)] = plainSize / 2; // autocast's copy of its fp32 input
                // the products save their copies, not the fp32 input: unless the op that made
                // it saves its own output (softmax, sigmoid, tanh, relu), the input dies once
                // the last product reading it has cast it, and each copy lives as long as the
                // recorded input did
                if (plain.valid() && (formula[static_cast<size_t>(plain.value)] || !savesOutput(dr.allocation(plain).stack))) {
                    m_consumedAt[plain.value] = e;
                    m_castSource[static_cast<size_t>(id.value)] = plain.value;
                }
            }
            // The fused attention kernels of 16-bit runs (cuDNN's) write their output in the
            // layout of their query: a query made contiguous head by head (a copy of the output's
            // size, kept for the backward, right before the kernel: Whisper's `.contiguous()`)
            // gives an output whose transpose back is one more copy, saved by the projection that
            // reads it. The fp32 recording's kernel wrote it token by token: no copy there.
            if (attention && al.size >= 4096 && prevId.valid() && classify(dr.allocation(prevId).stack) != kLow &&
                dr.allocation(prevId).size == al.size && dr.allocation(prevId).freeEvent.valid() &&
                attribution.eventPhase[static_cast<size_t>(dr.allocation(prevId).freeEvent.value)] == Phase::Backward &&
                !isAttention(dr.allocation(prevId).stack))
                m_layoutCopy[static_cast<size_t>(id.value)] = 1;
            if (c == kLow)
                lastLow = al.stack;
            if (al.size >= 4096) {
                prevLow = low;
                prevSize = al.size;
                prevId = id;
                // the input of the next products: the last op that is no product and does not
                // work on a product's output, nor a smaller tensor of the same call (a layer
                // norm's saved mean and rstd, over 4 KiB at 32 x 65 tokens: timm's ViT cast
                // those, not the norm's output, +6.3% under autocast)
                const bool statistics = plain.valid() && al.size < plainSize && normSavingInput(al.stack) && [&] {
                    const auto a = stacks.frames(dr.allocation(plain).stack), b = stacks.frames(al.stack);
                    return !a.empty() && std::equal(a.begin(), a.end(), b.begin(), b.end());
                }();
                if ((c != kLow && !onProduct && !statistics) || attention) {
                    plainLow = low;
                    plainSize = al.size;
                    plain = id;
                    lastProduct = StackId{};
                }
            }
        }
    }
    auto isInterpolation = memoByStack([&](StackId st) {
        if (stacks.op(st).starts_with("upsample_") || stacks.op(st).starts_with("_upsample_"))
            return true;
        const auto frames = stacks.frames(st);
        return !frames.empty() && snap.str(snap.frames.frame(frames[0]).name) == "interpolate";
    });
    int64_t fwd = 0, fwdHalf = 0, params = 0, state = 0, stepTemps = 0;
    std::map<uint64_t, int64_t> halfWeights; // half a large weight's size -> weights of that size
    for (size_t a = 0; a < dr.allocations.size(); ++a) {
        const Category c = attribution.allocationCategory[a];
        const int64_t size = static_cast<int64_t>(dr.allocations[a].size);
        m_modelTensors = m_modelTensors || c == Category::Parameter || c == Category::Activation || c == Category::Gradient ||
                         c == Category::OptimizerState;
        if (c == Category::Activation) {
            fwd += size;
            fwdHalf += m_half[a] ? size : 0;
        } else if (c == Category::Parameter) {
            params += size;
            if (static_cast<uint64_t>(size) >= kWeightCopyMin)
                ++halfWeights[static_cast<uint64_t>(size) / 2];
        } else if (c == Category::OptimizerState) {
            state += size;
        } else if (c == Category::Intermediate && attribution.allocationPhase[a] == Phase::OptimizerStep) {
            stepTemps += size;
        }
    }
    m_backwardHalfShare = fwd > 0 ? static_cast<double>(fwdHalf) / static_cast<double>(fwd) : 0.0;
    // Autocast copies the weights of matrix products and convolutions, not an embedding's
    // table. Where the recording names the backward's operators, a weight whose size no
    // matrix product or convolution backward allocates is read by something else (BERT's
    // word embeddings: only `embedding_backward`); without them every large weight counts.
    m_uncastWeight.assign(dr.allocations.size(), 0);
    if (stacks.hasNativeFrames()) {
        std::set<uint64_t> products;
        for (size_t a = 0; a < dr.allocations.size(); ++a) {
            if (attribution.allocationPhase[a] != Phase::Backward)
                continue;
            const std::string_view op = stacks.op(dr.allocations[a].stack);
            if (isProductBackward(op))
                products.insert(dr.allocations[a].size);
        }
        // a frozen weight has no gradient, whatever reads it (a LoRA's base weights, which
        // their products still cast): only weights with gradients of their size are judged
        std::set<uint64_t> gradients;
        for (size_t a = 0; a < dr.allocations.size(); ++a)
            if (attribution.allocationCategory[a] == Category::Gradient)
                gradients.insert(dr.allocations[a].size);
        for (size_t a = 0; a < dr.allocations.size(); ++a)
            m_uncastWeight[a] = attribution.allocationCategory[a] == Category::Parameter &&
                                dr.allocations[a].size >= kWeightCopyMin && gradients.count(dr.allocations[a].size) &&
                                !products.count(dr.allocations[a].size);
        // several weights of one size (an untied model's table and head): as many are cast as
        // an iteration's products make gradients of that size, the first made being the table
        // (measured: GPT-NeoX, whose table got a copy too, put its checkpointed amp run 9.5% under
        // on reserved bytes)
        std::map<uint64_t, std::vector<size_t>> bySize;
        for (size_t a = 0; a < dr.allocations.size(); ++a)
            if (attribution.allocationCategory[a] == Category::Parameter && dr.allocations[a].size >= kWeightCopyMin &&
                !m_uncastWeight[a] && gradients.count(dr.allocations[a].size))
                bySize[dr.allocations[a].size].push_back(a);
        std::erase_if(bySize, [](const auto& kv) { return kv.second.size() < 2; });
        if (!bySize.empty()) {
            std::map<std::pair<size_t, uint64_t>, size_t> made; // (iteration, size) -> product-made gradients
            for (size_t a = 0; a < dr.allocations.size(); ++a) {
                const Allocation& al = dr.allocations[a];
                const int32_t it = attribution.allocationIteration[a];
                if (attribution.allocationCategory[a] != Category::Gradient || it < 0 || !bySize.count(al.size) ||
                    autocastDtypeOf(stacks.op(al.stack)) != AutocastDtype::Low)
                    continue;
                ++made[{static_cast<size_t>(it), al.size}];
            }
            for (auto& [size, weights] : bySize) {
                size_t cast = 0;
                for (const auto& [key, n] : made)
                    if (key.second == size)
                        cast = std::max(cast, n);
                if (cast == 0)
                    continue; // no product gradient of that size recognised: leave them
                for (size_t j = 0; j + cast < weights.size(); ++j)
                    m_uncastWeight[weights[j]] = 1;
            }
        }
    } else {
        // From Python frames: in a forward that looks tokens up (`embedding`), the largest
        // weight, alone of its size, is the vocabulary table [V, H]. With T tokens (the ids'
        // bytes / 8) and the lookup's output T x H x 4, V = weight x T / output; a tied LM head
        // reads the table as a matrix product whose output is T x V x 4. Without one, no copy.
        size_t table = dr.allocations.size();
        uint64_t tableSize = 0;
        int sameSize = 0;
        for (size_t a = 0; a < dr.allocations.size(); ++a) {
            if (attribution.allocationCategory[a] != Category::Parameter)
                continue;
            if (dr.allocations[a].size > tableSize) {
                table = a;
                tableSize = dr.allocations[a].size;
                sameSize = 1;
            } else if (dr.allocations[a].size == tableSize) {
                ++sameSize;
            }
        }
        uint64_t lookup = 0; // the first embedding's output
        uint64_t largestLookup = 0; // the largest allocation an embedding makes (its output, not its indices)
        std::set<uint64_t> products; // sizes of the forward's matrix-product outputs
        for (size_t a = 0; a < dr.allocations.size(); ++a) {
            if (attribution.allocationPhase[a] != Phase::Forward)
                continue;
            if (m_half[a])
                products.insert(dr.allocations[a].size);
            const auto frames = stacks.frames(dr.allocations[a].stack);
            for (size_t k = 0; k < frames.size() && k < 2; ++k)
                if (snap.str(snap.frames.frame(frames[k]).name) == "embedding") {
                    lookup = lookup ? lookup : dr.allocations[a].size;
                    largestLookup = std::max(largestLookup, dr.allocations[a].size);
                }
        }
        // Two tables of one size: the lookup's, the first made, and an untied head whose
        // product makes the logits. With the lookup's output L = T x H x 4, the table
        // V x H x 4 and the logits P = T x V x 4, V^2 = table x P / 4L: a product of that
        // shape tells the head from a second weight of the table's size.
        if (sameSize == 2 && largestLookup > 0 && tableSize >= kWeightCopyMin) {
            const uint64_t l = largestLookup;
            for (uint64_t p : products) {
                const auto v = static_cast<uint64_t>(std::llround(
                    std::sqrt(static_cast<double>(tableSize) * static_cast<double>(p) / (4.0 * static_cast<double>(l)))));
                if (v < 2 || tableSize % (4 * v) != 0)
                    continue;
                const uint64_t h = tableSize / (4 * v);
                if (h == 0 || h == v || l % (4 * h) != 0 || l / (4 * h) * v * 4 != p)
                    continue;
                m_uncastWeight[table] = 1;
                break;
            }
        }
        if (sameSize == 1 && lookup > 0 && tableSize >= kWeightCopyMin) {
            for (size_t a = 0; a < dr.allocations.size(); ++a) {
                const uint64_t ids = dr.allocations[a].size;
                if (attribution.allocationCategory[a] != Category::Input || ids % 8 != 0)
                    continue;
                const uint64_t tokens = ids / 8;
                if (tokens == 0 || lookup % (4 * tokens) != 0 || (tableSize * tokens) % lookup != 0)
                    continue;
                const uint64_t vocab = tableSize * tokens / lookup;
                if (vocab >= 2 && vocab != lookup / (4 * tokens)) {
                    m_uncastWeight[table] = !products.count(tokens * vocab * 4);
                    break;
                }
            }
        }
    }
    // Bytes that do not follow the dtype: dropout's mask (bool, made right before the output
    // it masks, a quarter of an fp32 output's bytes or half a 16-bit one's), and the buffers
    // the backward's reductions (`sum`) allocate, which accumulate in fp32 whatever the
    // tensors' dtype (known where the recording names its operators).
    m_fixedBytes.assign(dr.allocations.size(), 0);
    {
        // made by an op whose name (or its two innermost Python functions' names) holds `word`
        auto named = [&](std::string_view word) {
            return memoByStack([&stacks, &snap, word](StackId st) {
                bool found = contains(stacks.op(st), word);
                const auto frames = stacks.frames(st);
                for (size_t k = 0; k < frames.size() && k < 2 && !found; ++k)
                    found = contains(snap.str(snap.frames.frame(frames[k]).name), word);
                return found;
            });
        };
        auto isDropout = named("dropout");
        auto isMaxPool = named("max_pool");
        size_t prev = dr.allocations.size();
        for (int64_t e = 0; e < static_cast<int64_t>(dr.eventAllocation.size()); ++e) {
            const AllocationId id = dr.eventAllocation[static_cast<size_t>(e)];
            if (!id.valid() || dr.allocation(id).allocEvent.value != e)
                continue;
            const auto a = static_cast<size_t>(id.value);
            if (attribution.allocationPhase[a] == Phase::Backward && stacks.op(dr.allocations[a].stack).starts_with("sum"))
                m_fixedBytes[a] = 1;
            if (prev < dr.allocations.size() && dr.allocations[prev].stack == dr.allocations[a].stack &&
                attribution.allocationPhase[prev] == Phase::Forward && isDropout(dr.allocations[a].stack) &&
                (dr.allocations[prev].size * 4 == dr.allocations[a].size ||
                 dr.allocations[prev].size * 2 == dr.allocations[a].size))
                m_fixedBytes[prev] = 1;
            // max pooling's int64 indices, made right after its output: twice an fp32 output's
            // bytes, four times a 16-bit one's
            if (prev < dr.allocations.size() && dr.allocations[prev].stack == dr.allocations[a].stack &&
                attribution.allocationPhase[a] == Phase::Forward && isMaxPool(dr.allocations[a].stack) &&
                (dr.allocations[prev].size * 2 == dr.allocations[a].size ||
                 dr.allocations[prev].size * 4 == dr.allocations[a].size))
                m_fixedBytes[a] = 1;
            prev = a;
        }
    }
    // Position embeddings are looked up for one sequence ([1, L, H]) and broadcast over the
    // batch: of an iteration's forward embedding outputs, one whose size times a whole number
    // is another's (the tokens', [B, L, H]) follows the sequence, not the batch, once that
    // number is the recorded batch (sizeFactor).
    m_perSequence.assign(dr.allocations.size(), 0);
    {
        auto isEmbedding = memoByStack([&](StackId st) {
            const auto frames = stacks.frames(st);
            return stacks.op(st) == "embedding" ||
                   (!frames.empty() && snap.str(snap.frames.frame(frames[0]).name) == "embedding");
        });
        for (const Iteration& it : attribution.iterations) {
            std::vector<size_t> outputs;
            for (int64_t e = it.firstEvent; e <= it.lastEvent; ++e) {
                const AllocationId id = dr.eventAllocation[static_cast<size_t>(e)];
                if (!id.valid() || dr.allocation(id).allocEvent.value != e || !dr.allocation(id).stack.valid())
                    continue;
                const auto a = static_cast<size_t>(id.value);
                if (attribution.allocationPhase[a] == Phase::Forward && isEmbedding(dr.allocations[a].stack))
                    outputs.push_back(a);
            }
            for (const size_t a : outputs)
                for (const size_t t : outputs) {
                    const uint64_t small = dr.allocations[a].size, large = dr.allocations[t].size;
                    if (small >= 512 && large > small && large % small == 0 && large / small <= 4096)
                        m_perSequence[a] = static_cast<uint32_t>(large / small);
                }
        }
        // transformers' rotary embeddings (the forward `dynamic_rope_update` wraps) make their cos
        // and sin from the positions of one sequence ([1, L, d]) whatever the batch
        auto isRope = memoByStack([&](StackId st) {
            for (const FrameId f : stacks.frames(st))
                if (endsWith(snap.str(snap.frames.frame(f).filename), "modeling_rope_utils.py"))
                    return true;
            return false;
        });
        for (size_t a = 0; a < dr.allocations.size(); ++a)
            if (attribution.allocationPhase[a] == Phase::Forward && isRope(dr.allocations[a].stack) &&
                !keptToEnd(attribution, dr.allocations[a]))
                m_perSequence[a] = kAnyBatch;
    }
    // a reduction's buffer holds fp32 partial results whatever the dtype (reduction_buffers.h)
    m_reductions = reductionBuffers(replay, deviceIndex);
    for (size_t a = 0; a < dr.allocations.size(); ++a)
        if (m_reductions[a].ctas > 0)
            m_fixedBytes[a] = 1;
    m_convWorkspace = convolutionWorkspaces(replay, deviceIndex, attribution, stacks);
    m_convolutionalNetwork = isConvolutionalNetwork(replay, deviceIndex, attribution, stacks);
    for (size_t a = 0; a < dr.allocations.size() && !m_matrixProducts; ++a) {
        const StackId st = dr.allocations[a].stack;
        const std::string_view op = stacks.op(st);
        const auto frames = stacks.frames(st);
        const std::string_view name = frames.empty() ? std::string_view() : snap.str(snap.frames.frame(frames[0]).name);
        const std::string_view file = frames.empty() ? std::string_view() : snap.str(snap.frames.frame(frames[0]).filename);
        m_matrixProducts = op == "mm" || op == "addmm" || op == "bmm" || op == "baddbmm" || op == "matmul" || op == "linear" ||
                           op == "einsum" || name == "linear" || name == "matmul" || name == "bmm" || name == "einsum" ||
                           endsWith(file, "torch/nn/modules/linear.py") ||
                           (attribution.allocationCategory[a] == Category::Intermediate &&
                            keptToEnd(attribution, dr.allocations[a]) && attribution.allocationPhase[a] != Phase::Other);
    }
    // A convolution's backward makes its input's gradient with one workspace, then the weight's
    // gradient and the workspace of its plan. In fp32 cuDNN's weight-gradient plan takes twice
    // the weight's bytes more than the input's (a split reduction: Wav2Vec2's feature
    // extractor, ResNet's 3 x 3 layers, within 300 bytes); at 16 bits the two workspaces are
    // of one size (real runs of both): a 16-bit prediction drops the extra bytes.
    m_filterWorkspaceExtra.assign(dr.allocations.size(), 0);
    if (m_convolutionalNetwork)
        for (size_t a = 2; a < dr.allocations.size(); ++a) {
            const Allocation& w1 = dr.allocations[a - 2];
            const Allocation& g = dr.allocations[a - 1];
            const Allocation& w2 = dr.allocations[a];
            if (!m_convWorkspace[a - 2] || !m_convWorkspace[a] || attribution.allocationPhase[a] != Phase::Backward ||
                !w1.freeEvent.valid() || !g.allocEvent.valid() || w1.freeEvent.value > g.allocEvent.value ||
                g.size < (64u << 10) || w2.size <= w1.size + 2 * g.size || w2.size - w1.size - 2 * g.size >= 1024)
                continue;
            m_filterWorkspaceExtra[a] = 2 * g.size;
        }
    for (size_t a = 0; a < dr.allocations.size() && !m_attention; ++a)
        m_attention = attribution.allocationPhase[a] == Phase::Forward && isAttention(dr.allocations[a].stack);
    if (!stacks.hasNativeFrames() && !m_convolutionalNetwork && m_attention) {
        // From Python frames the backward's reductions are frameless; in a network with
        // attention, a backward temporary of a size that no forward tensor and no weight has
        // is taken for one (BERT's, GPT-2's and the ViT's sums)
        std::set<uint64_t> known;
        for (size_t a = 0; a < dr.allocations.size(); ++a)
            if (attribution.allocationPhase[a] == Phase::Forward || attribution.allocationCategory[a] == Category::Parameter)
                known.insert(dr.allocations[a].size);
        for (size_t a = 0; a < dr.allocations.size(); ++a) {
            const Allocation& al = dr.allocations[a];
            if (attribution.allocationPhase[a] == Phase::Backward && !al.stack.valid() && al.size >= (1 << 20) &&
                attribution.allocationCategory[a] == Category::Intermediate && !al.aliveAtEnd() && !known.count(al.size))
                m_fixedBytes[a] = 1;
        }
    }
    // peft's LoRA adapters: the lines of peft's layers that make tensors of their own or call
    // a dropout (`result + lora_B(lora_A(dropout(x))) * scaling`), not the base layer's call
    m_adapterFp32.assign(dr.allocations.size(), 0);
    {
        std::unordered_map<int32_t, bool> isPeft; // by FrameId
        auto peftFrame = [&](std::span<const FrameId> frames) -> int32_t {
            for (const FrameId f : frames) {
                auto [it, fresh] = isPeft.try_emplace(f.value, false);
                if (fresh)
                    it->second = contains(snap.str(snap.frames.frame(f).filename), "/peft/tuners/");
                if (it->second)
                    return f.value;
            }
            return -1;
        };
        std::set<int32_t> adapterLines;
        for (size_t a = 0; a < dr.allocations.size(); ++a) {
            if (attribution.allocationPhase[a] != Phase::Forward)
                continue;
            const auto frames = stacks.frames(dr.allocations[a].stack);
            const int32_t f = peftFrame(frames);
            if (f >= 0 && (frames.front().value == f || snap.str(snap.frames.frame(frames.front()).name) == "dropout"))
                adapterLines.insert(f);
        }
        int32_t lastOwn = -1; // the current call's last tensor of the adapter's own line
        for (size_t a = 0; a < dr.allocations.size(); ++a) {
            const auto frames = stacks.frames(dr.allocations[a].stack);
            if (attribution.allocationCategory[a] == Category::Parameter) {
                m_adapterFp32[a] = !adapterLines.empty() && peftFrame(frames) >= 0;
                continue;
            }
            if (attribution.allocationPhase[a] != Phase::Forward)
                continue;
            const int32_t f = peftFrame(frames);
            if (f < 0 || !adapterLines.count(f)) {
                if (lastOwn >= 0)
                    m_adapterFp32[static_cast<size_t>(lastOwn)] = 0; // the sum, cast back
                lastOwn = -1;
                continue;
            }
            m_adapterFp32[a] = 1;
            if (frames.front().value == f)
                lastOwn = static_cast<int32_t>(a);
        }
        if (lastOwn >= 0)
            m_adapterFp32[static_cast<size_t>(lastOwn)] = 0;
    }
    m_upcastLoss.assign(dr.allocations.size(), 0);
    {
        auto inLossModule = memoByStack([&](StackId st) {
            return std::ranges::any_of(snap.stacks.frames(st), [&](FrameId f) {
                return contains(snap.str(snap.frames.frame(f).filename), "transformers/loss/");
            });
        });
        for (size_t a = 0; a < dr.allocations.size(); ++a)
            if (attribution.allocationPhase[a] == Phase::Forward)
                m_upcastLoss[a] = inLossModule(dr.allocations[a].stack) ? 1 : 0;
        for (size_t a = 0; a < dr.allocations.size(); ++a) {
            if (attribution.allocationPhase[a] != Phase::Forward || dr.allocations[a].size < 4096)
                continue;
            SizeDtypes& d = m_forwardBySize[dr.allocations[a].size];
            const auto b = static_cast<int64_t>(dr.allocations[a].size);
            d.bytes += b;
            d.upcast += m_upcastLoss[a] ? b : 0;
            d.half += m_half[a] ? b : 0;
        }
        // A backward buffer made while an upcast-loss tensor of its size is alive is one of the
        // loss's own gradients, fp32 whatever the model's dtype. (Other losses' gradients, fp32
        // under autocast too, were tried as such: the T5's amp row went from +6.7% to +13.7%,
        // its recorded peak holding one of them where the model holds two.)
        auto madeWhileAlive = [&](const std::vector<uint8_t>& forward) {
            std::unordered_map<uint64_t, std::vector<const Allocation*>> bySize;
            for (size_t a = 0; a < dr.allocations.size(); ++a)
                if (forward[a] && dr.allocations[a].size >= 4096)
                    bySize[dr.allocations[a].size].push_back(&dr.allocations[a]);
            std::vector<uint8_t> out(dr.allocations.size(), 0);
            for (size_t a = 0; a < dr.allocations.size() && !bySize.empty(); ++a) {
                const Allocation& al = dr.allocations[a];
                if (attribution.allocationPhase[a] != Phase::Backward || !al.allocEvent.valid())
                    continue;
                if (const auto u = bySize.find(al.size); u != bySize.end())
                    for (const Allocation* f : u->second)
                        if (f->activeAfter(al.allocEvent.value - 1)) {
                            out[a] = 1;
                            break;
                        }
            }
            return out;
        };
        m_backwardUpcast = madeWhileAlive(m_upcastLoss);
        m_fp32Scan.assign(dr.allocations.size(), 0);
        {
            auto inScan = memoByStack([&](StackId st) {
                return std::ranges::any_of(snap.stacks.frames(st), [&](FrameId f) {
                    const std::string_view name = snap.str(snap.frames.frame(f).name);
                    return name == "mamba_selective_scan" || name == "selective_scan_ref";
                });
            });
            for (size_t a = 0; a < dr.allocations.size(); ++a)
                if (attribution.allocationPhase[a] == Phase::Forward)
                    m_fp32Scan[a] = inScan(dr.allocations[a].stack) ? 1 : 0;
        }
        m_backwardFp32Scan = madeWhileAlive(m_fp32Scan);
        // In the scan's loop a state update (its most common size) is followed by the token's
        // product with C, a tensor a power of two smaller on the next line: a pair of lines
        // seen at least 16 times
        {
            std::map<std::pair<int32_t, int32_t>, std::vector<ScanProduct>> byLines;
            int32_t previous = -1;
            for (size_t a = 0; a < dr.allocations.size(); ++a) {
                if (!m_fp32Scan[a])
                    continue;
                if (previous >= 0) {
                    const Allocation& st = dr.allocations[static_cast<size_t>(previous)];
                    const Allocation& pr = dr.allocations[a];
                    const auto sf = stacks.frames(st.stack), pf = stacks.frames(pr.stack);
                    if (!sf.empty() && !pf.empty() && sf[0] != pf[0] && pr.size >= 512 && st.size >= 4 * pr.size &&
                        st.size % pr.size == 0 && st.freeEvent.valid())
                        byLines[{sf[0].value, pf[0].value}].push_back({static_cast<int32_t>(a), previous});
                }
                previous = static_cast<int32_t>(a);
            }
            for (const auto& [lines, products] : byLines)
                if (products.size() >= 16)
                    m_scanProducts.insert(m_scanProducts.end(), products.begin(), products.end());
        }
        // A convolution's backward runs in the dtype the convolution ran in: under autocast its
        // input's gradient and its workspaces are 16-bit (Wav2Vec2's feature extractor: 126 MiB
        // real where fp32 made 259; the forward's share of 16-bit bytes, about a third there, put it at
        // +13% allocated). A matrix product's are not taken so (1,841 rows of 2,000 against
        // 1,847): its input's gradient is cast back to an fp32 input's dtype.
        m_convolutionBackwardTemp.assign(dr.allocations.size(), 0);
        if (stacks.hasNativeFrames())
            for (size_t a = 0; a < dr.allocations.size(); ++a)
                m_convolutionBackwardTemp[a] = attribution.allocationPhase[a] == Phase::Backward &&
                                               attribution.allocationCategory[a] == Category::Intermediate &&
                                               contains(stacks.op(dr.allocations[a].stack), "convolution_backward");
        else // from Python frames, of a convolution's backward only its workspaces are known
            for (size_t a = 0; a < dr.allocations.size(); ++a)
                m_convolutionBackwardTemp[a] = attribution.allocationPhase[a] == Phase::Backward && m_convWorkspace[a];
        // per iteration: the logits the upcast copies, and the gradient cast back where the
        // other loss tensors alive beside it are gone
        std::vector<size_t> lossTensors;
        for (size_t a = 0; a < dr.allocations.size(); ++a)
            if (m_backwardUpcast[a] || m_upcastLoss[a])
                lossTensors.push_back(a);
        for (const Iteration& it : attribution.iterations) {
            int32_t first = -1, last = -1;
            for (int64_t e = it.firstEvent; e <= it.lastEvent; ++e) {
                const AllocationId id = dr.eventAllocation[static_cast<size_t>(e)];
                if (!id.valid() || dr.allocation(id).allocEvent.value != e)
                    continue;
                const auto a = static_cast<size_t>(id.value);
                if (first < 0 && m_upcastLoss[a] && attribution.allocationPhase[a] == Phase::Forward &&
                    dr.allocations[a].size >= (1 << 20))
                    first = id.value;
                if (m_backwardUpcast[a] && dr.allocations[a].size >= (1 << 20))
                    last = id.value;
            }
            if (first < 0)
                continue;
            UpcastLoss u{first, -1, 0};
            if (last >= 0 && dr.allocations[static_cast<size_t>(last)].freeEvent.valid()) {
                const Allocation& g = dr.allocations[static_cast<size_t>(last)];
                u.gradient = last;
                u.castAt = g.allocEvent.value;
                for (const size_t a : lossTensors) {
                    const Allocation& x = dr.allocations[a];
                    if (static_cast<int32_t>(a) != last && x.activeAfter(g.allocEvent.value) && x.freeEvent.valid() &&
                        x.freeEvent.value < g.freeEvent.value)
                        u.castAt = std::max(u.castAt, x.freeEvent.value);
                }
            }
            m_upcastLosses.push_back(u);
        }
    }
    m_crossEntropy.assign(dr.allocations.size(), 0);
    {
        auto crossEntropy = memoByStack([&](StackId st) {
            const auto frames = stacks.frames(st);
            if (frames.empty())
                return false;
            const Frame& f = snap.frames.frame(frames[0]);
            return snap.str(f.name) == "cross_entropy" && endsWith(snap.str(f.filename), "torch/nn/functional.py");
        });
        for (size_t a = 0; a < dr.allocations.size(); ++a)
            m_crossEntropy[a] = attribution.allocationPhase[a] == Phase::Forward && !m_upcastLoss[a] &&
                                dr.allocations[a].size >= (1 << 20) && crossEntropy(dr.allocations[a].stack);
        m_crossEntropyGradient.assign(dr.allocations.size(), 0);
        std::vector<size_t> backward; // backward allocations in event order
        for (size_t a = 0; a < dr.allocations.size(); ++a)
            if (attribution.allocationPhase[a] == Phase::Backward && dr.allocations[a].allocEvent.valid())
                backward.push_back(a);
        std::sort(backward.begin(), backward.end(),
                  [&](size_t x, size_t y) { return dr.allocations[x].allocEvent.value < dr.allocations[y].allocEvent.value; });
        for (size_t a = 0; a < dr.allocations.size(); ++a) {
            const Allocation& x = dr.allocations[a];
            if (!m_crossEntropy[a] || !x.freeEvent.valid())
                continue;
            CrossEntropyCall c{static_cast<int32_t>(a), -1, -1};
            for (const size_t b : backward) {
                const Allocation& g = dr.allocations[b];
                if (g.allocEvent.value <= x.allocEvent.value || g.size != x.size)
                    continue;
                if (g.allocEvent.value >= x.freeEvent.value)
                    break;
                (c.nllGradient < 0 ? c.nllGradient : c.softmaxGradient) = static_cast<int32_t>(b);
                if (c.softmaxGradient >= 0)
                    break;
            }
            // logits an interpolation made (fp32 under autocast: DeepLabV3's, upsampled to the
            // labels) reach the loss in fp32: it runs as the fp32 recording ran, its gradients fp32
            bool fp32Input = false;
            for (size_t p = a; p-- > 0;) {
                if (attribution.allocationPhase[p] != Phase::Forward)
                    break;
                if (dr.allocations[p].size < 4096 || m_crossEntropy[p])
                    continue;
                fp32Input = !m_half[p] && isInterpolation(dr.allocations[p].stack);
                break;
            }
            if (c.nllGradient >= 0)
                m_crossEntropyGradient[static_cast<size_t>(c.nllGradient)] = 1;
            if (c.softmaxGradient >= 0)
                m_crossEntropyGradient[static_cast<size_t>(c.softmaxGradient)] = fp32Input ? 1 : 2;
            if (!fp32Input)
                m_crossEntropyCalls.push_back(c);
        }
        m_ampCrossEntropy.assign(dr.allocations.size(), 0);
        // Recorded under autocast, the same call in the trace: the 16-bit log-softmax, nll_loss's
        // fp32 copy of it made next, nll_loss's fp32 gradient (made while the copy lives), its
        // 16-bit cast (made once the copy is freed) and log_softmax's 16-bit gradient.
        for (size_t a = 0; a < dr.allocations.size(); ++a) {
            const Allocation& x = dr.allocations[a];
            if (!m_crossEntropy[a] || !x.freeEvent.valid())
                continue;
            AmpCrossEntropy c;
            c.logSoftmax = static_cast<int32_t>(a);
            for (int64_t e = x.allocEvent.value + 1;
                 e <= x.allocEvent.value + 4 && e < static_cast<int64_t>(dr.eventAllocation.size()) && c.copy < 0; ++e) {
                const AllocationId id = dr.eventAllocation[static_cast<size_t>(e)];
                if (!id.valid())
                    continue;
                const Allocation& y = dr.allocation(id);
                if (y.allocEvent.value == e && m_crossEntropy[static_cast<size_t>(id.value)] && y.size == 2 * x.size &&
                    y.freeEvent.valid())
                    c.copy = id.value;
            }
            if (c.copy < 0)
                continue;
            const Allocation& copy = dr.allocations[static_cast<size_t>(c.copy)];
            for (const size_t b : backward) {
                const Allocation& g = dr.allocations[b];
                if (g.allocEvent.value <= copy.allocEvent.value)
                    continue;
                if (g.allocEvent.value >= x.freeEvent.value)
                    break;
                if (c.nllGradient < 0) {
                    if (g.size == copy.size && copy.activeAfter(g.allocEvent.value))
                        c.nllGradient = static_cast<int32_t>(b);
                } else if (c.cast < 0) {
                    if (g.size == x.size && g.allocEvent.value > copy.freeEvent.value)
                        c.cast = static_cast<int32_t>(b);
                } else if (g.size == x.size) {
                    c.softmaxGradient = static_cast<int32_t>(b);
                    break;
                }
            }
            if (c.softmaxGradient < 0)
                continue;
            m_ampCrossEntropyCalls.push_back(c);
            m_ampCrossEntropy[static_cast<size_t>(c.logSoftmax)] = 2;
            m_ampCrossEntropy[static_cast<size_t>(c.softmaxGradient)] = 2;
            m_ampCrossEntropy[static_cast<size_t>(c.nllGradient)] = 4;
        }
    }
    // An RMS norm squares its input (a full-size tensor freed at once, then its mean over the
    // last dimension on the same line: T5's and Llama's norms). Transformers' norms square an
    // fp32 copy of the input (`.to(torch.float32)`, a no-op in an fp32 recording); in a 16-bit
    // model that copy is a tensor of its own, saved as long as the normalized output it feeds.
    // the norms found squaring their input, and those squaring a copy of it made just before
    // (a 16-bit recording's `.to(torch.float32)`): read for the recorded precision below
    int normsSquared = 0, normsUpcast = 0;
    m_normCopy.assign(dr.allocations.size(), 0);
    for (const Iteration& it : attribution.iterations) {
        std::vector<size_t> fwd; // the iteration's forward allocations, in order
        for (int64_t e = it.firstEvent; e <= it.lastEvent; ++e) {
            const AllocationId id = dr.eventAllocation[static_cast<size_t>(e)];
            if (id.valid() && dr.allocation(id).allocEvent.value == e &&
                attribution.eventPhase[static_cast<size_t>(e)] == Phase::Forward)
                fwd.push_back(static_cast<size_t>(id.value));
        }
        for (size_t k = 0; k + 2 < fwd.size(); ++k) {
            const Allocation& sq = dr.allocations[fwd[k]];
            const Allocation& mean = dr.allocations[fwd[k + 1]];
            // (a mean of one element is a loss's reduction, not a norm's: a segmentation loss's
            // log-softmax over the logits, then its scalar, from Python frames)
            if (sq.size < (64u << 10) || mean.size <= 8 || sq.size % mean.size != 0 || sq.size / mean.size < 64 ||
                !sq.freeEvent.valid() || sq.freeEvent.value > dr.allocations[fwd[k + 2]].allocEvent.value ||
                isAttention(sq.stack) || (stacks.hasNativeFrames() && !stacks.op(sq.stack).starts_with("pow")))
                continue;
            const auto sqFrames = stacks.frames(sq.stack);
            const auto meanFrames = stacks.frames(mean.stack);
            if (sqFrames.empty() || meanFrames.empty() || sqFrames[0] != meanFrames[0])
                continue;
            ++normsSquared;
            const Frame& sf = snap.frames.frame(sqFrames[0]);
            // made by the same call of the norm: its function, the same callers
            auto sameCall = [&](const Allocation& x) {
                const auto xFrames = stacks.frames(x.stack);
                return xFrames.size() == sqFrames.size() && snap.frames.frame(xFrames[0]).filename == sf.filename &&
                       snap.frames.frame(xFrames[0]).name == sf.name && snap.frames.frame(xFrames[0]).line <= sf.line &&
                       std::equal(xFrames.begin() + 1, xFrames.end(), sqFrames.begin() + 1);
            };
            // A layer norm written out centers before it squares (Cohere's: a mean, then x - mean
            // of the input's size, squared): that difference is no copy, and an upcast copy, if
            // the input is 16-bit, comes before the mean.
            size_t c = k;
            if (k >= 2 && dr.allocations[fwd[k - 2]].size == mean.size && sameCall(dr.allocations[fwd[k - 2]]) &&
                dr.allocations[fwd[k - 1]].size == sq.size && sameCall(dr.allocations[fwd[k - 1]]))
                c = k >= 3 ? k - 3 : k;
            else if (k > 0)
                c = k - 1;
            if (c < k) {
                const Allocation& copy = dr.allocations[fwd[c]];
                const std::string_view castOp = stacks.op(copy.stack);
                const bool upcast = copy.size == sq.size && sameCall(copy) &&
                                    (!stacks.hasNativeFrames() || castOp.starts_with("to") || castOp.starts_with("_to_copy") ||
                                     castOp.starts_with("type_as"));
                normsUpcast += upcast;
                if (upcast)
                    m_normCopy[fwd[c]] = 1;
            }
            // the normalized output: the next tensor of the input's size made in the same file.
            // The copy is saved as long as the norm's backward needs it: as long as that output
            // or the reciprocal root made beside the mean (a frozen norm weight saves no output,
            // yet the copy is saved by the square and the product where gradients flow)
            for (size_t j = k + 2; j < fwd.size() && j < k + 8; ++j) {
                const Allocation& out = dr.allocations[fwd[j]];
                const auto outFrames = stacks.frames(out.stack);
                if (out.size == sq.size && !outFrames.empty() &&
                    snap.frames.frame(outFrames[0]).filename == snap.frames.frame(sqFrames[0]).filename) {
                    int64_t until = out.freeEvent.valid() ? out.freeEvent.value : -1;
                    for (size_t r = k + 2; r < j; ++r) {
                        const Allocation& root = dr.allocations[fwd[r]];
                        if (root.size == mean.size && root.freeEvent.valid())
                            until = std::max(until, root.freeEvent.value);
                    }
                    if (until >= 0)
                        m_upcastNorms.push_back({sq.allocEvent.value, static_cast<int32_t>(fwd[k]), until});
                    break;
                }
            }
        }
    }
    // A "gradient" made in an earlier iteration and alive at the end, in a program whose
    // later iterations make their gradients anew, is no parameter's gradient: a library's
    // workspace made in the first backward (cuBLAS's on the autograd thread), bytes that do
    // not change with the dtype.
    m_persistentWorkspace.assign(dr.allocations.size(), 0);
    if (attribution.iterations.size() > 1) {
        const int64_t lastStart = attribution.iterations.back().firstEvent;
        bool anew = false;
        for (size_t a = 0; a < dr.allocations.size() && !anew; ++a)
            anew = attribution.allocationCategory[a] == Category::Gradient && dr.allocations[a].allocEvent.valid() &&
                   dr.allocations[a].allocEvent.value >= attribution.iterations[1].firstEvent;
        for (size_t a = 0; a < dr.allocations.size() && anew; ++a) {
            const Allocation& al = dr.allocations[a];
            m_persistentWorkspace[a] = attribution.allocationCategory[a] == Category::Gradient && keptToEnd(attribution, al) &&
                                       al.allocEvent.valid() && al.allocEvent.value < lastStart;
        }
    }

    // autocast's weight copies: per iteration's forward, up to as many allocations of half a
    // weight's bytes as there are weights of that size, each followed by an allocation of the
    // matrix product's call (the same Python frames and operator)
    m_weightCopy.assign(dr.allocations.size(), 0);
    auto sameCall = [&](StackId a, StackId b) {
        if (a == b)
            return true;
        const auto fa = stacks.frames(a), fb = stacks.frames(b);
        return !fa.empty() && std::equal(fa.begin(), fa.end(), fb.begin(), fb.end()) && stacks.op(a) == stacks.op(b);
    };
    for (const Iteration& it : attribution.iterations) {
        std::map<uint64_t, int64_t> seen;
        AllocationId last;
        auto take = [&](AllocationId next) {
            if (!last.valid())
                return;
            const Allocation& al = dr.allocation(last);
            if (auto h = halfWeights.find(al.size); h != halfWeights.end() && seen[al.size] < h->second && next.valid() &&
                                                    classify(al.stack) == kLow && !isAttention(al.stack) &&
                                                    sameCall(al.stack, dr.allocation(next).stack)) {
                ++seen[al.size];
                m_weightCopy[static_cast<size_t>(last.value)] = 1;
            }
        };
        for (int64_t e = it.firstEvent; e <= it.lastEvent; ++e) {
            const size_t i = static_cast<size_t>(e);
            const AllocationId id = dr.eventAllocation[i];
            if (!id.valid() || dr.allocation(id).allocEvent.value != e || attribution.eventPhase[i] != Phase::Forward)
                continue;
            take(id);
            last = id;
        }
        take(AllocationId{});
    }

    // The trainable parameters: the gradients of one iteration (the one with the most bytes),
    // by size. State is kept for these alone: a LoRA's frozen base weights and an EMA's copies
    // are parameters with neither gradient nor state.
    int64_t trainableBytes = 0;
    {
        auto isGradient = [&](size_t a) {
            return attribution.allocationCategory[a] == Category::Gradient && !m_persistentWorkspace[a] &&
                   dr.allocations[a].allocEvent.valid();
        };
        std::vector<int64_t> bytes(attribution.iterations.size(), 0);
        for (size_t a = 0; a < dr.allocations.size(); ++a)
            if (isGradient(a))
                if (const int32_t it = attribution.allocationIteration[a]; it >= 0)
                    bytes[static_cast<size_t>(it)] += static_cast<int64_t>(dr.allocations[a].size);
        const auto most = std::max_element(bytes.begin(), bytes.end());
        if (most != bytes.end() && *most > 0) {
            const int64_t chosen = most - bytes.begin();
            trainableBytes = *most;
            for (size_t a = 0; a < dr.allocations.size(); ++a)
                if (isGradient(a) && attribution.allocationIteration[a] == chosen) {
                    ++m_gradientSizes[dr.allocations[a].size];
                    // made by a matrix product's backward (where operators are recorded): a matrix's
                    const std::string_view op = stacks.op(dr.allocations[a].stack);
                    if (stacks.hasNativeFrames() && autocastDtypeOf(op) == AutocastDtype::Low && !isConvolutionOp(op) &&
                        !contains(op, "convolution"))
                        ++m_matrixGradientSizes[dr.allocations[a].size];
                    if (stacks.hasNativeFrames() && contains(op, "convolution"))
                        ++m_kernelGradientSizes[dr.allocations[a].size];
                }
        }
    }

    // A weight used twice (tied input and output embeddings) gets a gradient from each use; the
    // backward adds them into a new tensor, the gradient, and frees both at once. The two are a
    // weight's bytes at any batch (measured: a Qwen2 with tied embeddings, whose two 445 MiB
    // partials taken as the batch's put its accumulation 15% under on reserved bytes).
    m_gradPartial.assign(dr.allocations.size(), 0);
    for (size_t g = 0; g < dr.allocations.size(); ++g) {
        const Allocation& grad = dr.allocations[g];
        if (attribution.allocationCategory[g] != Category::Gradient || !grad.allocEvent.valid())
            continue;
        std::vector<size_t> parts;
        for (int64_t e = grad.allocEvent.value + 1;
             e <= grad.allocEvent.value + 8 && e < static_cast<int64_t>(dr.eventAllocation.size()); ++e) {
            const AllocationId id = dr.eventAllocation[static_cast<size_t>(e)];
            if (!id.valid() || static_cast<size_t>(id.value) == g)
                continue;
            const Allocation& al = dr.allocation(id);
            if (al.freeEvent.valid() && al.freeEvent.value == e && al.size == grad.size &&
                attribution.allocationCategory[static_cast<size_t>(id.value)] == Category::Intermediate &&
                attribution.allocationPhase[static_cast<size_t>(id.value)] == Phase::Backward)
                parts.push_back(static_cast<size_t>(id.value));
        }
        if (parts.size() < 2)
            continue;
        size_t first = parts.front();
        for (size_t a : parts) {
            m_gradPartial[a] = 2;
            if (dr.allocations[a].allocEvent.value < dr.allocations[first].allocEvent.value)
                first = a;
        }
        m_gradPartial[first] = 1;
        m_tiedGradients.push_back({static_cast<int32_t>(g), static_cast<int32_t>(first)});
    }

    // A weight used twice in the graph (an encoder run on two inputs) gets its gradient in
    // parts: the first, kept as the gradient, waits for the last, a backward temporary of its
    // size freed at once, added in. Parts are matched to the gradients of their size in order,
    // where an iteration's backward has as many of that size as gradients, each after its own
    // and before its free. A part is a weight's bytes at any batch.
    m_summedPart.assign(dr.allocations.size(), 0);
    for (const Iteration& it : attribution.iterations) {
        std::map<uint64_t, std::pair<std::vector<size_t>, std::vector<size_t>>> bySize; // (gradients, parts)
        for (int64_t e = it.firstEvent; e <= it.lastEvent; ++e) {
            const AllocationId id = dr.eventAllocation[static_cast<size_t>(e)];
            if (!id.valid() || dr.allocation(id).allocEvent.value != e ||
                attribution.eventPhase[static_cast<size_t>(e)] != Phase::Backward)
                continue;
            const Allocation& al = dr.allocation(id);
            const size_t a = static_cast<size_t>(id.value);
            if (al.size < kSummedGradientMin || m_gradPartial[a])
                continue;
            if (attribution.allocationCategory[a] == Category::Gradient)
                bySize[al.size].first.push_back(a);
            else if (attribution.allocationCategory[a] == Category::Intermediate && al.freeEvent.valid() &&
                     al.freeEvent.value - e <= kSummedPartEvents)
                bySize[al.size].second.push_back(a);
        }
        for (const auto& [size, gp] : bySize) {
            const auto& [gradients, parts] = gp;
            bool ordered = !gradients.empty() && gradients.size() == parts.size();
            for (size_t i = 0; ordered && i < gradients.size(); ++i) {
                const Allocation& g = dr.allocations[gradients[i]];
                const Allocation& p = dr.allocations[parts[i]];
                ordered = p.allocEvent.value > g.allocEvent.value &&
                          (!g.freeEvent.valid() || p.allocEvent.value < g.freeEvent.value);
            }
            for (size_t i = 0; ordered && i < gradients.size(); ++i) {
                m_summedInto[static_cast<int32_t>(gradients[i])] = static_cast<int32_t>(parts[i]);
                m_summedPart[parts[i]] = 1;
            }
        }
    }

    // A product's weight gradient (a cast weight's size, made by a matrix product or convolution
    // backward where the recording names operators): under autocast it is made at 16 bits and
    // cast to fp32 (m_productGradient; a tied weight's and a summed gradient's parts aside).
    m_productGradient.assign(dr.allocations.size(), 0);
    {
        std::set<uint64_t> castSizes;
        for (size_t a = 0; a < dr.allocations.size(); ++a)
            if (attribution.allocationCategory[a] == Category::Parameter && dr.allocations[a].size >= kWeightCopyMin &&
                !m_uncastWeight[a])
                castSizes.insert(dr.allocations[a].size);
        for (size_t a = 0; a < dr.allocations.size(); ++a) {
            const Allocation& al = dr.allocations[a];
            if (attribution.allocationCategory[a] != Category::Gradient || attribution.allocationPhase[a] != Phase::Backward ||
                !castSizes.count(al.size) || m_gradPartial[a] || m_summedPart[a] || m_summedInto.count(static_cast<int32_t>(a)))
                continue;
            m_productGradient[a] = !stacks.hasNativeFrames() || isProductBackward(stacks.op(al.stack));
        }
    }

    // the recorded setup
    const int64_t trainable = trainableBytes > 0 && trainableBytes < params ? trainableBytes : params;
    m_recorded.optimizerStates = trainable > 0 ? static_cast<double>(state) / static_cast<double>(trainable) : 0.0;
    m_recorded.stepTemporaries = params > 0 && stepTemps * 2 >= params / 3; // per step, about a parameter's worth
    const double k = m_recorded.optimizerStates;
    if (std::fabs(k - 2) < 0.25) {
        m_recorded.optimizer = OptimizerKind::AdamW;
        m_recorded.optimizerEvidence = "two parameter-sized state tensors per parameter (Adam/AdamW)";
    } else if (std::fabs(k - 1) < 0.25) {
        m_recorded.optimizer = OptimizerKind::SgdMomentum;
        m_recorded.optimizerEvidence = "one parameter-sized state tensor per parameter (SGD with momentum)";
    } else if (k < 0.05) {
        m_recorded.optimizer = OptimizerKind::Sgd;
        m_recorded.optimizerEvidence = state == 0 ? "no optimizer state (SGD)" : "almost no optimizer state (SGD or Adafactor)";
    } else if (std::fabs(k - 0.5) < 0.15) {
        m_recorded.optimizer = OptimizerKind::AdamW8bit;
        m_recorded.optimizerEvidence = "state of half the parameter bytes (8-bit Adam)";
    } else {
        m_recorded.optimizer = OptimizerKind::AdamW;
        m_recorded.optimizerEvidence = "state of " + std::to_string(k) + " x the parameter bytes (taken as AdamW)";
    }
    // autocast: forward allocations of exactly half a large weight (its cast copy)
    int64_t weights = 0, copies = 0;
    for (const auto& [half, n] : halfWeights)
        weights += n;
    if (!attribution.iterations.empty()) {
        const Iteration& it = attribution.iterations[attribution.iterations.size() > 1 ? 1 : 0];
        for (int64_t e = it.firstEvent; e <= it.lastEvent; ++e) {
            const AllocationId id = dr.eventAllocation[static_cast<size_t>(e)];
            copies += id.valid() && dr.allocation(id).allocEvent.value == e && m_weightCopy[static_cast<size_t>(id.value)];
        }
    }
    if (weights > 0 && copies * 2 >= weights) {
        m_recorded.precision = Precision::AmpBf16;
        m_recorded.precisionEvidence = "the forward makes half-size copies of " + std::to_string(copies) + " of " +
                                       std::to_string(weights) + " weights (autocast's casts): mixed precision";
    } else if (normsSquared >= 2 && normsUpcast * 2 >= normsSquared) {
        // transformers' RMS norms square an fp32 copy of their input, a tensor of its own only
        // where the input is 16-bit
        m_recorded.precision = Precision::Bf16;
        m_recorded.precisionEvidence = "the norms square an fp32 copy of their input (" + std::to_string(normsUpcast) + " of " +
                                       std::to_string(normsSquared) +
                                       "), made only from a 16-bit input: a bf16 model (fp16 makes the same sizes; "
                                       "override with --recorded-precision)";
    } else {
        m_recorded.precision = Precision::Fp32;
        m_recorded.precisionEvidence = "no autocast weight copies in the forward: fp32 assumed (pure bf16/fp16 cannot be "
                                       "told from sizes; override with --recorded-precision)";
    }
    // a recording that checkpoints: module code allocating in the backward
    for (size_t a = 0; a < dr.allocations.size(); ++a) {
        if (attribution.allocationPhase[a] != Phase::Backward || !dr.allocations[a].stack.valid())
            continue;
        for (FrameId f : snap.stacks.frames(dr.allocations[a].stack))
            if (endsWith(snap.str(snap.frames.frame(f).filename), "utils/checkpoint.py")) {
                m_recorded.checkpointedBlocks = std::max(m_recorded.checkpointedBlocks, 1);
                break;
            }
    }
}

std::vector<uint8_t> ModelWhatIf::fixedAtAnyBatch() const
{
    std::vector<uint8_t> fixed = m_gradPartial;
    for (size_t a = 0; a < fixed.size() && a < m_summedPart.size(); ++a)
        fixed[a] |= m_summedPart[a];
    if (isAmp(m_recorded.precision))
        for (size_t a = 0; a < fixed.size() && a < m_weightCopy.size(); ++a)
            fixed[a] |= m_weightCopy[a];
    for (size_t a = 0; a < fixed.size() && a < m_perSequence.size(); ++a)
        fixed[a] |= isOneSequences(a);
    return fixed;
}

bool ModelWhatIf::isOneSequences(size_t a) const
{
    // kAnyBatch, or a tensor the recorded batch's times smaller than its batch-sized counterpart
    // (known once the recorded batch is)
    return a < m_perSequence.size() &&
           (m_perSequence[a] == kAnyBatch || (m_perSequence[a] > 0 && m_recorded.batchKnown &&
                                              m_perSequence[a] == static_cast<uint32_t>(std::llround(m_recorded.batch))));
}

bool ModelWhatIf::isLowUnderAutocast(int32_t origin) const
{
    return origin >= 0 && static_cast<size_t>(origin) < m_half.size() && m_half[static_cast<size_t>(origin)];
}

double ModelWhatIf::sizeFactor(int32_t origin, Precision from, Precision to, double batchFactor, double seqFactor) const
{
    if (origin < 0 || static_cast<size_t>(origin) >= m_attribution.allocationCategory.size())
        return 1.0;
    const AllocationId id{origin};
    const Category c = m_attribution.category(id);
    const Phase p = m_attribution.allocationPhase[static_cast<size_t>(origin)];
    const DeviceReplay& dr = m_replay.devices[m_index];
    // autocast's weight copies in a mixed-precision recording are weights' bytes, whatever the
    // batch (in an fp32 recording the same test finds activations of half a weight's size)
    double f = scalesWithBatch(m_attribution, dr, id) && !(isAmp(from) && m_weightCopy[static_cast<size_t>(origin)]) &&
                       !m_gradPartial[static_cast<size_t>(origin)] && !m_summedPart[static_cast<size_t>(origin)]
                   ? reductionBufferFactor(m_reductions[static_cast<size_t>(origin)], batchFactor)
                   : 1.0;
    if (isOneSequences(static_cast<size_t>(origin)))
        f = seqFactor; // one sequence's, broadcast over the batch
    if (m_quadratic[static_cast<size_t>(origin)])
        f *= seqFactor; // L x L: once more L / L0
    if (from == to || (m_adapterFp32[static_cast<size_t>(origin)] && !isAmp(from) && !isAmp(to)))
        return f;
    if ((c == Category::Intermediate && keptToEnd(m_attribution, dr.allocation(id))) ||
        m_persistentWorkspace[static_cast<size_t>(origin)] || m_fixedBytes[static_cast<size_t>(origin)] ||
        m_mathAttention[static_cast<size_t>(origin)] || m_fp32Scan[static_cast<size_t>(origin)] ||
        m_backwardFp32Scan[static_cast<size_t>(origin)] ||
        (m_fp32Softmax[static_cast<size_t>(origin)] && !isAmp(from) && !isAmp(to)) ||
        (m_normCopy[static_cast<size_t>(origin)] && (from == Precision::Bf16 || from == Precision::Fp16) &&
         to == Precision::Fp32))
        return f; // a library's workspace (cuBLAS), a mask, a reduction's buffer, fp32 math: bytes, not elements
    if (m_summedPart[static_cast<size_t>(origin)])
        return f * weightBytes(to) / weightBytes(from); // a gradient's part
    if (isAmp(from) && !isAmp(to) && m_ampCrossEntropy[static_cast<size_t>(origin)])
        return f * activationBytes(to, false) / m_ampCrossEntropy[static_cast<size_t>(origin)];
    switch (c) {
    case Category::Parameter:
    case Category::Gradient:
    case Category::OptimizerState: return f * weightBytes(to) / weightBytes(from);
    case Category::Input:
        if (dr.allocation(id).size >= kFloatInputMin)
            f *= activationBytes(to, false) / activationBytes(from, false);
        return f;
    case Category::Other: return f;
    case Category::Activation:
    case Category::Intermediate: break;
    }
    if (p == Phase::OptimizerStep || p == Phase::ZeroGrad)
        return f * weightBytes(to) / weightBytes(from);
    if (p == Phase::Backward) {
        // No frames in the backward: under autocast, the forward's share of autocast-halved
        // bytes. In a pure 16-bit model a gradient has its tensor's dtype: a buffer the size
        // of forward tensors made in an upcast loss stays fp32 in their share.
        const auto bySize = m_forwardBySize.find(dr.allocation(id).size);
        auto avg = [&](Precision q) {
            if (isAmp(q) && m_backwardUpcast[static_cast<size_t>(origin)])
                return 4.0;
            if (isAmp(q) && m_convolutionBackwardTemp[static_cast<size_t>(origin)])
                return activationBytes(q, true);
            if (isAmp(q) && m_crossEntropyGradient[static_cast<size_t>(origin)])
                return m_crossEntropyGradient[static_cast<size_t>(origin)] == 1 ? 4.0 : 2.0;
            // recorded under autocast: a gradient has the dtype of the forward tensors of its
            // bytes (the logits' gradient is 16-bit like the logits)
            if (isAmp(q) && q == from && bySize != m_forwardBySize.end() && bySize->second.bytes > 0) {
                const double share = static_cast<double>(bySize->second.half) / static_cast<double>(bySize->second.bytes);
                return share * activationBytes(q, true) + (1 - share) * activationBytes(q, false);
            }
            if (isAmp(q) || q == Precision::Fp32 || bySize == m_forwardBySize.end() || bySize->second.bytes == 0)
                return m_backwardHalfShare * activationBytes(q, true) + (1 - m_backwardHalfShare) * activationBytes(q, false);
            const double upcast = bySize->second.upcast > 0 && m_backwardUpcast[static_cast<size_t>(origin)] ? 1.0 : 0.0;
            return upcast * 4.0 + (1 - upcast) * activationBytes(q, false);
        };
        return f * avg(to) / avg(from);
    }
    const bool mm = isLowUnderAutocast(origin);
    if (m_upcastLoss[static_cast<size_t>(origin)] && !isAmp(to))
        return f; // transformers' loss runs in fp32 whatever the model's dtype
    return f * activationBytes(to, mm) / activationBytes(from, mm);
}

std::pair<double, std::string> ModelWhatIf::cost(const ModelChanges& changes) const
{
    double extra = 0;
    std::string words;
    auto add = [&](const std::string& w) { words += (words.empty() ? "" : ", ") + w; };
    if (changes.checkpoint && m_blocks.count() > 0) {
        // recomputation: the checkpointed blocks' share of the forward's activation bytes,
        // the forward being about a third of a step's compute
        int64_t all = 0, in = 0;
        const DeviceReplay& dr = m_replay.devices[m_index];
        for (size_t it = 0; it < m_attribution.iterations.size(); ++it) {
            const auto& blocks = m_blocks.perIteration[it];
            for (int64_t e = m_attribution.iterations[it].firstEvent; e <= m_attribution.iterations[it].lastEvent; ++e) {
                const AllocationId id = dr.eventAllocation[static_cast<size_t>(e)];
                if (!id.valid() || dr.allocation(id).allocEvent.value != e || m_attribution.category(id) != Category::Activation)
                    continue;
                const int64_t s = static_cast<int64_t>(dr.allocation(id).size);
                all += s;
                for (const BlockSpan& b : blocks)
                    if (e >= b.firstEvent && e <= b.lastEvent && ForwardBlocks::checkpointed(b, *changes.checkpoint))
                        in += s;
            }
        }
        const double share = all > 0 ? static_cast<double>(in) / static_cast<double>(all) / 3.0 : 0.0;
        extra += share;
        add("recompute ~" + std::to_string(static_cast<int>(std::lround(share * 100))) + "% of a step");
    }
    // accumulation costs steps only where there is a step: a trace without training (inference)
    // runs 1/K of the batch once, which costs nothing
    if (changes.accumulate > 1 && m_trains)
        add(std::to_string(changes.accumulate) + " micro-batches a step");
    if (changes.precision && *changes.precision != m_recorded.precision && m_modelTensors)
        add("numerics (" + std::string(precisionName(*changes.precision)) + ")");
    if (changes.optimizer && *changes.optimizer != m_recorded.optimizer)
        add("another optimizer (" + std::string(optimizerName(*changes.optimizer)) + ")");
    // more GPUs cost more than any change one GPU can make: the plan lists them after those
    if (changes.shard && changes.shard->ranks > 1) {
        extra += changes.shard->ranks - 1;
        add(std::to_string(changes.shard->ranks) + " GPUs (" + std::string(shardKindName(changes.shard->kind)) +
            "), each a batch of the recorded size");
    }
    return {extra, words.empty() ? std::string("none") : words};
}

OpStream ModelWhatIf::build(const ModelChanges& changes, std::vector<std::string>* notes) const
{
    const DeviceReplay& dr = m_replay.devices[m_index];
    const DeviceAttribution& at = m_attribution;
    auto note = [&](const std::string& s) {
        if (notes)
            notes->push_back(s);
    };
    OpStream s = opsFromRecording(m_replay, m_index);
    const size_t allocCount = dr.allocations.size();
    for (TraceOp& op : s.ops)
        if (op.origin >= 0 && static_cast<size_t>(op.origin) < allocCount)
            op.category = at.allocationCategory[static_cast<size_t>(op.origin)];
    auto cat = [&](int32_t o) {
        return o >= 0 && static_cast<size_t>(o) < allocCount ? at.allocationCategory[static_cast<size_t>(o)] : Category::Other;
    };
    const Precision from = m_recorded.precision;
    const Precision to = changes.precision.value_or(from);
    const int K = std::max(1, changes.accumulate);
    double batchFactor = 1.0;
    if (changes.batch)
        batchFactor *= *changes.batch / m_recorded.batch;
    if (changes.seq)
        batchFactor *= *changes.seq / m_recorded.seq;
    batchFactor /= K;
    if (!(batchFactor > 0))
        throw std::invalid_argument("batch and sequence must be > 0");

    const double seqFactor = changes.seq ? *changes.seq / m_recorded.seq : 1.0;
    // changes that find nothing to act on say so, rather than predict the recorded peak
    if (m_opensMidRun)
        note("the trace opens mid-run (the allocator's ring buffer dropped its start, or recording began late): the "
             "replay starts from an allocator holding only the tensors alive at its start, not the real run's "
             "segments, so the reserved bytes may be off by the real run's fragmentation (measured on a Qwen2 cut at "
             "30% and 60% of its trace, unchanged: +6% and -12%); the allocated bytes are not affected");
    if (changes.precision && to != from && !m_modelTensors)
        note("no parameters, activations, gradients or optimizer state found: --precision changes nothing");
    if (m_convolutionalNetwork && ((changes.precision && to != from) || batchFactor != 1.0))
        note("a convolutional network: cuDNN picks each convolution's algorithm, and with it the workspace, for the "
             "batch and dtype it runs at, and the prediction scales the recorded workspaces. Where cuDNN chose "
             "otherwise in measured runs the allocated peak was up to 9% higher at 16 bits (EfficientNet's and "
             "MobileNetV2's 320-to-1280 head: a 50 MiB weight-gradient workspace the fp32 run did without) and up to "
             "13% higher at half the batch (ShuffleNetV2: a 29 MiB one)");
    if (changes.precision && to != from && std::find(m_fp32Scan.begin(), m_fp32Scan.end(), 1) != m_fp32Scan.end())
        note("a reference selective scan (Mamba without mamba_ssm's fused kernels: transformers' mamba_selective_scan, "
             "selective_scan_ref) computes in fp32 at any precision: its tensors keep their bytes, and at 16 bits each "
             "token's product reads a 16-bit copy of the state. With the fused kernels installed the scan keeps none of "
             "these tensors: record again with them");
    if (const std::string n = reductionCapNote(m_reductions, dr, batchFactor); !n.empty())
        note(n);
    // the sequence length of the grouped-query attention calls that fp32 moves to the math kernel
    uint64_t gqaSeq = 0;
    if (to == Precision::Fp32 && from != Precision::Fp32 && !m_gqaCalls.empty() && !changes.checkpoint) {
        const uint64_t lse = m_gqaCalls.front().logSumExp;
        const auto b = static_cast<uint64_t>(std::llround(m_recorded.batch));
        if (m_recorded.seqKnown)
            gqaSeq = static_cast<uint64_t>(std::llround(m_recorded.seq));
        else if (m_recorded.batchKnown && b > 0)
            // the ids, or the ids of a next-token loss with one more token (shifted by one)
            for (uint64_t ids : m_inputSizes) {
                if ((ids / 8) % b != 0 || ids / 8 / b < 2)
                    continue;
                for (uint64_t l : {ids / 8 / b, ids / 8 / b - 1})
                    if (gqaSeq == 0 && (lse / 4) % (b * l) == 0)
                        gqaSeq = l;
            }
        for (const GqaCall& g : m_gqaCalls)
            if (gqaSeq == 0 || g.logSumExp % (4 * gqaSeq) != 0)
                gqaSeq = 0;
    }
    const bool gqaMath = gqaSeq > 0;
    if (to == Precision::Fp32 && from != Precision::Fp32 && !m_gqaCalls.empty() && !gqaMath)
        note(changes.checkpoint
                 ? "the recording's grouped-query attention ran at 16 bits in a fused kernel; in fp32 torch takes the "
                   "math kernel, whose batch x heads x length x length scores a checkpointed block also makes again in "
                   "the backward: not modelled, the prediction may be low (a Qwen2 without them: -11.7%)"
                 : "the recording's grouped-query attention ran at 16 bits in a fused kernel; in fp32 torch takes the "
                   "math kernel, whose batch x heads x length x length scores need the sequence length: give "
                   "--recorded-seq (without them the prediction may be low: a Qwen2, -11.7%)");
    // --- attention at 16 bits runs the flash kernel: none of the math kernel's tensors but its
    // output, and its inputs saved for the backward
    if (from == Precision::Fp32 && to != Precision::Fp32 && !m_flashCalls.empty()) {
        std::set<uint32_t> drop;
        std::map<uint32_t, int64_t> keep; // input -> where the backward frees it
        for (const FlashCall& c : m_flashCalls) {
            for (int32_t a : c.dropped)
                drop.insert(static_cast<uint32_t>(a));
            for (int32_t a : c.inputs)
                keep[static_cast<uint32_t>(a)] = c.saveUntil;
        }
        std::erase_if(s.ops, [&](const TraceOp& op) {
            return op.origin >= 0 && static_cast<uint32_t>(op.origin) == op.key && drop.count(op.key);
        });
        std::vector<TraceOp> moved;
        delayFrees(s.ops, keep, moved);
        insertAfterEvents(s.ops, std::move(moved));
    }
    // --- an RMS norm's fp32 copy of its 16-bit input (see m_upcastNorms); under checkpointing
    // the recomputation decides what lives
    if (from == Precision::Fp32 && (to == Precision::Bf16 || to == Precision::Fp16) && !changes.checkpoint) {
        std::vector<TraceOp> extra;
        for (const UpcastNorm& n : m_upcastNorms) {
            const Allocation& sq = dr.allocations[static_cast<size_t>(n.square)];
            const uint32_t key = s.newKey();
            extra.push_back({TraceOp::Kind::Alloc, Category::Activation, key, -1,
                             scaled(sq.size, sizeFactor(n.square, from, from, batchFactor, seqFactor)), sq.stream, n.event - 1});
            extra.push_back({TraceOp::Kind::Free, Category::Other, key, -1, 0, sq.stream, n.freeEvent});
        }
        insertAfterEvents(s.ops, std::move(extra));
    }
    // --- a reference scan's per-token 16-bit copies of its fp32 state (see m_scanProducts)
    if (from == Precision::Fp32 && to != Precision::Fp32 && !changes.checkpoint && !m_scanProducts.empty()) {
        std::vector<TraceOp> extra;
        for (const ScanProduct& p : m_scanProducts) {
            const Allocation& st = dr.allocations[static_cast<size_t>(p.state)];
            const Allocation& pr = dr.allocations[static_cast<size_t>(p.product)];
            const uint32_t key = s.newKey();
            extra.push_back({TraceOp::Kind::Alloc, Category::Activation, key, -1,
                             scaled(st.size, sizeFactor(p.state, from, from, batchFactor, seqFactor)) / 2, st.stream,
                             pr.allocEvent.value - 1});
            extra.push_back({TraceOp::Kind::Free, Category::Other, key, -1, 0, st.stream, st.freeEvent.value});
        }
        insertAfterEvents(s.ops, std::move(extra));
    }
    // --- sizes: precision, batch, sequence, micro-batch
    for (TraceOp& op : s.ops)
        if (op.kind == TraceOp::Kind::Alloc) {
            const uint64_t extra = op.origin >= 0 && static_cast<size_t>(op.origin) < m_filterWorkspaceExtra.size()
                                       ? m_filterWorkspaceExtra[static_cast<size_t>(op.origin)]
                                       : 0;
            const double f = sizeFactor(op.origin, from, to, batchFactor, seqFactor);
            if (extra > 0 && extra < op.size && from == Precision::Fp32 && to != Precision::Fp32)
                op.size = scaled(op.size - extra, f);
            else
                op.size = scaled(op.size, f);
        }

    // --- grouped-query attention recorded in a fused kernel at 16 bits (m_gqaCalls) runs the
    // math kernel in fp32: per call, k and v repeated to every head, the query and key scaled
    // and the value kept for the backward, the B x H x L x L scores and their softmax (kept),
    // a bool mask of the scores; the output is not saved. Its backward makes three tensors of
    // the scores' size while the softmax lives (measured on a Qwen2's fp32 run). L comes from
    // --recorded-seq, else from the token ids (B x L x 8 bytes) and the log-sum-exp (B x H x L x 4).
    if (gqaMath) {
        std::vector<TraceOp> extra;
        std::set<uint32_t> drop;
        std::map<uint32_t, int64_t> movedFrees;
        for (const GqaCall& g : m_gqaCalls) {
            const Allocation& out = dr.allocations[static_cast<size_t>(g.output)];
            const uint64_t t = scaled(out.size, sizeFactor(g.output, from, to, batchFactor, seqFactor));
            const auto sc = static_cast<uint64_t>(static_cast<double>(g.logSumExp) * static_cast<double>(gqaSeq) * batchFactor *
                                                  seqFactor);
            const int64_t e = out.allocEvent.value;
            auto alloc = [&](Category c, uint64_t bytes, int64_t at) {
                const uint32_t key = s.newKey();
                extra.push_back({TraceOp::Kind::Alloc, c, key, -1, bytes, out.stream, at});
                return key;
            };
            auto release = [&](uint32_t key, int64_t at) {
                extra.push_back({TraceOp::Kind::Free, Category::Other, key, -1, 0, out.stream, at});
            };
            const uint32_t repeatedK = alloc(Category::Intermediate, t, e - 1);
            const uint32_t repeatedV = alloc(Category::Intermediate, t, e - 1);
            const uint32_t saved[3] = {alloc(Category::Activation, t, e - 1), alloc(Category::Activation, t, e - 1),
                                       alloc(Category::Activation, t, e - 1)};
            const uint32_t scores = alloc(Category::Intermediate, sc, e - 1);
            const uint32_t softmax = alloc(Category::Activation, sc, e - 1);
            const uint32_t masked = alloc(Category::Intermediate, sc / 4, e - 1);
            release(masked, e - 1);
            release(scores, e - 1);
            release(repeatedV, e);
            release(repeatedK, e);
            const int64_t b = g.backwardAt - 1;
            const uint32_t g1 = alloc(Category::Intermediate, sc, b);
            const uint32_t g2 = alloc(Category::Intermediate, sc, b);
            const uint32_t g3 = alloc(Category::Intermediate, sc, b);
            release(g3, b);
            release(g1, b);
            release(softmax, b);
            for (uint32_t k : saved)
                release(k, b);
            release(g2, b);
            for (int32_t o : g.others)
                drop.insert(static_cast<uint32_t>(o));
            if (g.after >= 0)
                movedFrees[static_cast<uint32_t>(g.output)] = g.after;
        }
        std::erase_if(s.ops, [&](const TraceOp& op) {
            return op.origin >= 0 && static_cast<uint32_t>(op.origin) == op.key && drop.count(op.key);
        });
        takeFrees(s.ops, movedFrees, extra);
        insertAfterEvents(s.ops, std::move(extra));
    }

    // --- transformers' loss upcasts 16-bit logits (`logits.float()`, a no-op in an fp32
    // recording): an fp32 copy lives while the log-softmax is made, and the backward casts
    // the logits' fp32 gradient back to 16 bits, the cast taking over its lifetime
    if (from == Precision::Fp32 && to != Precision::Fp32 && !m_upcastLoss.empty()) {
        std::vector<TraceOp> extra;
        std::map<uint32_t, int64_t> movedFrees; // recorded key -> new free event
        for (const UpcastLoss& u : m_upcastLosses) {
            const Allocation& f = dr.allocations[static_cast<size_t>(u.logits)];
            const uint32_t copy = s.newKey();
            extra.push_back({TraceOp::Kind::Alloc, Category::Intermediate, copy, -1,
                             scaled(f.size, sizeFactor(u.logits, from, to, batchFactor, seqFactor)), f.stream,
                             f.allocEvent.value - 1});
            extra.push_back({TraceOp::Kind::Free, Category::Other, copy, -1, 0, f.stream, f.allocEvent.value});
            if (u.gradient < 0)
                continue;
            const Allocation& g = dr.allocations[static_cast<size_t>(u.gradient)];
            const uint32_t cast = s.newKey();
            extra.push_back({TraceOp::Kind::Alloc, Category::Intermediate, cast, -1,
                             scaled(g.size, sizeFactor(u.gradient, from, to, batchFactor, seqFactor)) / 2, g.stream, u.castAt});
            movedFrees[static_cast<uint32_t>(u.gradient)] = u.castAt;
            extra.push_back({TraceOp::Kind::Free, Category::Other, cast, -1, 0, g.stream, g.freeEvent.value});
        }
        takeFrees(s.ops, movedFrees, extra);
        insertAfterEvents(s.ops, std::move(extra));
    }

    // --- cross_entropy recorded under autocast (m_ampCrossEntropyCalls), run without it: one
    // log-softmax and its gradients in the logits' dtype; nll_loss's copy and its gradient's
    // cast go, and that gradient lives as long as the cast did (log_softmax's gradient is made
    // while it lives, as an fp32 or a pure 16-bit run makes them)
    if (isAmp(from) && !isAmp(to) && !m_ampCrossEntropyCalls.empty()) {
        std::set<uint32_t> gone;
        std::map<uint32_t, int64_t> movedFrees;
        for (const AmpCrossEntropy& c : m_ampCrossEntropyCalls) {
            gone.insert(static_cast<uint32_t>(c.copy));
            gone.insert(static_cast<uint32_t>(c.cast));
            const Allocation& cast = dr.allocations[static_cast<size_t>(c.cast)];
            if (cast.freeEvent.valid())
                movedFrees[static_cast<uint32_t>(c.nllGradient)] = cast.freeEvent.value;
        }
        std::erase_if(s.ops, [&](const TraceOp& op) {
            return op.kind != TraceOp::Kind::EmptyCache && op.kind != TraceOp::Kind::Probe && gone.count(op.key);
        });
        std::vector<TraceOp> moved;
        takeFrees(s.ops, movedFrees, moved);
        insertAfterEvents(s.ops, std::move(moved));
    }

    // --- cross_entropy under autocast (m_crossEntropyCalls): its 16-bit log-softmax beside the
    // fp32 copy nll_loss saves; in the backward nll_loss frees that copy once its fp32 gradient
    // is made, which is cast to 16 bits and freed before log_softmax's 16-bit gradient is made
    if (from == Precision::Fp32 && isAmp(to) && !m_crossEntropyCalls.empty()) {
        std::vector<TraceOp> extra;
        std::map<uint32_t, int64_t> movedFrees; // recorded key -> new free event
        for (const CrossEntropyCall& c : m_crossEntropyCalls) {
            const Allocation& x = dr.allocations[static_cast<size_t>(c.logSoftmax)];
            const uint64_t half = scaled(x.size, sizeFactor(c.logSoftmax, from, to, batchFactor, seqFactor)) / 2;
            const uint32_t key = s.newKey();
            extra.push_back({TraceOp::Kind::Alloc, Category::Activation, key, -1, half, x.stream, x.allocEvent.value - 1});
            extra.push_back({TraceOp::Kind::Free, Category::Other, key, -1, 0, x.stream, x.freeEvent.value});
            if (c.nllGradient < 0)
                continue;
            const Allocation& g = dr.allocations[static_cast<size_t>(c.nllGradient)];
            movedFrees[static_cast<uint32_t>(c.logSoftmax)] = g.allocEvent.value;
            const uint32_t cast = s.newKey();
            extra.push_back({TraceOp::Kind::Alloc, Category::Intermediate, cast, -1, half, g.stream, g.allocEvent.value});
            if (c.softmaxGradient < 0)
                continue;
            const int64_t next = dr.allocations[static_cast<size_t>(c.softmaxGradient)].allocEvent.value;
            movedFrees[static_cast<uint32_t>(c.nllGradient)] = next - 1;
            extra.push_back({TraceOp::Kind::Free, Category::Other, cast, -1, 0, g.stream, next});
        }
        std::vector<TraceOp> moved; // first: the fp32 copy goes before the cast is made
        takeFrees(s.ops, movedFrees, moved);
        insertAfterEvents(s.ops, std::move(moved));
        insertAfterEvents(s.ops, std::move(extra));
    }

    // blocks the edit recomputes (the recording checkpoints none) and whether an event lies in one
    const bool checkpointing = changes.checkpoint && m_blocks.count() > 0 && m_recorded.checkpointedBlocks == 0;
    auto inCheckpointedBlock = [&](int64_t e) {
        if (!checkpointing)
            return false;
        for (size_t it = 0; it < at.iterations.size(); ++it)
            if (e >= at.iterations[it].firstEvent && e <= at.iterations[it].lastEvent)
                for (const BlockSpan& b : m_blocks.perIteration[it])
                    if (e >= b.firstEvent && e <= b.lastEvent)
                        return ForwardBlocks::checkpointed(b, *changes.checkpoint);
        return false;
    };

    // --- autocast's weight copies
    const bool addCopies = isAmp(to) && !isAmp(from);
    const bool dropCopies = isAmp(from) && !isAmp(to);
    std::vector<IterationRanges> ranges;
    for (const Iteration& it : at.iterations)
        ranges.push_back(rangesOf(it, at));
    if (dropCopies) {
        std::erase_if(s.ops, [&](const TraceOp& op) {
            return (op.kind == TraceOp::Kind::Alloc || op.kind == TraceOp::Kind::Free ||
                    op.kind == TraceOp::Kind::FreeRequested) &&
                   op.origin >= 0 && op.key == static_cast<uint32_t>(op.origin) && m_weightCopy[static_cast<size_t>(op.origin)];
        });
    }
    if (addCopies) {
        struct Weight {
            uint64_t half, stream;
            bool frozen; // no gradient of its size: autocast's cache keeps only casts of weights that require grad
        };
        std::vector<Weight> weights;
        for (size_t a = 0; a < allocCount; ++a)
            if (at.allocationCategory[a] == Category::Parameter && dr.allocations[a].size >= kWeightCopyMin && !m_uncastWeight[a])
                weights.push_back({dr.allocations[a].size / 2, dr.allocations[a].stream,
                                   !m_gradientSizes.empty() && !m_gradientSizes.count(dr.allocations[a].size)});
        std::vector<TraceOp> extra;
        for (const IterationRanges& r : ranges) {
            if (r.forwardStart < 0)
                continue;
            // saved for the backward; under checkpointing of every block nothing saves them
            // and autocast's cache lets them go when the forward ends (the recomputation
            // casts a block's weights again, a block at a time)
            const bool unsaved = changes.checkpoint && *changes.checkpoint < 0 && m_blocks.count() > 0 &&
                                 m_recorded.checkpointedBlocks == 0 && r.backwardStart >= 0;
            // without the cast cache (Lightning) the checkpointed blocks' casts die with their
            // ops, and what casts the rest (a head) are a few weights: none kept
            if (unsaved && m_recorded.lightning)
                continue;
            const int64_t end = unsaved ? r.backwardStart - 1 : r.backwardEnd >= 0 ? r.backwardEnd : r.forwardStart;
            // Saved by the op that used it, a copy dies when that op's backward has run: where
            // the backward makes a gradient of its weight's size (copies of one size are
            // interchangeable), not at the backward's end (measured: a ResNet-18's copies go
            // one by one, in reverse, through its backward). Checkpointing recomputes the ops.
            std::map<uint64_t, std::deque<int64_t>> gradientsAt; // weight bytes -> the backward's gradients of that size
            if (!changes.checkpoint && r.backwardStart >= 0)
                for (int64_t e = r.backwardStart; e <= r.backwardEnd; ++e) {
                    const AllocationId id = dr.eventAllocation[static_cast<size_t>(e)];
                    if (id.valid() && dr.allocation(id).allocEvent.value == e &&
                        at.allocationCategory[static_cast<size_t>(id.value)] == Category::Gradient)
                        gradientsAt[dr.allocation(id).size].push_back(e);
                }
            for (const Weight& w : weights) {
                if (unsaved && w.frozen) // a LoRA's frozen base: no cache, and inside the blocks nothing saves its casts
                    continue;
                int64_t dies = end;
                if (auto g = gradientsAt.find(2 * w.half); g != gradientsAt.end() && !g->second.empty()) {
                    dies = g->second.front();
                    g->second.pop_front();
                }
                const uint32_t key = s.newKey();
                extra.push_back({TraceOp::Kind::Alloc, Category::Activation, key, -1, w.half, w.stream, r.forwardStart});
                extra.push_back({TraceOp::Kind::Free, Category::Other, key, -1, 0, w.stream, dies});
            }
        }
        // a formula's fp32 result, read by one matrix product that saves its own copy, is
        // freed right after that product instead of when the backward used it (under
        // checkpointing the blocks' recomputation decides its lifetime)
        if (!checkpointing)
            takeFrees(
                s.ops,
                [&](const TraceOp& op) {
                const auto c = m_consumedAt.find(op.origin);
                return c != m_consumedAt.end() && op.event > c->second ? c->second : int64_t{-1};
                },
                extra);
        // autocast's low-precision copies of fp32 inputs to matrix products, kept as long as the product's output
        for (size_t a = 0; a < allocCount; ++a) {
            const Allocation& al = dr.allocations[a];
            if (!m_castBytes[a] || !al.allocEvent.valid())
                continue;
            const uint32_t key = s.newKey();
            extra.push_back({TraceOp::Kind::Alloc, Category::Activation, key, -1, scaled(m_castBytes[a], batchFactor), al.stream,
                             al.allocEvent.value - 1});
            // saved in place of the input it copies (while that input dies early), else as
            // long as the product's output; in a checkpointed block nothing saves it: it dies
            // with its product's call (the recomputation casts again, a block at a time)
            if (inCheckpointedBlock(al.allocEvent.value)) {
                extra.push_back({TraceOp::Kind::Free, Category::Other, key, -1, 0, al.stream, al.allocEvent.value});
                continue;
            }
            const int32_t source = checkpointing ? -1 : m_castSource[a];
            const Allocation& until = source >= 0 ? dr.allocations[static_cast<size_t>(source)] : al;
            if (until.freeEvent.valid())
                extra.push_back({TraceOp::Kind::Free, Category::Other, key, -1, 0, al.stream, until.freeEvent.value});
        }
        insertAfterEvents(s.ops, std::move(extra));
    }

    // --- 16-bit copies the fp32 recording does not make, each saved as long as its source:
    // transformers' fp32 softmax copied to a pure 16-bit model's dtype (m_fp32Softmax, half its
    // bytes), and attention outputs transposed back by a copy (m_layoutCopy, its bytes). In a
    // checkpointed block nothing saves either: the copy is a moment's.
    const bool pure16 = from == Precision::Fp32 && (to == Precision::Bf16 || to == Precision::Fp16);
    if (from == Precision::Fp32 && to != Precision::Fp32) {
        std::vector<TraceOp> extra;
        for (const TraceOp& op : s.ops) {
            if (op.kind != TraceOp::Kind::Alloc || op.key >= allocCount)
                continue;
            const uint64_t size = pure16 && m_fp32Softmax[op.key] ? op.size / 2 : m_layoutCopy[op.key] ? op.size : 0;
            const Allocation& al = dr.allocations[op.key];
            if (size == 0 || !al.freeEvent.valid() || inCheckpointedBlock(op.event))
                continue;
            const uint32_t key = s.newKey();
            extra.push_back({TraceOp::Kind::Alloc, Category::Activation, key, -1, size, al.stream, op.event});
            extra.push_back({TraceOp::Kind::Free, Category::Other, key, -1, 0, al.stream, al.freeEvent.value});
        }
        insertAfterEvents(s.ops, std::move(extra));
    }

    // --- a tied weight under autocast (m_tiedGradients): its first partial gradient is the
    // 16-bit gradient of the output layer's cast copy, cast at once to fp32; that cast is the
    // gradient, into which the lookup's partial is added in place (measured: a Qwen2 under
    // autocast makes its 445 MiB gradient right after the logits' backward, in the segment
    // the 16-bit logits left, not at the end of the backward)
    if (addCopies && !m_tiedGradients.empty() && !changes.checkpoint) {
        // the cast runs once the product's backward is done (productBackwardDone)
        const MadeAt made = madeAt(s.ops);
        std::map<uint32_t, int64_t> gradientAt, firstFreedAt;
        for (const TiedGradient& t : m_tiedGradients) {
            const auto first = static_cast<uint32_t>(t.first);
            const auto m = made.find(first);
            int64_t at = dr.allocations[static_cast<size_t>(t.first)].allocEvent.value;
            if (m != made.end()) {
                const size_t k0 = m->second.first;
                const size_t done = productBackwardDone(s.ops, made, k0, s.ops[k0].size);
                at = done < s.ops.size() ? s.ops[done].event : s.ops[k0].event;
            }
            gradientAt[static_cast<uint32_t>(t.gradient)] = at;
            firstFreedAt[first] = at;
        }
        // the first partial is the 16-bit gradient of the cast copy, the others fp32
        for (TraceOp& op : s.ops)
            if (op.kind == TraceOp::Kind::Alloc && op.origin >= 0 && m_gradPartial[static_cast<size_t>(op.origin)])
                op.size = scaled(dr.allocations[static_cast<size_t>(op.origin)].size,
                                 (m_gradPartial[static_cast<size_t>(op.origin)] == 1 ? 2.0 : 4.0) / weightBytes(from));
        std::vector<TraceOp> moved;
        std::erase_if(s.ops, [&](const TraceOp& op) {
            if (op.kind != TraceOp::Kind::Alloc || op.origin < 0 || op.key != static_cast<uint32_t>(op.origin))
                return false;
            const auto g = gradientAt.find(op.key);
            if (g == gradientAt.end())
                return false;
            TraceOp m = op;
            m.event = g->second;
            moved.push_back(m);
            return true;
        });
        takeFrees(s.ops, firstFreedAt, moved); // after the gradient is made
        insertAfterEvents(s.ops, std::move(moved));
    }

    // --- a product's weight gradient under autocast (m_productGradient): the product's backward
    // makes it at 16 bits, and autocast's cast of the weight casts it to fp32 once the product's
    // backward is done, after it frees the first tensor made before it that is at least as large
    // (its 16-bit output gradient); the 16-bit gradient dies at the cast (measured: Phi-3's head
    // makes its 31 MiB bf16 gradient, frees the 125 MiB gradient of the logits, then makes the
    // 63 MiB fp32 gradient in the segment that left)
    if (addCopies) {
        const MadeAt made = madeAt(s.ops);
        std::unordered_map<uint32_t, size_t> freedAt; // key -> its free's op index
        for (size_t k = 0; k < s.ops.size(); ++k)
            if (s.ops[k].kind == TraceOp::Kind::Free || s.ops[k].kind == TraceOp::Kind::FreeRequested)
                freedAt[s.ops[k].key] = k;
        std::vector<TraceOp> extra;
        std::unordered_set<uint32_t> cast; // the gradients made again at their cast
        for (size_t k = 0; k < s.ops.size(); ++k) {
            const TraceOp& op = s.ops[k];
            if (op.kind != TraceOp::Kind::Alloc || op.origin < 0 || op.key != static_cast<uint32_t>(op.origin) ||
                static_cast<size_t>(op.origin) >= allocCount || !m_productGradient[static_cast<size_t>(op.origin)])
                continue;
            const uint64_t half = op.size / 2;
            const size_t done = productBackwardDone(s.ops, made, k, half);
            const auto own = freedAt.find(op.key);
            if (done == s.ops.size() || (own != freedAt.end() && own->second <= done))
                continue;
            const int64_t at = s.ops[done].event;
            const uint32_t temp = s.newKey();
            extra.push_back({TraceOp::Kind::Alloc, Category::Intermediate, temp, -1, half, op.stream, op.event - 1});
            cast.insert(op.key);
            TraceOp g = op;
            g.event = at;
            extra.push_back(g);
            extra.push_back({TraceOp::Kind::Free, Category::Other, temp, -1, 0, op.stream, at});
        }
        std::erase_if(s.ops, [&](const TraceOp& op) {
            return op.kind == TraceOp::Kind::Alloc && op.origin >= 0 && op.key == static_cast<uint32_t>(op.origin) &&
                   cast.count(op.key);
        });
        insertAfterEvents(s.ops, std::move(extra));
    }

    // --- optimizer
    if (changes.optimizer && *changes.optimizer != m_recorded.optimizer) {
        const OptimizerKind target = *changes.optimizer;
        const int kr = static_cast<int>(std::lround(m_recorded.optimizerStates));
        const int kt = target == OptimizerKind::AdamW8bit ? 2 : static_cast<int>(std::lround(optimizerStateRatio(target)));
        const double stateScale = target == OptimizerKind::AdamW8bit ? 0.25 : 1.0;
        std::vector<int> stateIndex(allocCount, -1);
        int n = 0;
        for (size_t a = 0; a < allocCount; ++a)
            if (at.allocationCategory[a] == Category::OptimizerState)
                stateIndex[a] = n++;
        std::set<uint32_t> drop;
        std::map<uint32_t, std::vector<uint32_t>> copies;
        const bool temps = optimizerHasStepTemporaries(target);
        std::vector<TraceOp> out;
        out.reserve(s.ops.size());
        for (const TraceOp& op : s.ops) {
            const Category c = cat(op.origin);
            const bool ours = op.origin >= 0 && op.key < allocCount;
            if (ours && c == Category::Intermediate && at.allocationPhase[op.key] == Phase::OptimizerStep && !temps &&
                m_recorded.stepTemporaries)
                continue; // an in-place update has no temporaries
            if (ours && c == Category::OptimizerState && kr > 0) {
                const int j = stateIndex[op.key] % kr;
                if (j >= kt)
                    continue;
                TraceOp o = op;
                if (o.kind == TraceOp::Kind::Alloc)
                    o.size = scaled(o.size, stateScale);
                out.push_back(o);
                if (j == kr - 1 && kt > kr) {
                    auto& mine = copies[op.key];
                    if (op.kind == TraceOp::Kind::Alloc)
                        for (int x = kr; x < kt; ++x)
                            mine.push_back(s.newKey());
                    for (uint32_t key : mine) {
                        TraceOp d = o;
                        d.key = key;
                        out.push_back(d);
                    }
                }
                continue;
            }
            out.push_back(op);
        }
        s.ops.swap(out);
        if (kr == 0 && kt > 0) {
            // state made at the first step: kt tensors per parameter
            int64_t firstStep = -1;
            for (const IterationRanges& r : ranges)
                if (r.stepStart >= 0) {
                    firstStep = r.stepStart;
                    break;
                }
            if (firstStep < 0) {
                note("no optimizer step in the trace: no state added");
            } else {
                std::vector<TraceOp> extra;
                auto grads = m_gradientSizes; // the trainable parameters, by size; none known: all
                for (const TraceOp& op : s.ops)
                    if (op.kind == TraceOp::Kind::Alloc && cat(op.origin) == Category::Parameter &&
                        (m_gradientSizes.empty() || grads[op.size]-- > 0))
                        for (int x = 0; x < kt; ++x)
                            extra.push_back({TraceOp::Kind::Alloc, Category::OptimizerState, s.newKey(), -1,
                                             scaled(op.size, stateScale), op.stream, firstStep});
                insertAfterEvents(s.ops, std::move(extra));
            }
        }
        if (target == OptimizerKind::Adafactor && m_convolutionalNetwork) {
            // Adafactor factors a tensor's second moment over its last two dimensions (a row
            // and a column vector). For a k x k convolution weight [O, I, k, k] that is
            // O*I*k twice: 2/k of the weight, made at the first step. Sizes alone do not give
            // shapes; in a convolutional network a weight whose size divides by k*k (9, 25,
            // 49) is taken as a k x k kernel, and another one autocast would cast as a 1 x 1
            // kernel (twice its size: ResNet-50's -8.0% -> +0.0%; the head, a matrix, is small).
            // Norms' and biases' vectors keep next to nothing.
            int64_t firstStep = -1;
            for (const IterationRanges& r : ranges)
                if (r.stepStart >= 0) {
                    firstStep = r.stepStart;
                    break;
                }
            // (a weight whose gradient a matrix product made, where the recording names the
            // backward's operators, is a matrix: a row and a column, next to nothing; and where
            // it names convolutions' backwards, only their weights are kernels: a Mamba's
            // embedding, beside its one depthwise convolution, had been taken for a 1 x 1 kernel,
            // +9.6%)
            std::vector<TraceOp> extra;
            auto matrices = m_matrixGradientSizes;
            auto kernels = m_kernelGradientSizes;
            for (const TraceOp& op : s.ops) {
                if (firstStep < 0 || op.kind != TraceOp::Kind::Alloc || cat(op.origin) != Category::Parameter)
                    continue;
                if (auto mtx = matrices.find(op.size); mtx != matrices.end() && mtx->second > 0) {
                    --mtx->second;
                    continue;
                }
                if (!m_kernelGradientSizes.empty()) {
                    const auto kernel = kernels.find(op.size);
                    if (kernel == kernels.end() || kernel->second <= 0)
                        continue;
                    --kernel->second;
                }
                uint64_t k = op.size >= kWeightCopyMin ? 1 : 0;
                for (const uint64_t kk : {3u, 5u, 7u})
                    if (op.size % (kk * kk) == 0) {
                        k = kk;
                        break;
                    }
                for (int x = 0; x < 2 && k > 0; ++x)
                    extra.push_back(
                        {TraceOp::Kind::Alloc, Category::OptimizerState, s.newKey(), -1, op.size / k, op.stream, firstStep});
            }
            insertAfterEvents(s.ops, std::move(extra));
        }
        if (target == OptimizerKind::Adafactor && !m_matrixProducts) {
            // Adafactor's update multiplies its row and column factors (a matrix product): in a
            // run with no other, that first product makes cuBLAS's workspace, kept to the end
            // (SqueezeNet 1.1's real run, all convolutions: 32 MiB at its first step; -13.3% ->
            // -0.2% allocated, DeepLabV3 -1.9% -> 0.0%, the U-Net -3.6% -> +0.2%)
            int64_t firstStep = -1;
            for (const IterationRanges& r : ranges)
                if (r.stepStart >= 0) {
                    firstStep = r.stepStart;
                    break;
                }
            if (firstStep >= 0) {
                uint64_t stream = 0;
                for (const TraceOp& op : s.ops)
                    if (op.kind == TraceOp::Kind::Alloc && cat(op.origin) == Category::Parameter) {
                        stream = op.stream;
                        break;
                    }
                insertAfterEvents(
                    s.ops, {{TraceOp::Kind::Alloc, Category::Intermediate, s.newKey(), -1, kCublasWorkspace, stream, firstStep}});
                note("the recording makes no matrix product, and Adafactor's update does: cuBLAS makes its workspace at "
                     "the first step, 32 MiB on Hopper GPUs (4 MiB on earlier ones), counted at 32 MiB");
            }
        }
        if (temps && !m_recorded.stepTemporaries) {
            // the step's temporaries: one parameter-sized tensor per parameter, during each step
            std::vector<TraceOp> extra;
            std::vector<std::pair<uint64_t, uint64_t>> params;
            for (const TraceOp& op : s.ops)
                if (op.kind == TraceOp::Kind::Alloc && cat(op.origin) == Category::Parameter)
                    params.emplace_back(op.size, op.stream);
            for (const IterationRanges& r : ranges) {
                if (r.stepStart < 0)
                    continue;
                std::vector<uint32_t> keys;
                for (const auto& [size, stream] : params) {
                    keys.push_back(s.newKey());
                    extra.push_back({TraceOp::Kind::Alloc, Category::Intermediate, keys.back(), -1, size, stream, r.stepStart});
                }
                for (size_t k = 0; k < keys.size(); ++k)
                    extra.push_back({TraceOp::Kind::Free, Category::Other, keys[k], -1, 0, params[k].second, r.stepStart});
            }
            insertAfterEvents(s.ops, std::move(extra));
        }
    }

    // --- activation checkpointing
    if (changes.checkpoint) {
        if (m_recorded.checkpointedBlocks > 0)
            note("the recording already checkpoints: --checkpoint is not applied again");
        else if (m_blocks.count() == 0)
            note("no repeated blocks found in the forward's stacks: --checkpoint not applied");
        else {
            if (*changes.checkpoint > m_blocks.count())
                note("the forward has " + std::to_string(m_blocks.count()) + " repeated blocks: all are checkpointed");
            if (m_recorded.compiled)
                note("the recording runs under torch.compile, whose partitioner decides what a checkpointed block "
                     "saves: on a measured compiled decoder, checkpointing every block was predicted 9% over the real "
                     "run's allocated peak");
            std::unordered_map<uint32_t, uint64_t> sizeOfKey;
            for (const TraceOp& op : s.ops)
                if (op.kind == TraceOp::Kind::Alloc && op.key < allocCount)
                    sizeOfKey[op.key] = op.size;
            std::vector<TraceOp> extra;
            std::map<uint32_t, int64_t> keepOutputs; // output freed in the forward -> its new free
            for (size_t it = 0; it < at.iterations.size(); ++it) {
                const auto& blocks = m_blocks.perIteration[it];
                const IterationRanges& r = ranges[it];
                if (blocks.empty() || r.backwardStart < 0)
                    continue;
                // activations of the iteration freed in its backward, with their block
                std::vector<std::vector<uint32_t>> acts(blocks.size());
                std::vector<int64_t> otherFrees; // backward frees of activations outside these blocks
                for (int64_t e = at.iterations[it].firstEvent; e <= at.iterations[it].lastEvent; ++e) {
                    const AllocationId id = dr.eventAllocation[static_cast<size_t>(e)];
                    if (!id.valid() || dr.allocation(id).allocEvent.value != e || at.category(id) != Category::Activation)
                        continue;
                    const Allocation& al = dr.allocation(id);
                    if (!al.freeEvent.valid() || at.eventPhase[static_cast<size_t>(al.freeEvent.value)] != Phase::Backward)
                        continue;
                    size_t b = 0;
                    while (b < blocks.size() && !(e >= blocks[b].firstEvent && e <= blocks[b].lastEvent))
                        ++b;
                    if (b < blocks.size() && ForwardBlocks::checkpointed(blocks[b], *changes.checkpoint))
                        acts[b].push_back(static_cast<uint32_t>(id.value));
                    else
                        otherFrees.push_back(al.freeEvent.value);
                }
                std::sort(otherFrees.begin(), otherFrees.end());
                for (size_t b = 0; b < blocks.size(); ++b) {
                    if (acts[b].size() < 2) // (not checkpointed)
                        continue;
                    // The block's output stays: its last activation of a block's size (a batch
                    // norm's saved statistics, made after its output, are not it); the rest go.
                    // Unless the last tensor that outlives the block is freed in the forward: no
                    // later op saves that output (DenseNet's layer, whose output the next layers
                    // only concatenate), so every activation of the block goes, and the output
                    // lives on as the next checkpointed blocks' input, until this one's backward.
                    // (It outlives the next block's start: a workspace freed just after is not it.)
                    int64_t forwardOutput = -1;
                    const int64_t nextStart = b + 1 < blocks.size() && blocks[b + 1].position != 0 ? blocks[b + 1].firstEvent
                                                                                                   : INT64_MAX;
                    for (int64_t e = blocks[b].lastEvent; e >= blocks[b].firstEvent && forwardOutput < 0; --e) {
                        const AllocationId id = dr.eventAllocation[static_cast<size_t>(e)];
                        if (!id.valid() || dr.allocation(id).allocEvent.value != e)
                            continue;
                        const Allocation& al = dr.allocation(id);
                        if (!al.freeEvent.valid() || al.freeEvent.value <= blocks[b].lastEvent)
                            continue;
                        if (nextStart == INT64_MAX)
                            break;
                        if (al.freeEvent.value < nextStart)
                            continue;
                        if (at.eventPhase[static_cast<size_t>(al.freeEvent.value)] != Phase::Forward)
                            break;
                        forwardOutput = id.value;
                    }
                    uint64_t largest = 0;
                    for (uint32_t key : acts[b])
                        largest = std::max(largest, dr.allocations[key].size);
                    size_t output = acts[b].size() - 1;
                    while (output > 0 && dr.allocations[acts[b][output]].size * kOutputFraction < largest)
                        --output;
                    // Of those, the one the backward frees first: the next block saved it, and
                    // its backward runs before this one's (an LSTM's output, not the cuDNN reserve
                    // space it makes after it and saves for its own backward)
                    for (size_t k = 0; k < acts[b].size(); ++k) {
                        const Allocation& x = dr.allocations[acts[b][k]];
                        if (x.size * kOutputFraction >= largest &&
                            x.freeEvent.value < dr.allocations[acts[b][output]].freeEvent.value)
                            output = k;
                    }
                    if (forwardOutput >= 0)
                        output = acts[b].size(); // none of them
                    std::vector<uint32_t> dropped;
                    int64_t firstFree = INT64_MAX;
                    for (size_t k = 0; k < acts[b].size(); ++k) {
                        if (k == output)
                            continue;
                        const uint32_t key = acts[b][k];
                        dropped.push_back(key);
                        const Allocation& al = dr.allocations[key];
                        // not saved, it dies once the ops after it have used it
                        int64_t at = k + kCheckpointWindow < acts[b].size()
                                         ? dr.allocations[acts[b][k + kCheckpointWindow]].allocEvent.value
                                         : blocks[b].lastEvent;
                        if (m_boundUntil[key] >= 0) // bound to a name until its frame's next statement has run
                            at = std::max(at, std::min(m_boundUntil[key], blocks[b].lastEvent));
                        extra.push_back({TraceOp::Kind::Free, Category::Other, key, static_cast<int32_t>(key), 0, al.stream, at});
                        firstFree = std::min(firstFree, al.freeEvent.value);
                    }
                    // recomputed right before its backward: after the last free of an
                    // activation from outside the block that precedes the block's own frees
                    int64_t at0 = r.backwardStart;
                    auto p = std::lower_bound(otherFrees.begin(), otherFrees.end(), firstFree);
                    if (p != otherFrees.begin())
                        at0 = std::max(at0, *(p - 1));
                    for (size_t c = 0; c < blocks.size(); ++c) // the blocks after it are recomputed and freed first
                        if (c != b)
                            for (uint32_t key : acts[c]) {
                                const int64_t fe = dr.allocations[key].freeEvent.value;
                                if (fe < firstFree && fe > at0)
                                    at0 = fe;
                            }
                    // and after the temporaries made and freed in between: the backward of the
                    // later block's first op still runs there (ConvNeXt's depthwise convolution
                    // and its 101 MiB workspace), and the recomputation waits for its gradient
                    const int64_t lastOutside = at0;
                    for (int64_t e = lastOutside + 1; e < firstFree && e < static_cast<int64_t>(dr.eventAllocation.size()); ++e) {
                        const AllocationId id = dr.eventAllocation[static_cast<size_t>(e)];
                        if (!id.valid())
                            continue;
                        const Allocation& t = dr.allocation(id);
                        if (t.freeEvent.valid() && t.freeEvent.value == e && t.allocEvent.valid() &&
                            t.allocEvent.value > lastOutside)
                            at0 = e;
                    }
                    at0 = std::min(at0, firstFree - 1);
                    if (forwardOutput >= 0)
                        keepOutputs[static_cast<uint32_t>(forwardOutput)] = at0;
                    // the forward of the block again: its activations (same keys) and temporaries
                    std::set<uint32_t> droppedSet(dropped.begin(), dropped.end());
                    std::unordered_map<uint32_t, uint32_t> temp;
                    for (int64_t e = blocks[b].firstEvent; e <= blocks[b].lastEvent; ++e) {
                        const size_t i = static_cast<size_t>(e);
                        const AllocationId id = dr.eventAllocation[i];
                        if (!id.valid())
                            continue;
                        const uint32_t key = static_cast<uint32_t>(id.value);
                        const Allocation& al = dr.allocation(id);
                        if (al.allocEvent.value == e) {
                            if (droppedSet.count(key)) {
                                extra.push_back({TraceOp::Kind::Alloc, Category::Other, key, static_cast<int32_t>(key),
                                                 sizeOfKey[key], al.stream, at0});
                            } else if (al.freeEvent.valid() && al.freeEvent.value <= blocks[b].lastEvent) {
                                const uint32_t k2 = s.newKey();
                                temp[key] = k2;
                                extra.push_back({TraceOp::Kind::Alloc, Category::Other, k2, static_cast<int32_t>(key),
                                                 sizeOfKey[key], al.stream, at0});
                            }
                        } else if (al.freeEvent.value == e) {
                            if (auto t = temp.find(key); t != temp.end())
                                extra.push_back({TraceOp::Kind::Free, Category::Other, t->second, static_cast<int32_t>(key), 0,
                                                 al.stream, at0});
                        }
                    }
                }
            }
            delayFrees(s.ops, keepOutputs, extra);
            insertAfterEvents(s.ops, std::move(extra));
        }
    }

    // --- gradient accumulation: K micro-batches per iteration
    if (K > 1 && !m_trains)
        note("no iteration with a forward and a backward: --accumulate " + std::to_string(K) + " runs 1/" + std::to_string(K) +
             " of the batch once, with nothing to accumulate");
    if (K > 1) {
        std::vector<TraceOp> out;
        out.reserve(s.ops.size() * static_cast<size_t>(K));
        // A buffer a library makes once, in an iteration before the last, and keeps to the end
        // (cuBLAS's workspace for the autograd thread, in the first backward): the first
        // micro-batch makes it and the later ones reuse it.
        std::unordered_set<uint32_t> freedAnywhere;
        for (const TraceOp& op : s.ops)
            if (op.kind == TraceOp::Kind::Free)
                freedAnywhere.insert(op.key);
        int64_t lastTrainingStart = -1;
        for (const IterationRanges& r : ranges)
            if (r.forwardStart >= 0 && r.backwardEnd >= 0)
                lastTrainingStart = r.first;
        size_t pos = 0;
        for (const IterationRanges& r : ranges) {
            if (r.forwardStart < 0 || r.backwardEnd < 0)
                continue;
            const int64_t lo = r.first, hi = r.backwardEnd;
            while (pos < s.ops.size() && s.ops[pos].event < lo)
                out.push_back(s.ops[pos++]);
            const size_t begin = pos;
            while (pos < s.ops.size() && s.ops[pos].event <= hi)
                ++pos;
            const size_t end = pos;
            std::set<uint32_t> allocated, freedInside;
            for (size_t k = begin; k < end; ++k) {
                if (s.ops[k].kind == TraceOp::Kind::Alloc)
                    allocated.insert(s.ops[k].key);
                else if (s.ops[k].kind == TraceOp::Kind::Free && allocated.count(s.ops[k].key))
                    freedInside.insert(s.ops[k].key);
            }
            // a gradient summed from parts (m_summedInto) waits in a later micro-batch for its last part
            std::unordered_map<uint32_t, uint32_t> summedAfter; // a gradient's key -> its last part's key
            for (size_t k = begin; k < end; ++k)
                if (s.ops[k].kind == TraceOp::Kind::Alloc && s.ops[k].key < allocCount)
                    if (const auto part = m_summedInto.find(static_cast<int32_t>(s.ops[k].key)); part != m_summedInto.end())
                        summedAfter[s.ops[k].key] = static_cast<uint32_t>(part->second);
            for (int rep = 1; rep <= K; ++rep) {
                std::unordered_map<uint32_t, uint32_t> keyOf;
                std::unordered_map<uint32_t, std::vector<TraceOp>> afterPart; // a last part's key -> the frees it ends
                std::vector<TraceOp> pending; // outliving allocations of a micro-batch before the last
                // A later micro-batch's gradient is added into the kept one by AccumulateGrad, which
                // the autograd engine runs once the node that made it is done: after the node's
                // allocations and the frees of what it saved, before the next node's first allocation
                // or the free of the node's other outputs (allocated in the same run as the gradient).
                std::vector<TraceOp> addedIn;
                std::vector<uint32_t> run, siblings; // allocations since the last free; the node's
                bool nodeFreed = false;
                auto pushAt = [&](const std::vector<TraceOp>& frees, int64_t event) {
                    for (TraceOp f : frees) {
                        f.event = event;
                        out.push_back(f);
                    }
                };
                auto emit = [&](const TraceOp& op) {
                    const bool isAlloc = op.kind == TraceOp::Kind::Alloc, isFree = op.kind == TraceOp::Kind::Free;
                    if (!addedIn.empty() && ((isAlloc && nodeFreed) ||
                                             (isFree && std::find(siblings.begin(), siblings.end(), op.key) != siblings.end()))) {
                        pushAt(addedIn, op.event);
                        addedIn.clear();
                    }
                    if (isFree) {
                        nodeFreed = true;
                        run.clear();
                    } else if (isAlloc)
                        run.push_back(op.key);
                    out.push_back(op);
                };
                for (size_t k = begin; k < end; ++k) {
                    TraceOp op = s.ops[k];
                    const bool mine = allocated.count(op.key) > 0 && op.kind != TraceOp::Kind::EmptyCache &&
                                      op.kind != TraceOp::Kind::Probe;
                    if (!mine) {
                        if (rep == 1)
                            emit(op);
                        continue;
                    }
                    const bool inside = freedInside.count(op.key) > 0;
                    const bool grad = cat(op.origin) == Category::Gradient;
                    if (r.first < lastTrainingStart && op.kind == TraceOp::Kind::Alloc && !freedAnywhere.count(op.key) &&
                        (!grad || (op.origin >= 0 && static_cast<size_t>(op.origin) < allocCount &&
                                   m_persistentWorkspace[static_cast<size_t>(op.origin)]))) {
                        if (rep == 1)
                            emit(op);
                        continue;
                    }
                    const bool original = inside ? rep == 1 : grad ? rep == 1 : rep == K;
                    if (op.kind == TraceOp::Kind::Alloc) {
                        if (!original)
                            keyOf[op.key] = s.newKey();
                        const uint32_t orig = op.key;
                        if (!original)
                            op.key = keyOf[orig];
                        emit(op);
                        if (!original && !inside) {
                            TraceOp f = op;
                            f.kind = TraceOp::Kind::Free;
                            if (const auto last = summedAfter.find(orig); grad && last != summedAfter.end())
                                afterPart[last->second].push_back(f);
                            else if (grad) {
                                if (addedIn.empty()) {
                                    nodeFreed = false;
                                    siblings = run;
                                }
                                addedIn.push_back(f);
                            } else
                                pending.push_back(f);
                        }
                    } else if (inside) {
                        const uint32_t orig = op.key;
                        if (!original)
                            op.key = keyOf[op.key];
                        emit(op);
                        if (const auto ends = afterPart.find(orig); ends != afterPart.end() && op.kind == TraceOp::Kind::Free) {
                            for (TraceOp f : ends->second) {
                                f.event = op.event;
                                emit(f);
                            }
                            afterPart.erase(ends);
                        }
                    }
                }
                pushAt(addedIn, hi);
                for (const auto& [part, frees] : afterPart) // (a last part never freed: at the backward's end)
                    pushAt(frees, hi);
                pushAt(pending, hi);
            }
        }
        while (pos < s.ops.size())
            out.push_back(s.ops[pos++]);
        s.ops.swap(out);
    }
    if (changes.shard && m_recorded.distributed)
        note("the recording is already one rank of a data-parallel or sharded job (torch.distributed's frames): "
             "--shard predicts it sharded again, from its own rank's tensors");
    if (changes.shard) {
        ShardInputs in;
        in.attribution = &at;
        in.blocks = &m_blocks;
        in.optimizerStates = changes.optimizer ? optimizerStateRatio(*changes.optimizer) : m_recorded.optimizerStates;
        std::vector<std::string> shardNotes;
        applySharding(s, *changes.shard, in, shardNotes);
        for (const std::string& n : shardNotes)
            note(n);
    }
    // A trace that opens mid-run (a full ring buffer, `max_entries`): its first iteration began
    // before the trace, so no rule finds its blocks, and the tensors alive at its start are
    // kept as recorded. The prediction starts at the first whole iteration: what the partial
    // one allocated and freed before it is left out (measured: a Qwen2's trace cut at 8%, 25%
    // and 50%, checkpointed in bf16, was predicted +18%, -12% and +57% on allocated bytes).
    if (!changes.empty() && m_opensMidRun && at.iterations.size() >= 2) {
        const int64_t start = at.iterations[1].firstEvent;
        std::unordered_map<uint32_t, std::pair<bool, bool>> keys; // key -> (freed, an op at or after start)
        for (const TraceOp& op : s.ops) {
            if (op.kind == TraceOp::Kind::EmptyCache || op.kind == TraceOp::Kind::Probe)
                continue;
            auto& k = keys[op.key];
            k.first = k.first || op.kind != TraceOp::Kind::Alloc;
            k.second = k.second || op.event >= start;
        }
        const size_t before = s.ops.size();
        std::erase_if(s.ops, [&](const TraceOp& op) {
            if (op.kind == TraceOp::Kind::EmptyCache || op.kind == TraceOp::Kind::Probe)
                return op.event < start;
            const auto& k = keys[op.key];
            return k.first && !k.second;
        });
        if (s.ops.size() < before)
            note("the prediction starts at the trace's first whole iteration (event " + std::to_string(start) +
                 "): the partial one before it is left out");
    }
    for (TraceOp& op : s.ops)
        if (op.kind == TraceOp::Kind::Alloc && op.origin >= 0 && static_cast<size_t>(op.origin) < m_convWorkspace.size())
            op.optional = m_convWorkspace[static_cast<size_t>(op.origin)] != 0;
    return s;
}

ChangeResult ModelWhatIf::simulate(const ModelChanges& changes, const SimulationOptions& options) const
{
    OpStream s;
    return simulate(changes, options, s);
}

ChangeResult ModelWhatIf::simulate(const ModelChanges& changes, const SimulationOptions& options, OpStream& s) const
{
    ChangeResult r;
    r.changes = changes;
    s = build(changes, &r.notes);
    r.result = simulateOps(s, &m_attribution, options);
    if (changes.shard) {
        // ZeRO-1's ranks own different shares of the state: each is its own trace, and the
        // result is the rank that reserves most; DDP's rank 0 keeps a second set of buckets
        // and its other ranks are alike; FSDP2's ranks are all alike
        const int n = std::max(1, changes.shard->ranks);
        const ShardKind kind = changes.shard->kind;
        std::optional<SimulationResult> second; // DDP's ranks after the first
        for (int rank = 0; rank < n; ++rank) {
            SimulationResult one;
            if (n == 1 || rank == changes.shard->rank || kind == ShardKind::Fsdp2) {
                one = r.result;
            } else if (kind == ShardKind::Ddp && rank >= 2 && second) {
                one = *second;
            } else {
                ModelChanges c = changes;
                c.shard->rank = rank;
                OpStream other = build(c, nullptr);
                one = simulateOps(other, &m_attribution, options);
                if (kind == ShardKind::Ddp)
                    second = one;
                if (one.reservedPeak > r.result.reservedPeak) {
                    r.result = one;
                    s = std::move(other);
                }
            }
            r.ranks.push_back({rank, one.reservedPeak, one.allocatedPeak, one.requestedPeak, one.oom.has_value()});
        }
    }
    const EventTable& ev = m_replay.snapshot->devices.at(m_index).events;
    if (r.result.oom && r.result.oom->event >= 0 && static_cast<size_t>(r.result.oom->event) < ev.count())
        r.result.oom->timeUs = ev.timeUs[static_cast<size_t>(r.result.oom->event)];
    std::tie(r.computeCost, r.cost) = cost(changes);
    return r;
}

int64_t ModelWhatIf::safeBatch(const ModelChanges& changes, const SimulationOptions& options, int64_t largest) const
{
    SimulationOptions o = options;
    o.capacity = safeCapacity(options.capacity);
    int64_t top = maxBatch(changes, o).maxBatch;
    if (largest >= 0)
        top = std::min(top, largest);
    // And room for one more segment of its largest tensor: where the replay finds room for a
    // logits-sized block, real runs have made one more (measured: the checkpointed Falcon at
    // 4x its batch, 2.59 GB where the replay says 2.07; BLOOM, T5, the Lightning GPT-2).
    auto spare = [&](int64_t b) {
        ModelChanges c = changes;
        c.batch = static_cast<double>(b);
        const OpStream s = build(c);
        uint64_t largest = 0;
        for (const TraceOp& op : s.ops)
            if (op.kind == TraceOp::Kind::Alloc && !op.optional) // (a workspace gives way)
                largest = std::max(largest, op.size);
        const uint64_t segment = (largest + (2u << 20) - 1) / (2u << 20) * (2u << 20);
        if (segment >= options.capacity)
            return false;
        SimulationOptions spared = o;
        spared.capacity = std::min(o.capacity, options.capacity - segment);
        return !simulateOps(s, &m_attribution, spared).oom;
    };
    if (top <= 0 || spare(top))
        return top;
    const int64_t step = m_recorded.batchKnown ? std::max(1, changes.accumulate) : 1;
    int64_t lo = 0, hi = top;
    while (hi - lo > step) {
        const int64_t mid = (lo + (hi - lo) / 2) / step * step;
        if (mid <= lo)
            break;
        (spare(mid) ? lo : hi) = mid;
    }
    return lo;
}

uint64_t safeCapacity(uint64_t capacity)
{
    return static_cast<uint64_t>(static_cast<double>(capacity) * (1.0 - kReservedMargin));
}

bool isTight(int64_t reservedPeak, uint64_t capacity)
{
    return capacity != AllocatorSettings::kNoLimit && reservedPeak >= 0 &&
           static_cast<uint64_t>(reservedPeak) > safeCapacity(capacity);
}

MaxBatchResult ModelWhatIf::maxBatch(const ModelChanges& changes, const SimulationOptions& options, int64_t limit) const
{
    if (options.capacity == AllocatorSettings::kNoLimit)
        throw std::invalid_argument("the largest batch needs a capacity");
    MaxBatchResult r;
    std::optional<SimulationResult> best;
    const int K = std::max(1, changes.accumulate);
    auto probe = [&](int64_t b) {
        ModelChanges c = changes;
        c.batch = static_cast<double>(b);
        SimulationResult s = simulateOps(build(c), &m_attribution, options);
        const bool fits = !s.oom;
        r.probes.push_back({b, fits, s.reservedPeak});
        if (fits && (!best || b > r.maxBatch)) {
            r.maxBatch = b;
            best = std::move(s);
        }
        return fits;
    };
    // with accumulation, batches are multiples of the micro-batches; a batch the recording does
    // not name is counted in recorded batches, whose micro-batches need not be whole ones
    const int64_t step = m_recorded.batchKnown ? K : 1;
    int64_t lo = 0, hi = -1;
    const int64_t start = std::max<int64_t>(step, static_cast<int64_t>(std::llround(m_recorded.batch)) / step * step);
    if (probe(start)) {
        lo = start;
        int64_t b = start;
        while (hi < 0) {
            if (b >= limit) {
                r.unbounded = true;
                break;
            }
            b = std::min(limit, b * 2);
            if (probe(b))
                lo = b;
            else
                hi = b;
        }
    } else {
        hi = start;
        lo = 0;
    }
    while (hi > 0 && hi - lo > step) {
        const int64_t mid = (lo + (hi - lo) / 2) / step * step;
        if (mid <= lo)
            break;
        if (probe(mid))
            lo = mid;
        else
            hi = mid;
    }
    r.maxBatch = lo;
    if (best && r.maxBatch == lo)
        r.atMax = std::move(best);
    return r;
}

std::vector<PlanRow> ModelWhatIf::plan(const SimulationOptions& options) const { return plan(options, {}); }

std::vector<PlanRow> ModelWhatIf::plan(const SimulationOptions& options, const std::function<bool()>& stop) const
{
    std::vector<ModelChanges> candidates;
    auto addCombos = [&](const std::vector<ModelChanges>& singles) {
        const size_t n = singles.size();
        for (size_t mask = 1; mask < (1u << n); ++mask) {
            if (std::popcount(mask) > 2)
                continue;
            ModelChanges c;
            bool clash = false;
            for (size_t i = 0; i < n; ++i) {
                if (!(mask & (1u << i)))
                    continue;
                const ModelChanges& x = singles[i];
                if ((x.checkpoint && c.checkpoint) || (x.precision && c.precision) || (x.optimizer && c.optimizer) ||
                    (x.accumulate > 1 && c.accumulate > 1))
                    clash = true;
                if (x.checkpoint)
                    c.checkpoint = x.checkpoint;
                if (x.precision)
                    c.precision = x.precision;
                if (x.optimizer)
                    c.optimizer = x.optimizer;
                if (x.accumulate > 1)
                    c.accumulate = x.accumulate;
            }
            if (!clash)
                candidates.push_back(c);
        }
    };
    std::vector<ModelChanges> singles;
    if (m_blocks.count() > 0 && m_recorded.checkpointedBlocks == 0) {
        ModelChanges c;
        c.checkpoint = -1;
        singles.push_back(c);
        if (m_blocks.count() >= 4) {
            c.checkpoint = m_blocks.count() / 2;
            singles.push_back(c);
        }
    }
    if (!isAmp(m_recorded.precision)) {
        ModelChanges c;
        c.precision = Precision::AmpBf16;
        singles.push_back(c);
    }
    if (m_recorded.precision != Precision::Bf16) {
        ModelChanges c;
        c.precision = Precision::Bf16;
        singles.push_back(c);
    }
    for (int k : {2, 4, 8}) {
        if (m_recorded.batch >= k || !m_recorded.batchKnown) {
            ModelChanges c;
            c.accumulate = k;
            singles.push_back(c);
        }
    }
    if (m_recorded.optimizer == OptimizerKind::AdamW || m_recorded.optimizer == OptimizerKind::Adam) {
        ModelChanges c;
        c.optimizer = OptimizerKind::AdamW8bit;
        singles.push_back(c);
        c.optimizer = OptimizerKind::SgdMomentum;
        singles.push_back(c);
    }
    addCombos(singles);
    // more GPUs, after every change one GPU can make: FSDP2 over 2, 4 and 8 (alone)
    if (m_trains && !m_recorded.distributed)
        for (int n : {2, 4, 8}) {
            ModelChanges c;
            c.shard = Sharding{ShardKind::Fsdp2, n, 0};
            candidates.push_back(c);
        }

    std::vector<std::pair<std::string, AllocatorSettings>> settings{{"", options.settings}};
    if (!options.settings.expandableSegments) {
        AllocatorSettings e = options.settings;
        e.expandableSegments = true;
        settings.emplace_back("expandable_segments:True", e);
    }
    // The rows to simulate, then each on its own thread (every one is a whole replay and, under
    // a capacity, a search for the largest batch: 7.5 s for llm_bs16's 31 rows on one thread).
    std::vector<std::pair<ModelChanges, size_t>> jobs; // a change and its allocator settings
    ModelChanges none;
    for (size_t k = 0; k < settings.size(); ++k) {
        std::vector<ModelChanges> all{none};
        all.insert(all.end(), candidates.begin(), candidates.end());
        for (const ModelChanges& c : all) {
            if (c.empty() && k == 0)
                continue; // the recorded run itself
            const int count = (c.checkpoint ? 1 : 0) + (c.precision ? 1 : 0) + (c.optimizer ? 1 : 0) + (c.accumulate > 1 ? 1 : 0);
            if (k > 0 && (count > 1 || c.shard))
                continue; // the allocator setting alone and with one change
            jobs.emplace_back(c, k);
        }
    }
    std::vector<std::optional<PlanRow>> done(jobs.size());
    std::atomic<bool> stopped = false;
    ThreadPool::shared().parallelFor(jobs.size(), [&](size_t i) {
        if (stopped || (stop && stop())) {
            stopped = true;
            return;
        }
        const auto& [c, k] = jobs[i];
        SimulationOptions o = options;
        o.settings = settings[k].second;
        PlanRow row;
        row.changes = c;
        row.settings = settings[k].first;
        const SimulationResult s = simulateOps(build(c), &m_attribution, o);
        row.reservedPeak = s.reservedPeak;
        row.allocatedPeak = s.allocatedPeak;
        row.fits = !s.oom;
        row.tight = row.fits && isTight(row.reservedPeak, options.capacity);
        std::tie(row.computeCost, row.cost) = cost(c);
        if (!row.settings.empty())
            row.cost = row.cost == "none" ? "none (allocator setting)" : row.cost + ", allocator setting";
        if (row.fits && options.capacity != AllocatorSettings::kNoLimit) {
            row.maxBatch = maxBatch(c, o).maxBatch;
            row.safeBatch = safeBatch(c, o, row.maxBatch);
        }
        done[i] = std::move(row);
    });
    std::vector<PlanRow> rows;
    for (std::optional<PlanRow>& r : done)
        if (r)
            rows.push_back(std::move(*r));
    if (stopped)
        return rows;
    auto changeCount = [](const PlanRow& r) {
        return (r.changes.checkpoint ? 1 : 0) + (r.changes.precision ? 1 : 0) + (r.changes.optimizer ? 1 : 0) +
               (r.changes.accumulate > 1 ? 1 : 0) + (r.settings.empty() ? 0 : 1);
    };
    std::stable_sort(rows.begin(), rows.end(), [&](const PlanRow& a, const PlanRow& b) {
        if (a.fits != b.fits)
            return a.fits;
        if (a.computeCost != b.computeCost)
            return a.computeCost < b.computeCost;
        if (a.changes.accumulate != b.changes.accumulate)
            return a.changes.accumulate < b.changes.accumulate;
        if (changeCount(a) != changeCount(b))
            return changeCount(a) < changeCount(b);
        return a.reservedPeak < b.reservedPeak;
    });
    return rows;
}

} // namespace memscope
