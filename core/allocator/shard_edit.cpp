#include "allocator/shard_edit.h"

#include "attribute/attribution.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <unordered_map>
#include <unordered_set>
#include <cstdint>
#include <iterator>

namespace memscope {

namespace {

constexpr uint64_t kMiB = 1 << 20;
constexpr uint64_t kSmallTensor = 4096; // a step counter, a norm's bias: never split

struct Insert {
    size_t before; // position in the edited stream
    TraceOp op;
};

} // namespace

void applySharding(OpStream& s, const Sharding& sharding, const ShardInputs& in, std::vector<std::string>& notes)
{
    const int N = std::max(1, sharding.ranks);
    const DeviceAttribution& at = *in.attribution;
    auto phaseOf = [&](const TraceOp& op) {
        return op.event >= 0 && static_cast<size_t>(op.event) < at.eventPhase.size()
                   ? at.eventPhase[static_cast<size_t>(op.event)]
                   : Phase::Other;
    };
    std::vector<size_t> params; // the parameters' allocs, in the order the model made them
    for (size_t i = 0; i < s.ops.size(); ++i)
        if (s.ops[i].kind == TraceOp::Kind::Alloc && s.ops[i].category == Category::Parameter)
            params.push_back(i);
    if (params.empty()) {
        notes.push_back("no parameters found: --shard changes nothing");
        return;
    }
    uint64_t paramBytes = 0;
    for (size_t i : params)
        paramBytes += s.ops[i].size;
    size_t firstForward = s.ops.size();
    for (size_t i = 0; i < s.ops.size() && firstForward == s.ops.size(); ++i)
        if (phaseOf(s.ops[i]) == Phase::Forward)
            firstForward = i;
    size_t setup = 0; // after the model: where DDP's buckets are made
    for (size_t i : params)
        if (i < firstForward)
            setup = i + 1;
    if (setup == 0)
        setup = firstForward;
    std::vector<Insert> inserts;
    auto add = [&](size_t before, TraceOp::Kind kind, uint32_t key, uint64_t size, Category c) {
        TraceOp op;
        op.kind = kind;
        op.key = key;
        op.size = size;
        op.category = c;
        const size_t near = std::min(before, s.ops.size() - 1);
        op.stream = s.ops[near].stream;
        op.event = s.ops[near].event;
        inserts.push_back({before, op});
    };
    auto shrink = [&](uint64_t size) {
        return std::max<uint64_t>(1, (size + static_cast<uint64_t>(N) - 1) / static_cast<uint64_t>(N));
    };
    const std::string perRank = "each of the " + std::to_string(N) + " ranks trains a batch of the recorded size";

    if (sharding.kind == ShardKind::Ddp || sharding.kind == ShardKind::Zero1) {
        // DDP's reducer: buckets over the parameters from the last one back, the first
        // capped at 1 MiB, the others at 25 MiB
        uint64_t cap = 1 * kMiB, bucket = 0;
        for (size_t k = params.size(); k-- > 0;) {
            bucket += s.ops[params[k]].size;
            if (bucket >= cap) {
                add(setup, TraceOp::Kind::Alloc, s.newKey(), bucket, Category::Gradient);
                bucket = 0;
                cap = 25 * kMiB;
            }
        }
        if (bucket > 0)
            add(setup, TraceOp::Kind::Alloc, s.newKey(), bucket, Category::Gradient);
        // DDP rebuilds its buckets at the second forward, in the order the gradients became
        // ready; measured on 2 and 4 H100s, one, two or all ranks of a job kept both sets (which
        // ones is timing's): rank 0 stands for them
        size_t rebuild = s.ops.size();
        if (sharding.rank == 0 && N > 1 && at.iterations.size() >= 2)
            for (size_t i = 0; i < s.ops.size() && rebuild == s.ops.size(); ++i)
                if (s.ops[i].event >= at.iterations[1].firstEvent && phaseOf(s.ops[i]) == Phase::Forward)
                    rebuild = i;
        if (rebuild < s.ops.size())
            add(rebuild, TraceOp::Kind::Alloc, s.newKey(), paramBytes, Category::Gradient);
        notes.push_back("DDP: " + perRank +
                        "; its gradient buckets (the parameters' bytes again) are kept for the whole run, "
                        "and rank 0 stands for the ranks that keep a second set after DDP rebuilds them at the second "
                        "forward (one, two or all ranks of a measured job; which ones is timing's)");
    }
    if (sharding.kind == ShardKind::Zero1 && N > 1) {
        // the state tensors, K per parameter in the optimizer's order (made at the first step);
        // the parameters they belong to are the next ones of their size (a buffer the model
        // moved with its parameters, a rotary embedding's inv_freq, has none)
        std::vector<size_t> states;
        for (size_t i = 0; i < s.ops.size(); ++i)
            if (s.ops[i].kind == TraceOp::Kind::Alloc && s.ops[i].category == Category::OptimizerState)
                states.push_back(i);
        const auto K = static_cast<size_t>(std::max(0L, std::lround(in.optimizerStates)));
        std::vector<size_t> optimized; // parameters with state, by index into params
        bool matched = K > 0 && !states.empty() && states.size() % K == 0;
        for (size_t j = 0, q = 0; matched && j < states.size(); j += K, ++q) {
            while (q < params.size() && s.ops[params[q]].size != s.ops[states[j]].size)
                ++q;
            matched = q < params.size();
            for (size_t t = 1; matched && t < K; ++t)
                matched = s.ops[states[j + t]].size == s.ops[states[j]].size;
            if (matched)
                optimized.push_back(q);
        }
        if (!matched) {
            optimized.resize(params.size());
            std::iota(optimized.begin(), optimized.end(), size_t{0});
        }
        // ZeroRedundancyOptimizer's partition: the parameters largest first, each to the rank
        // holding the fewest bytes so far
        std::vector<size_t> order(optimized.size());
        std::iota(order.begin(), order.end(), size_t{0});
        std::stable_sort(order.begin(), order.end(),
                         [&](size_t a, size_t b) { return s.ops[params[optimized[a]]].size > s.ops[params[optimized[b]]].size; });
        std::vector<uint64_t> load(static_cast<size_t>(N), 0);
        std::vector<int> owner(optimized.size(), 0);
        uint64_t optimizedBytes = 0;
        for (size_t o : order) {
            const auto r = static_cast<size_t>(std::min_element(load.begin(), load.end()) - load.begin());
            owner[o] = static_cast<int>(r);
            load[r] += s.ops[params[optimized[o]]].size;
            optimizedBytes += s.ops[params[optimized[o]]].size;
        }
        const int me = std::clamp(sharding.rank, 0, N - 1);
        const double share = optimizedBytes > 0
                                 ? static_cast<double>(load[static_cast<size_t>(me)]) / static_cast<double>(optimizedBytes)
                                 : 0;
        std::unordered_set<uint32_t> dropped;
        if (matched) {
            for (size_t j = 0; j < states.size(); ++j)
                if (owner[j / K] != me)
                    dropped.insert(s.ops[states[j]].key);
        } else {
            for (size_t i : states)
                s.ops[i].size = static_cast<uint64_t>(std::ceil(static_cast<double>(s.ops[i].size) * share));
            if (!states.empty())
                notes.push_back("ZeRO-1: the optimizer state could not be matched to the parameters one by one; each state "
                                "tensor is scaled to this rank's share of the parameters");
        }
        for (TraceOp& op : s.ops)
            if (op.kind == TraceOp::Kind::Alloc && op.category == Category::Intermediate && op.size >= kSmallTensor &&
                phaseOf(op) == Phase::OptimizerStep)
                op.size = std::max<uint64_t>(1, static_cast<uint64_t>(std::ceil(static_cast<double>(op.size) * share)));
        // the state of the other ranks' parameters goes, and the places of the buckets move up
        std::vector<size_t> removedBefore(s.ops.size() + 1, 0);
        for (size_t i = 0; i < s.ops.size(); ++i)
            removedBefore[i + 1] = removedBefore[i] + (dropped.count(s.ops[i].key) ? 1 : 0);
        for (Insert& x : inserts)
            x.before -= removedBefore[x.before];
        std::erase_if(s.ops, [&](const TraceOp& op) { return dropped.count(op.key) > 0; });
        notes.push_back("ZeRO-1: rank " + std::to_string(me) + " keeps the optimizer state of " +
                        std::to_string(static_cast<int>(std::lround(share * 100))) + "% of the parameters' bytes");
    }
    if (sharding.kind == ShardKind::Fsdp2 && N > 1) {
        // which parameters are a block's: the sizes that come a whole number of times per block
        const int nb = in.blocks ? in.blocks->count() : 0;
        std::map<uint64_t, int> count;
        for (size_t i : params)
            ++count[s.ops[i].size];
        std::vector<uint64_t> root;
        uint64_t blockBytes = 0;
        for (size_t i : params) {
            const int c = count[s.ops[i].size];
            if (nb >= 2 && c >= nb && c % nb == 0)
                blockBytes += s.ops[i].size;
            else
                root.push_back(s.ops[i].size);
        }
        const uint64_t perBlock = nb >= 2 ? blockBytes / static_cast<uint64_t>(nb) : 0;
        for (TraceOp& op : s.ops) {
            if (op.kind != TraceOp::Kind::Alloc)
                continue;
            const bool stepTemporary = op.category == Category::Intermediate && op.size >= kSmallTensor &&
                                       phaseOf(op) == Phase::OptimizerStep;
            if (op.category == Category::Parameter || op.category == Category::Gradient ||
                op.category == Category::OptimizerState || stepTemporary)
                op.size = shrink(op.size);
        }
        // each op's iteration, in one pass (iterations are ordered and do not overlap)
        std::vector<std::vector<size_t>> byIteration(at.iterations.size());
        for (size_t i = 0; i < s.ops.size(); ++i) {
            const int64_t e = s.ops[i].event;
            const auto it = std::upper_bound(at.iterations.begin(), at.iterations.end(), e,
                                             [](int64_t v, const Iteration& x) { return v < x.firstEvent; });
            if (it != at.iterations.begin() && e <= std::prev(it)->lastEvent)
                byIteration[static_cast<size_t>(std::prev(it) - at.iterations.begin())].push_back(i);
        }
        for (size_t itIndex = 0; itIndex < at.iterations.size(); ++itIndex) {
            const std::vector<size_t>& mine = byIteration[itIndex];
            size_t begin = s.ops.size(), end = 0; // the iteration's forward start, its backward's end
            for (size_t i : mine) {
                const Phase p = phaseOf(s.ops[i]);
                if (p == Phase::Forward && begin == s.ops.size())
                    begin = i;
                if (p == Phase::Backward)
                    end = i + 1;
            }
            if (begin == s.ops.size() || end <= begin)
                continue;
            std::vector<uint32_t> rootKeys;
            for (uint64_t size : root) {
                rootKeys.push_back(s.newKey());
                add(begin, TraceOp::Kind::Alloc, rootKeys.back(), size, Category::Parameter);
            }
            for (uint32_t k : rootKeys)
                add(end, TraceOp::Kind::Free, k, 0, Category::Parameter);
            const int index = at.iterations[itIndex].index;
            if (perBlock == 0 || index < 0 || static_cast<size_t>(index) >= in.blocks->perIteration.size())
                continue;
            const std::vector<BlockSpan>& spans = in.blocks->perIteration[static_cast<size_t>(index)];
            if (spans.empty())
                continue;
            // per block: its forward ops' first and last place, its activations, and the
            // first and last place the backward frees one of them
            struct Window {
                size_t first = SIZE_MAX, last = 0, bFirst = SIZE_MAX, bLast = 0;
            };
            std::vector<Window> w(spans.size());
            std::unordered_map<uint32_t, size_t> blockOf; // an activation's key -> its block
            for (size_t i : mine) {
                if (i < begin || i >= end)
                    continue;
                const TraceOp& op = s.ops[i];
                const auto sp = std::upper_bound(spans.begin(), spans.end(), op.event,
                                                 [](int64_t v, const BlockSpan& x) { return v < x.firstEvent; });
                if (sp == spans.begin() || op.event > std::prev(sp)->lastEvent)
                    continue;
                const auto b = static_cast<size_t>(std::prev(sp) - spans.begin());
                if (phaseOf(op) != Phase::Forward)
                    continue;
                w[b].first = std::min(w[b].first, i);
                w[b].last = i + 1;
                if (op.kind == TraceOp::Kind::Alloc && op.category == Category::Activation)
                    blockOf[op.key] = b;
            }
            for (size_t i : mine) {
                const TraceOp& op = s.ops[i];
                if (i >= end || op.kind != TraceOp::Kind::Free || phaseOf(op) != Phase::Backward)
                    continue;
                const auto found = blockOf.find(op.key);
                if (found == blockOf.end())
                    continue;
                Window& x = w[found->second];
                x.bFirst = std::min(x.bFirst, i);
                x.bLast = i + 1;
            }
            for (const Window& x : w) {
                if (x.first >= x.last)
                    continue;
                const uint32_t fwd = s.newKey();
                add(x.first, TraceOp::Kind::Alloc, fwd, perBlock, Category::Parameter);
                add(x.last, TraceOp::Kind::Free, fwd, 0, Category::Parameter);
                if (x.bFirst >= x.bLast)
                    continue;
                const uint32_t bwd = s.newKey(), grads = s.newKey();
                add(x.bFirst, TraceOp::Kind::Alloc, bwd, perBlock, Category::Parameter);
                add(x.bLast, TraceOp::Kind::Alloc, grads, perBlock, Category::Gradient);
                add(x.bLast, TraceOp::Kind::Free, grads, 0, Category::Gradient);
                add(x.bLast, TraceOp::Kind::Free, bwd, 0, Category::Parameter);
            }
        }
        uint64_t rootBytes = 0;
        for (uint64_t r : root)
            rootBytes += r;
        notes.push_back("FSDP2: " + perRank + "; parameters, gradients and optimizer state are 1/" + std::to_string(N) +
                        " each; the root's parameters (" + std::to_string(rootBytes >> 20) +
                        " MiB: embeddings, head) are whole from the forward's start to the backward's end, each block's (" +
                        std::to_string(perBlock >> 20) +
                        " MiB) during its forward and its backward; prefetch and communication buffers are not modelled");
    }
    if (inserts.empty())
        return;
    std::stable_sort(inserts.begin(), inserts.end(), [](const Insert& a, const Insert& b) { return a.before < b.before; });
    std::vector<TraceOp> out;
    out.reserve(s.ops.size() + inserts.size());
    size_t x = 0;
    for (size_t i = 0; i <= s.ops.size(); ++i) {
        while (x < inserts.size() && inserts[x].before == i)
            out.push_back(inserts[x++].op);
        if (i < s.ops.size())
            out.push_back(s.ops[i]);
    }
    s.ops.swap(out);
}

} // namespace memscope
