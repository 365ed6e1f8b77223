// memscope_gen_snapshot: writes a large, realistic CUDA allocator snapshot pickle.
//
//   memscope_gen_snapshot --events 1000000 --out /tmp/gen_1m.pickle [--seed 1]
//       [--layers 48] [--width 1024] [--batch 32] [--stacks python|all] [--empty-cache-every K]
//
// A training loop is simulated (an MLP of Linear/GELU/LayerNorm blocks, a vocabulary
// head, Adam with foreach temporaries, zero_grad(set_to_none)) on top of a simulated
// caching allocator (512-byte rounding, 2 MiB small segments, 20 MiB large segments,
// best-fit with splitting and coalescing), and the result is written the way
// torch.cuda.memory._dump_snapshot writes it: Python's protocol-4 pickler, trace entry
// keys and action names shared through the memo, a fresh 'N/A' per entry, frame dicts
// shared, a new frames list per alloc and per free_requested (the free_completed
// reuses it), no frames in backward with stacks="python". The shapes (sizes, lifetimes,
// stack depths, bytes per event) follow samples/many_small.pickle and samples/llm_*.
//
// Next to the pickle it writes NAME.expected.json: the event count and the peaks of the
// requested and reserved curves as the simulation knew them, for checking a replay.

#include "pickle/py_pickler.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

using memscope::tools::PyPickler;

namespace {

enum class Act : uint8_t { Alloc, FreeRequested, FreeCompleted, SegmentAlloc, SegmentFree };
const char* const kActNames[] = {"alloc", "free_requested", "free_completed", "segment_alloc", "segment_free"};

struct Event {
    Act action;
    bool shareFrames; // frames are the previous entry's list object (Python `is`)
    int32_t stack;
    uint64_t addr;
    uint64_t size;
    int64_t time;
};

struct FrameDef {
    std::string name;
    std::string filename;
    int line;
    PyPickler::Obj obj;
};

struct Options {
    int64_t events = 1000000;
    std::string out;
    uint64_t seed = 1;
    int layers = 48;
    int64_t width = 1024;
    int64_t batch = 32;
    int64_t vocab = 32000;
    bool cppStacks = false;
    int emptyCacheEvery = 0;
};

// ---------------------------------------------------------------- frames and stacks

class Stacks {
public:
    explicit Stacks(bool cpp) : m_cpp(cpp) { m_stacks.push_back({}); } // 0: no frames

    int frame(const std::string& name, const std::string& file, int line)
    {
        const std::string key = name + '\x1f' + file + '\x1f' + std::to_string(line);
        auto [it, inserted] = m_frameIndex.emplace(key, static_cast<int>(m_frames.size()));
        if (inserted)
            m_frames.push_back(FrameDef{name, file, line, {}});
        return it->second;
    }
    // Innermost first, as PyTorch writes them.
    int stack(std::vector<int> frames)
    {
        if (frames.empty())
            return 0;
        auto [it, inserted] = m_stackIndex.emplace(frames, static_cast<int>(m_stacks.size()));
        if (inserted)
            m_stacks.push_back(std::move(frames));
        return it->second;
    }
    // A Python stack, with C++ frames around it when recording stacks="all".
    int python(std::vector<int> py, const std::string& op)
    {
        if (!m_cpp)
            return stack(std::move(py));
        std::vector<int> all;
        static const char* alloc[] = {
            "c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc(signed char, unsigned long, CUstream_st*)",
            "c10::cuda::CUDACachingAllocator::Native::NativeCachingAllocator::malloc(void**, signed char, unsigned long, CUstream_st*)",
            "c10::cuda::CUDACachingAllocator::Native::NativeCachingAllocator::allocate(unsigned long)",
            "at::TensorBase at::detail::_empty_generic<long>(c10::ArrayRef<long>, c10::Allocator*, c10::DispatchKeySet, c10::ScalarType, std::optional<c10::MemoryFormat>)",
            "at::detail::empty_generic(c10::ArrayRef<long>, c10::Allocator*, c10::DispatchKeySet, c10::ScalarType, std::optional<c10::MemoryFormat>)",
            "at::detail::empty_cuda(c10::ArrayRef<long>, c10::ScalarType, std::optional<c10::Device>, std::optional<c10::MemoryFormat>)",
            "at::native::empty_cuda(c10::ArrayRef<long>, std::optional<c10::ScalarType>, std::optional<c10::Layout>, std::optional<c10::Device>, std::optional<bool>, std::optional<c10::MemoryFormat>)"};
        int line = 0;
        for (const char* f : alloc)
            all.push_back(frame(f, "??", line++ % 3));
        all.push_back(frame("at::_ops::" + op + "::call", "??", 0));
        all.push_back(frame("torch::autograd::THPVariable_" + op, "??", 0));
        all.push_back(frame("cfunction_call", "/usr/local/src/conda/python-3.12/Objects/methodobject.c", 537));
        for (size_t i = 0; i < py.size(); ++i) {
            all.push_back(py[i]);
            all.push_back(frame("_PyEval_EvalFrameDefault", "/usr/local/src/conda/python-3.12/Python/bytecodes.c", 3254));
        }
        all.push_back(frame("Py_RunMain", "/usr/local/src/conda/python-3.12/Modules/main.c", 709));
        all.push_back(frame("__libc_start_main", "??", 0));
        return stack(std::move(all));
    }
    // Backward runs on autograd's threads: no Python frames.
    int backward(const std::string& op)
    {
        if (!m_cpp)
            return 0;
        return stack(
            {frame(
                 "c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc(signed char, unsigned long, CUstream_st*)",
                 "??", 0),
             frame(
                 "at::native::empty_cuda(c10::ArrayRef<long>, std::optional<c10::ScalarType>, std::optional<c10::Layout>, std::optional<c10::Device>, std::optional<bool>, std::optional<c10::MemoryFormat>)",
                 "??", 0),
             frame("at::_ops::" + op + "::call", "??", 0),
             frame("torch::autograd::generated::" + op +
                       "Backward0::apply(std::vector<at::Tensor, std::allocator<at::Tensor> >&&)",
                   "??", 0),
             frame("torch::autograd::Node::operator()(std::vector<at::Tensor, std::allocator<at::Tensor> >&&)", "??", 0),
             frame(
                 "torch::autograd::Engine::evaluate_function(std::shared_ptr<torch::autograd::GraphTask>&, torch::autograd::Node*, torch::autograd::InputBuffer&, std::shared_ptr<torch::autograd::ReadyQueue> const&)",
                 "??", 0),
             frame("torch::autograd::Engine::thread_main(std::shared_ptr<torch::autograd::GraphTask> const&)", "??", 0),
             frame("torch::autograd::Engine::thread_init(int, std::shared_ptr<torch::autograd::ReadyQueue> const&, bool)", "??",
                   0),
             frame("start_thread", "??", 0)});
    }

    std::vector<FrameDef>& frames() { return m_frames; }
    const std::vector<int>& frames(int stack) const { return m_stacks[static_cast<size_t>(stack)]; }
    size_t count() const { return m_stacks.size(); }

private:
    bool m_cpp;
    std::vector<FrameDef> m_frames;
    std::map<std::string, int> m_frameIndex;
    std::vector<std::vector<int>> m_stacks;
    std::map<std::vector<int>, int> m_stackIndex;
};

// ---------------------------------------------------------------- the caching allocator

struct Block {
    uint64_t size = 0;
    uint64_t requested = 0;
    uint32_t segment = 0;
    bool allocated = false;
    int32_t stack = 0;
};

struct SegmentDef {
    uint64_t addr = 0;
    uint64_t size = 0;
    bool small = false;
    bool alive = true;
    int32_t stack = 0;
};

class Simulation {
public:
    Simulation(const Options& o, Stacks& stacks) : m_o(o), m_stacks(stacks), m_rng(o.seed) { }

    std::vector<Event> events;
    std::vector<SegmentDef> segments;
    std::map<uint64_t, Block> blocks; // by address
    int64_t requested = 0, reserved = 0, requestedPeak = 0, reservedPeak = 0, allocCount = 0;
    struct Ann {
        bool start;
        std::string name;
        int64_t time;
    };
    std::vector<Ann> annotations;

    // Thrown before an operation once the trace holds the requested number of events, so
    // the final allocator state always matches the events (the count overshoots by <= 1).
    struct Full { };
    bool full() const { return static_cast<int64_t>(events.size()) >= m_o.events; }

    uint64_t alloc(uint64_t size, int stack)
    {
        if (full())
            throw Full{};
        const uint64_t rounded = size < 512 ? 512 : (size + 511) / 512 * 512;
        const bool small = rounded <= (1u << 20);
        auto& pool = small ? m_freeSmall : m_freeLarge;
        auto it = pool.lower_bound({rounded, 0});
        bool fromNewSegment = false;
        if (it == pool.end()) {
            const uint64_t segSize = small                   ? (2u << 20)
                                     : rounded < (10u << 20) ? (20u << 20)
                                                             : (rounded + (2u << 20) - 1) / (2u << 20) * (2u << 20);
            m_nextAddr += (m_rng() % 4) * (2u << 20); // the driver's address space has gaps
            const uint64_t segAddr = m_nextAddr;
            m_nextAddr += segSize;
            SegmentDef s;
            s.addr = segAddr;
            s.size = segSize;
            s.small = small;
            s.stack = stack;
            segments.push_back(s);
            Block b;
            b.size = segSize;
            b.segment = static_cast<uint32_t>(segments.size() - 1);
            blocks.emplace(segAddr, b);
            it = pool.emplace(segSize, segAddr).first;
            reserved += static_cast<int64_t>(segSize);
            reservedPeak = std::max(reservedPeak, reserved);
            push(Act::SegmentAlloc, segAddr, segSize, stack, false);
            fromNewSegment = true;
        }
        const uint64_t addr = it->second;
        const uint64_t have = it->first;
        pool.erase(it);
        Block& b = blocks.at(addr);
        const uint64_t remaining = have - rounded;
        if (small ? remaining >= 512 : remaining > (1u << 20)) {
            Block rest;
            rest.size = remaining;
            rest.segment = b.segment;
            blocks.emplace(addr + rounded, rest);
            pool.emplace(remaining, addr + rounded);
            b.size = rounded;
        }
        b.allocated = true;
        b.requested = size;
        b.stack = stack;
        requested += static_cast<int64_t>(size);
        requestedPeak = std::max(requestedPeak, requested);
        ++allocCount;
        push(Act::Alloc, addr, size, stack, fromNewSegment);
        return addr;
    }

    void free(uint64_t addr, int stack)
    {
        if (full())
            throw Full{};
        auto it = blocks.find(addr);
        if (it == blocks.end() || !it->second.allocated)
            throw std::logic_error("simulation freed a block that is not allocated");
        Block& b = it->second;
        push(Act::FreeRequested, addr, b.requested, stack, false);
        push(Act::FreeCompleted, addr, b.requested, stack, true);
        requested -= static_cast<int64_t>(b.requested);
        b.allocated = false;
        b.stack = 0;
        const bool small = segments[b.segment].small;
        auto& pool = small ? m_freeSmall : m_freeLarge;
        // Coalesce with free neighbours of the same segment.
        if (auto next = std::next(it); next != blocks.end() && !next->second.allocated && next->second.segment == b.segment) {
            pool.erase({next->second.size, next->first});
            b.size += next->second.size;
            blocks.erase(next);
        }
        if (it != blocks.begin()) {
            auto prev = std::prev(it);
            if (!prev->second.allocated && prev->second.segment == b.segment) {
                pool.erase({prev->second.size, prev->first});
                prev->second.size += b.size;
                prev->second.requested = b.requested;
                blocks.erase(it);
                it = prev;
            }
        }
        pool.emplace(it->second.size, it->first);
    }

    // torch.cuda.empty_cache(): hand back every segment that is one free block.
    void emptyCache(int stack)
    {
        if (full())
            throw Full{};
        for (uint32_t s = 0; s < segments.size(); ++s) {
            SegmentDef& seg = segments[s];
            if (!seg.alive)
                continue;
            auto it = blocks.find(seg.addr);
            if (it == blocks.end() || it->second.allocated || it->second.size != seg.size)
                continue;
            (seg.small ? m_freeSmall : m_freeLarge).erase({seg.size, seg.addr});
            blocks.erase(it);
            seg.alive = false;
            reserved -= static_cast<int64_t>(seg.size);
            push(Act::SegmentFree, seg.addr, seg.size, stack, false);
        }
    }

    void annotate(bool start, const std::string& name)
    {
        m_time += 3;
        annotations.push_back({start, name, m_time});
    }
    void advance(int64_t us) { m_time += us; }
    std::mt19937_64& rng() { return m_rng; }

private:
    void push(Act a, uint64_t addr, uint64_t size, int stack, bool share)
    {
        m_time += 1 + static_cast<int64_t>(m_rng() % 4);
        events.push_back(Event{a, share, stack, addr, size, m_time});
    }

    const Options& m_o;
    Stacks& m_stacks;
    std::mt19937_64 m_rng;
    std::set<std::pair<uint64_t, uint64_t>> m_freeSmall, m_freeLarge; // (size, addr)
    uint64_t m_nextAddr = 0x7fba00000000ull;
    int64_t m_time = 1795310693506625;
};

// ---------------------------------------------------------------- the training loop

enum class Layer { Linear, Gelu, LayerNorm };

void simulate(const Options& o, Simulation& sim, Stacks& st)
{
    const std::string mod = "/opt/torch/.venv/lib/python3.12/site-packages/torch/nn/modules/module.py";
    const std::string train = "/home/user/experiments/train.py";
    const std::string model = "/home/user/experiments/model.py";
    const int fMain = st.frame("main", train, 181), fModule = st.frame("<module>", train, 210);
    const int fStep = st.frame("train_step", train, 142);
    const int fCall = st.frame("_call_impl", mod, 1786), fWrapped = st.frame("_wrapped_call_impl", mod, 1775);
    const int fModelFwd = st.frame("forward", model, 88);
    auto fwdStack = [&](std::vector<int> inner, int blockLine, const std::string& op) {
        std::vector<int> s = std::move(inner);
        for (int f : {fCall, fWrapped, st.frame("forward", model, blockLine), fCall, fWrapped, fModelFwd, fCall, fWrapped, fStep,
                      fMain, fModule})
            s.push_back(f);
        return st.python(std::move(s), op);
    };
    const int sInit = st.python(
        {st.frame("__init__", "/opt/torch/.venv/lib/python3.12/site-packages/torch/nn/modules/linear.py", 106),
         st.frame("__init__", model, 31), st.frame("build_model", train, 60), fMain, fModule},
        "empty");
    const int sTo = st.python({st.frame("convert", mod, 1370), st.frame("_apply", mod, 965), st.frame("_apply", mod, 934),
                               st.frame("to", mod, 1384), st.frame("build_model", train, 64), fMain, fModule},
                              "_to_copy");
    const int sInput = st.python({st.frame("get_batch", train, 120), fStep, fMain, fModule}, "randn");
    const int sStepEnd = st.python({fStep, fMain, fModule}, "empty");
    const std::string lin = "/opt/torch/.venv/lib/python3.12/site-packages/torch/nn/modules/linear.py";
    const std::string fn = "/opt/torch/.venv/lib/python3.12/site-packages/torch/nn/functional.py";
    const std::string norm = "/opt/torch/.venv/lib/python3.12/site-packages/torch/nn/modules/normalization.py";
    const std::string act = "/opt/torch/.venv/lib/python3.12/site-packages/torch/nn/modules/activation.py";
    // Each layer kind is called from several places of a transformer-like block (as in
    // samples/llm_*: q/k/v/o and MLP projections, two norms, two activations), so the
    // trace has the distinct stacks of a real model, not one per kind.
    std::vector<int> sLinears, sGelus, sNorms;
    for (auto [line, op] :
         {std::pair<int, const char*>{41, "addmm"}, {42, "addmm"}, {43, "addmm"}, {47, "addmm"}, {52, "addmm"}, {54, "addmm"}})
        sLinears.push_back(fwdStack({st.frame("forward", lin, 125)}, line, op));
    sGelus.push_back(fwdStack({st.frame("forward", act, 734)}, 53, "gelu"));
    sGelus.push_back(fwdStack({st.frame("softmax", fn, 2140), st.frame("attention", model, 45)}, 44, "_softmax"));
    for (int line : {38, 49, 86})
        sNorms.push_back(fwdStack({st.frame("layer_norm", fn, 2901), st.frame("forward", norm, 217)}, line, "native_layer_norm"));
    std::vector<int> sDropouts, sTemps;
    for (int line : {46, 57})
        sDropouts.push_back(
            fwdStack({st.frame("dropout", fn, 1422),
                      st.frame("forward", "/opt/torch/.venv/lib/python3.12/site-packages/torch/nn/modules/dropout.py", 70)},
                     line, "native_dropout"));
    for (auto [line, op] : {std::pair<int, const char*>{39, "mul"}, {40, "cat"}, {48, "add"}, {55, "add"}})
        sTemps.push_back(fwdStack({}, line, op));
    const int sHead = fwdStack({st.frame("forward", lin, 125)}, 92, "mm");
    const int sLoss = st.python(
        {st.frame("cross_entropy", fn, 3494), st.frame("compute_loss", train, 133), fStep, fMain, fModule}, "log_softmax");
    const std::string adam = "/opt/torch/.venv/lib/python3.12/site-packages/torch/optim/adam.py";
    const std::string optim = "/opt/torch/.venv/lib/python3.12/site-packages/torch/optim/optimizer.py";
    const int fOptStep = st.frame("step", train, 146);
    const int sAdamInit = st.python({st.frame("_init_group", adam, 175), st.frame("step", adam, 238),
                                     st.frame("_use_grad", optim, 79), st.frame("wrapper", optim, 485), fOptStep, fMain, fModule},
                                    "zeros_like");
    std::vector<int> sAdamForeach;
    for (auto [line, op] : {std::pair<int, const char*>{610, "_foreach_mul"}, {626, "_foreach_sqrt"}})
        sAdamForeach.push_back(
            st.python({st.frame("_multi_tensor_adam", adam, line), st.frame("adam", adam, 902), st.frame("step", adam, 247),
                       st.frame("_use_grad", optim, 79), st.frame("wrapper", optim, 485), fOptStep, fMain, fModule},
                      op));
    const int sZeroGrad = st.python({st.frame("zero_grad", optim, 993), st.frame("train_step", train, 139), fMain, fModule},
                                    "empty");

    std::vector<Layer> layers;
    std::vector<int> layerStack; // the call site of each layer
    for (int l = 0; l < o.layers; ++l) {
        layers.push_back(l % 3 == 0 ? Layer::Linear : l % 3 == 1 ? Layer::Gelu : Layer::LayerNorm);
        const std::vector<int>& sites = l % 3 == 0 ? sLinears : l % 3 == 1 ? sGelus : sNorms;
        layerStack.push_back(sites[static_cast<size_t>(l / 3) % sites.size()]);
    }
    const uint64_t W = static_cast<uint64_t>(o.width), B = static_cast<uint64_t>(o.batch), V = static_cast<uint64_t>(o.vocab);
    const uint64_t actBytes = B * W * 4;

    // Parameters, built on the CPU and moved with .to("cuda").
    struct Param {
        uint64_t size;
        uint64_t addr = 0;
        uint64_t grad = 0;
        uint64_t expAvg = 0, expAvgSq = 0;
    };
    std::vector<Param> params;
    std::vector<std::vector<size_t>> layerParams(layers.size());
    for (size_t l = 0; l < layers.size(); ++l) {
        if (layers[l] == Layer::Linear) {
            layerParams[l] = {params.size(), params.size() + 1};
            params.push_back({W * W * 4});
            params.push_back({W * 4});
        } else if (layers[l] == Layer::LayerNorm) {
            layerParams[l] = {params.size(), params.size() + 1};
            params.push_back({W * 4});
            params.push_back({W * 4});
        }
    }
    const size_t headParam = params.size();
    params.push_back({W * V * 4});
    for (Param& p : params)
        p.addr = sim.alloc(p.size, p.size > (1u << 20) ? sTo : sInit);

    auto& rng = sim.rng();
    std::deque<std::pair<int, uint64_t>> pendingTemps; // (allocations left, addr)
    auto tickTemps = [&](int stack) {
        for (auto& t : pendingTemps)
            --t.first;
        while (!pendingTemps.empty() && pendingTemps.front().first <= 0) {
            sim.free(pendingTemps.front().second, stack);
            pendingTemps.pop_front();
        }
    };
    auto temp = [&](uint64_t size, int allocStack, int life) { pendingTemps.emplace_back(life, sim.alloc(size, allocStack)); };
    auto drainTemps = [&](int stack) {
        while (!pendingTemps.empty()) {
            sim.free(pendingTemps.front().second, stack);
            pendingTemps.pop_front();
        }
    };

    try {
        for (int step = 0;; ++step) {
            const uint64_t input = sim.alloc(actBytes, sInput);
            const uint64_t target = sim.alloc(B * 8, sInput);
            // Forward: every layer output and norm statistics are saved for backward.
            std::vector<std::vector<uint64_t>> saved(layers.size());
            for (size_t l = 0; l < layers.size() && !sim.full(); ++l) {
                switch (layers[l]) {
                case Layer::Linear:
                case Layer::Gelu: saved[l].push_back(sim.alloc(actBytes, layerStack[l])); break;
                case Layer::LayerNorm:
                    saved[l].push_back(sim.alloc(actBytes, layerStack[l]));
                    saved[l].push_back(sim.alloc(B * 4, layerStack[l]));
                    saved[l].push_back(sim.alloc(B * 4, layerStack[l]));
                    break;
                }
                if (rng() % 4 == 0) { // dropout keeps its mask for backward
                    saved[l].push_back(sim.alloc(actBytes, sDropouts[l % 2]));
                    saved[l].push_back(sim.alloc(B * W, sDropouts[l % 2]));
                }
                if (rng() % 3 == 0)
                    temp(rng() % 2 ? actBytes : 4 + (rng() % 16) * 512, rng() % 2 ? layerStack[l] : sTemps[l % sTemps.size()],
                         1 + static_cast<int>(rng() % 6));
                tickTemps(layerStack[l]);
            }
            drainTemps(sStepEnd);
            const uint64_t logits = sim.alloc(B * V * 4, sHead);
            const uint64_t logSoftmax = sim.alloc(B * V * 4, sLoss);
            const uint64_t loss = sim.alloc(4, sLoss);
            sim.advance(2000);

            // Backward on autograd's thread.
            const int sBack = st.backward("mm");
            const int sBackAdd = st.backward("add");
            uint64_t gradOut = sim.alloc(B * V * 4, sBack);
            sim.free(logSoftmax, 0);
            if (!params[headParam].grad)
                params[headParam].grad = sim.alloc(params[headParam].size, sBack);
            sim.free(logits, 0);
            {
                const uint64_t g = sim.alloc(actBytes, sBack);
                sim.free(gradOut, 0);
                gradOut = g;
            }
            for (size_t l = layers.size(); l-- > 0;) {
                const uint64_t gradIn = sim.alloc(actBytes, layers[l] == Layer::Gelu ? st.backward("gelu_backward") : sBack);
                for (size_t p : layerParams[l])
                    if (!params[p].grad)
                        params[p].grad = sim.alloc(params[p].size, sBackAdd);
                if (rng() % 3 == 0)
                    temp(rng() % 2 ? actBytes : W * 4, sBackAdd, 1 + static_cast<int>(rng() % 4));
                for (uint64_t a : saved[l])
                    sim.free(a, 0);
                sim.free(gradOut, 0);
                gradOut = gradIn;
                tickTemps(0);
            }
            drainTemps(0);
            sim.free(gradOut, 0);
            sim.advance(2000);

            // optimizer.step(): Adam, foreach over all parameters.
            sim.annotate(true, "Optimizer.step#Adam.step");
            for (Param& p : params) {
                if (!p.expAvg) {
                    p.expAvg = sim.alloc(p.size, sAdamInit);
                    p.expAvgSq = sim.alloc(p.size, sAdamInit);
                }
            }
            for (int pass = 0; pass < 2; ++pass) {
                std::vector<uint64_t> temps;
                for (const Param& p : params)
                    temps.push_back(sim.alloc(p.size, sAdamForeach[static_cast<size_t>(pass)]));
                for (uint64_t t : temps)
                    sim.free(t, sAdamForeach[static_cast<size_t>(pass)]);
            }
            sim.annotate(false, "Optimizer.step#Adam.step");

            // optimizer.zero_grad(): set_to_none frees every gradient.
            sim.annotate(true, "Optimizer.zero_grad#Adam.zero_grad");
            for (Param& p : params) {
                if (p.grad)
                    sim.free(p.grad, sZeroGrad);
                p.grad = 0;
            }
            sim.annotate(false, "Optimizer.zero_grad#Adam.zero_grad");
            sim.free(loss, sStepEnd);
            sim.free(target, sStepEnd);
            sim.free(input, sStepEnd);
            if (o.emptyCacheEvery > 0 && (step + 1) % o.emptyCacheEvery == 0)
                sim.emptyCache(sStepEnd);
            sim.advance(5000);
        }
    } catch (const Simulation::Full&) {
    }
}

// ---------------------------------------------------------------- writing

struct Keys {
    PyPickler::Obj action, addr, size, stream, timeUs, compileContext, userMetadata, frames, empty;
    PyPickler::Obj actions[5];
    PyPickler::Obj name, filename, line;
    PyPickler::Obj device, address, totalSize, allocatedSize, activeSize, requestedSize, segmentType, large, small, segmentPoolId,
        isExpandable, blocks, state, activeAllocated, inactive;
};

void writeFrames(PyPickler& p, Keys& k, Stacks& st, int stack)
{
    const std::vector<int>& frames = st.frames(stack);
    p.openList();
    if (frames.empty())
        return;
    auto one = [&](size_t i) {
        FrameDef& f = st.frames()[static_cast<size_t>(frames[i])];
        if (p.get(f.obj))
            return;
        p.openDict(&f.obj);
        p.mark();
        p.str("name", &k.name);
        p.str(f.name);
        p.str("filename", &k.filename);
        p.str(f.filename);
        p.str("line", &k.line);
        p.integer(f.line);
        p.setItems();
    };
    if (frames.size() == 1) {
        one(0);
        p.append();
        return;
    }
    p.mark();
    for (size_t i = 0; i < frames.size(); ++i)
        one(i);
    p.appends();
}

void writeSnapshot(const Options& o, Simulation& sim, Stacks& st, std::FILE* out)
{
    PyPickler p(out);
    Keys k;
    p.begin();
    p.openDict();
    p.mark();

    // segments
    p.str("segments");
    p.openList();
    std::vector<uint32_t> live;
    for (uint32_t s = 0; s < sim.segments.size(); ++s)
        if (sim.segments[s].alive)
            live.push_back(s);
    std::sort(live.begin(), live.end(), [&](uint32_t a, uint32_t b) { return sim.segments[a].addr < sim.segments[b].addr; });
    auto writeSegment = [&](size_t i) {
        const SegmentDef& seg = sim.segments[live[i]];
        std::vector<std::pair<uint64_t, const Block*>> blocks;
        for (auto it = sim.blocks.lower_bound(seg.addr); it != sim.blocks.end() && it->first < seg.addr + seg.size; ++it)
            blocks.emplace_back(it->first, &it->second);
        uint64_t allocated = 0, requested = 0;
        for (auto& [a, b] : blocks)
            if (b->allocated) {
                allocated += b->size;
                requested += b->requested;
            }
        p.openDict();
        p.mark();
        p.str("device", &k.device);
        p.integer(0);
        p.str("address", &k.address);
        p.integer(static_cast<int64_t>(seg.addr));
        p.str("total_size", &k.totalSize);
        p.integer(static_cast<int64_t>(seg.size));
        p.str("allocated_size", &k.allocatedSize);
        p.integer(static_cast<int64_t>(allocated));
        p.str("active_size", &k.activeSize);
        p.integer(static_cast<int64_t>(allocated));
        p.str("requested_size", &k.requestedSize);
        p.integer(static_cast<int64_t>(requested));
        p.str("stream", &k.stream);
        p.integer(0);
        p.str("segment_type", &k.segmentType);
        p.str(seg.small ? "small" : "large", seg.small ? &k.small : &k.large);
        p.str("segment_pool_id", &k.segmentPoolId);
        p.integer(0);
        p.integer(0);
        p.tuple2();
        p.str("is_expandable", &k.isExpandable);
        p.boolean(false);
        p.str("frames", &k.frames);
        writeFrames(p, k, st, 0);
        p.str("blocks", &k.blocks);
        p.openList();
        auto writeBlock = [&](size_t j) {
            const auto& [addr, b] = blocks[j];
            p.openDict();
            p.mark();
            p.str("address", &k.address);
            p.integer(static_cast<int64_t>(addr));
            p.str("size", &k.size);
            p.integer(static_cast<int64_t>(b->size));
            p.str("requested_size", &k.requestedSize);
            p.integer(static_cast<int64_t>(b->requested));
            p.str("state", &k.state);
            p.str(b->allocated ? "active_allocated" : "inactive", b->allocated ? &k.activeAllocated : &k.inactive);
            p.str("frames", &k.frames);
            writeFrames(p, k, st, b->allocated ? b->stack : 0);
            p.setItems();
        };
        if (blocks.size() == 1) {
            writeBlock(0);
            p.append();
        } else if (!blocks.empty()) {
            size_t j = 0;
            while (j < blocks.size()) {
                p.mark();
                for (size_t c = 0; c < 1000 && j < blocks.size(); ++c, ++j)
                    writeBlock(j);
                p.appends();
            }
        }
        p.setItems();
    };
    if (live.size() == 1) {
        writeSegment(0);
        p.append();
    } else if (!live.empty()) {
        size_t i = 0;
        while (i < live.size()) {
            p.mark();
            for (size_t c = 0; c < 1000 && i < live.size(); ++c, ++i)
                writeSegment(i);
            p.appends();
        }
    }

    // device_traces: one device
    p.str("device_traces");
    p.openList();
    p.openList();
    PyPickler::Obj prevFrames;
    auto writeEvent = [&](size_t i) {
        const Event& e = sim.events[i];
        p.openDict();
        p.mark();
        p.str("action", &k.action);
        p.str(kActNames[static_cast<int>(e.action)], &k.actions[static_cast<int>(e.action)]);
        p.str("addr", &k.addr);
        p.integer(static_cast<int64_t>(e.addr));
        p.str("size", &k.size);
        p.integer(static_cast<int64_t>(e.size));
        p.str("stream", &k.stream);
        p.integer(0);
        p.str("time_us", &k.timeUs);
        p.integer(e.time);
        p.str("compile_context", &k.compileContext);
        p.str("N/A"); // a new str object per entry
        p.str("user_metadata", &k.userMetadata);
        p.str("", &k.empty);
        p.str("frames", &k.frames);
        if (e.shareFrames && prevFrames.memo >= 0) {
            p.get(prevFrames);
        } else {
            const int64_t memoBefore = p.memoSize();
            writeFrames(p, k, st, e.stack);
            prevFrames.memo = memoBefore; // the list is the first object the call memoized
        }
        p.setItems();
    };
    const size_t n = sim.events.size();
    if (n == 1) {
        writeEvent(0);
        p.append();
    } else {
        size_t i = 0;
        while (i < n) {
            p.mark();
            for (size_t c = 0; c < 1000 && i < n; ++c, ++i)
                writeEvent(i);
            p.appends();
        }
    }
    p.append(); // the device list into device_traces

    // allocator_settings
    p.str("allocator_settings");
    p.openDict();
    p.mark();
    p.str("PYTORCH_CUDA_ALLOC_CONF");
    p.str("", &k.empty);
    p.str("max_split_size");
    p.integer(-1);
    p.str("garbage_collection_threshold");
    p.floating(0.0);
    p.str("expandable_segments");
    p.boolean(false);
    p.str("pinned_num_register_threads");
    p.integer(1);
    p.str("release_lock_on_cudamalloc");
    p.boolean(false);
    p.str("pinned_use_cuda_host_register");
    p.boolean(false);
    p.str("graph_capture_record_stream_reuse");
    p.boolean(false);
    p.str("roundup_power2_divisions");
    p.openDict();
    p.mark();
    for (int d = 1; d <= 32768; d *= 2) {
        p.str(std::to_string(d));
        p.integer(0);
    }
    p.setItems();
    p.setItems();

    // external_annotations: keys and values are fresh str objects, as torch builds them
    p.str("external_annotations");
    p.openList();
    auto writeAnn = [&](size_t i) {
        const Simulation::Ann& a = sim.annotations[i];
        p.openDict();
        p.mark();
        p.str("stage");
        p.str(a.start ? "START" : "END");
        p.str("name");
        p.str(a.name);
        p.str("device", &k.device);
        p.integer(0);
        p.str("time_us", &k.timeUs);
        p.integer(a.time);
        p.setItems();
    };
    if (sim.annotations.size() == 1) {
        writeAnn(0);
        p.append();
    } else if (!sim.annotations.empty()) {
        size_t i = 0;
        while (i < sim.annotations.size()) {
            p.mark();
            for (size_t c = 0; c < 1000 && i < sim.annotations.size(); ++c, ++i)
                writeAnn(i);
            p.appends();
        }
    }
    p.setItems();
    p.finish();
    (void)o;
}

[[noreturn]] void usage(const char* msg)
{
    std::fprintf(stderr,
                 "memscope_gen_snapshot: %s\nusage: memscope_gen_snapshot --events N --out FILE [--seed S] [--layers L] "
                 "[--width W] [--batch B] [--vocab V] [--stacks python|all] [--empty-cache-every K]\n",
                 msg);
    std::exit(2);
}

} // namespace

int main(int argc, char** argv)
{
    Options o;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc)
                usage((a + " needs a value").c_str());
            return argv[++i];
        };
        if (a == "--events")
            o.events = std::stoll(value());
        else if (a == "--out")
            o.out = value();
        else if (a == "--seed")
            o.seed = std::stoull(value());
        else if (a == "--layers")
            o.layers = std::stoi(value());
        else if (a == "--width")
            o.width = std::stoll(value());
        else if (a == "--batch")
            o.batch = std::stoll(value());
        else if (a == "--vocab")
            o.vocab = std::stoll(value());
        else if (a == "--empty-cache-every")
            o.emptyCacheEvery = std::stoi(value());
        else if (a == "--stacks") {
            const std::string s = value();
            if (s != "python" && s != "all")
                usage("--stacks is python or all");
            o.cppStacks = s == "all";
        } else
            usage(("unknown argument " + a).c_str());
    }
    if (o.out.empty() || o.events <= 0 || o.layers < 1 || o.width < 1 || o.batch < 1)
        usage("--out and a positive --events are required");

    Stacks stacks(o.cppStacks);
    Simulation sim(o, stacks);
    simulate(o, sim, stacks);

    std::FILE* f = std::fopen(o.out.c_str(), "wb");
    if (!f)
        usage(("cannot write " + o.out).c_str());
    std::setvbuf(f, nullptr, _IOFBF, 1 << 20);
    writeSnapshot(o, sim, stacks, f);
    const long bytes = std::ftell(f);
    std::fclose(f);

    const std::string expected = o.out.substr(0, o.out.rfind(".pickle")) + ".expected.json";
    if (std::FILE* j = std::fopen(expected.c_str(), "w")) {
        std::fprintf(j,
                     "{\"events\": %zu, \"allocs\": %lld, \"requested_peak\": %lld, \"reserved_peak\": %lld, "
                     "\"file_bytes\": %ld, \"stacks\": %zu, \"frames\": %zu, \"segments\": %zu, \"seed\": %llu}\n",
                     sim.events.size(), static_cast<long long>(sim.allocCount), static_cast<long long>(sim.requestedPeak),
                     static_cast<long long>(sim.reservedPeak), bytes, stacks.count(), stacks.frames().size(), sim.segments.size(),
                     static_cast<unsigned long long>(o.seed));
        std::fclose(j);
    }
    std::printf("%s: %zu events, %ld bytes, requested peak %lld, reserved peak %lld\n", o.out.c_str(), sim.events.size(), bytes,
                static_cast<long long>(sim.requestedPeak), static_cast<long long>(sim.reservedPeak));
    return 0;
}
