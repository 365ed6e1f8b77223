// memscope live tracker: a libtorch extension built for the running torch at run time
// (tracker.py). It attaches to the CUDA caching allocator's trace and turns every trace
// entry into protocol messages (docs/PROTOCOL.md) without ever blocking the trainer.
//
//   allocator (any thread, under its lock) ──copy──> bounded lock-free queue ──> worker
//   record_function USER_SCOPE (annotations) ──copy──┘        (full: count a drop)   │
//                                                                                    v
//   Python pump thread <── ms_next/ms_take ── batches {definitions, events} <── symbolize
//                                                                             (GIL, batched)
//
// The callback copies the entry (a shared_ptr to its stack context, a few integers) into
// a Vyukov bounded MPMC queue and returns; no lock, no GIL, no CUDA allocation. Every
// ~50 ms the worker takes what is queued, symbolizes the stacks of the batch, interns
// strings/frames/stacks and encodes the batch. The interface is plain C for ctypes.
//
// Symbolizing without the GIL: a Python-only stack is a list of (code object, last
// instruction) pairs. The worker keeps, for the life of the process, the frames each pair
// symbolized to (file, function, line, and inductor's extra frames for generated code),
// holding a reference to the code object so that its address is never reused for
// another. Only pairs never seen before take the GIL, once per batch; a training loop
// repeats its stacks, so after the first steps no batch takes it. (torch::symbolize
// took the GIL every batch and called into Python for every distinct frame of it: the
// trainer waited for that.) Stacks with C++ frames (stacks="all") still go through
// torch::symbolize.

#include <Python.h> // first, as Python asks

#include <ATen/record_function.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/util/ApproximateClock.h>
#include <torch/csrc/profiler/combined_traceback.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

namespace {

namespace cca = c10::cuda::CUDACachingAllocator;

constexpr uint8_t kString = 2, kFrame = 3, kStack = 4, kEvents = 5, kAnnotation = 6;
constexpr size_t kMaxEventsPerMessage = 65536;
constexpr size_t kEventRecord = 48;

enum class Kind : uint8_t { Event, Annotation };

struct Item {
    Kind kind = Kind::Event;
    uint8_t action = 0;
    uint8_t stage = 0;
    int16_t device = 0;
    uint64_t addr = 0;
    uint64_t size = 0;
    uint64_t stream = 0;
    c10::approx_time_t time{};
    std::shared_ptr<c10::GatheredContext> context;
    std::string text; // user metadata of an event, name of an annotation
    std::string compile; // compile context of an event
};

// Vyukov's bounded MPMC queue: producers and the consumer meet on per-cell sequence
// numbers; a full queue refuses the item instead of waiting.
class BoundedQueue {
public:
    explicit BoundedQueue(size_t capacityPow2) : m_cells(new Cell[capacityPow2]), m_mask(capacityPow2 - 1)
    {
        for (size_t i = 0; i < capacityPow2; ++i)
            m_cells[i].seq.store(i, std::memory_order_relaxed);
    }

    template <class Fill>
    bool push(Fill&& fill)
    {
        size_t pos = m_enqueue.load(std::memory_order_relaxed);
        Cell* cell;
        for (;;) {
            cell = &m_cells[pos & m_mask];
            const size_t seq = cell->seq.load(std::memory_order_acquire);
            const intptr_t dif = static_cast<intptr_t>(seq) - static_cast<intptr_t>(pos);
            if (dif == 0) {
                if (m_enqueue.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed))
                    break;
            } else if (dif < 0) {
                return false;
            } else {
                pos = m_enqueue.load(std::memory_order_relaxed);
            }
        }
        fill(cell->item);
        cell->seq.store(pos + 1, std::memory_order_release);
        return true;
    }

    bool pop(Item& out)
    {
        size_t pos = m_dequeue.load(std::memory_order_relaxed);
        Cell* cell;
        for (;;) {
            cell = &m_cells[pos & m_mask];
            const size_t seq = cell->seq.load(std::memory_order_acquire);
            const intptr_t dif = static_cast<intptr_t>(seq) - static_cast<intptr_t>(pos + 1);
            if (dif == 0) {
                if (m_dequeue.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed))
                    break;
            } else if (dif < 0) {
                return false;
            } else {
                pos = m_dequeue.load(std::memory_order_relaxed);
            }
        }
        out = std::move(cell->item);
        cell->item.context.reset();
        cell->seq.store(pos + m_mask + 1, std::memory_order_release);
        return true;
    }

    size_t approxSize() const { return m_enqueue.load(std::memory_order_relaxed) - m_dequeue.load(std::memory_order_relaxed); }
    size_t capacity() const { return m_mask + 1; }

private:
    struct Cell {
        std::atomic<size_t> seq{0};
        Item item;
    };
    std::unique_ptr<Cell[]> m_cells;
    size_t m_mask;
    alignas(64) std::atomic<size_t> m_enqueue{0};
    alignas(64) std::atomic<size_t> m_dequeue{0};
};

struct Batch {
    std::string defs;
    std::string events;
    uint64_t count = 0;
};

// user_metadata_ exists only in newer torch; read it where it does.
template <class T, class = void>
struct HasUserMetadata : std::false_type {
};
template <class T>
struct HasUserMetadata<T, std::void_t<decltype(std::declval<const T&>().user_metadata_)>> : std::true_type {
};
template <class T, class = void>
struct HasCompileContext : std::false_type {
};
template <class T>
struct HasCompileContext<T, std::void_t<decltype(std::declval<const T&>().compile_context_)>> : std::true_type {
};

template <class T>
void copyStrings(const T& te, Item& it)
{
    if constexpr (HasUserMetadata<T>::value)
        it.text = te.user_metadata_;
    if constexpr (HasCompileContext<T>::value)
        it.compile = te.compile_context_;
}

template <class S>
uint64_t streamBits(const S& s)
{
    if constexpr (std::is_pointer_v<S>)
        return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(s));
    else
        return static_cast<uint64_t>(s);
}

void put32(std::string& out, uint32_t v) { out.append(reinterpret_cast<const char*>(&v), 4); }
void put16(std::string& out, uint16_t v) { out.append(reinterpret_cast<const char*>(&v), 2); }
void put64(std::string& out, uint64_t v) { out.append(reinterpret_cast<const char*>(&v), 8); }

void header(std::string& out, uint32_t payload, uint8_t type)
{
    put32(out, payload + 1);
    out.push_back(static_cast<char>(type));
}

class Encoder {
public:
    uint32_t string(std::string& defs, const std::string& s)
    {
        if (s.empty())
            return 0;
        auto it = m_strings.find(s);
        if (it != m_strings.end())
            return it->second;
        const uint32_t id = m_nextString++;
        m_strings.emplace(s, id);
        header(defs, static_cast<uint32_t>(4 + s.size()), kString);
        put32(defs, id);
        defs += s;
        return id;
    }

    uint32_t frame(std::string& defs, const torch::unwind::Frame& f)
    {
        std::string key = f.filename;
        key.push_back('\0');
        key += f.funcname;
        key.push_back('\0');
        key += std::to_string(f.lineno);
        auto it = m_frames.find(key);
        if (it != m_frames.end())
            return it->second;
        const uint32_t fs = string(defs, f.filename);
        const uint32_t ns = string(defs, f.funcname);
        const uint32_t id = m_nextFrame++;
        m_frames.emplace(std::move(key), id);
        header(defs, 16, kFrame);
        put32(defs, id);
        put32(defs, fs);
        put32(defs, ns);
        put32(defs, static_cast<uint32_t>(static_cast<int32_t>(f.lineno)));
        return id;
    }

    uint32_t stack(std::string& defs, const std::vector<uint32_t>& frames)
    {
        if (frames.empty())
            return 0;
        std::string key(reinterpret_cast<const char*>(frames.data()), frames.size() * 4);
        auto it = m_stacks.find(key);
        if (it != m_stacks.end())
            return it->second;
        const uint32_t id = m_nextStack++;
        m_stacks.emplace(std::move(key), id);
        header(defs, static_cast<uint32_t>(8 + 4 * frames.size()), kStack);
        put32(defs, id);
        put32(defs, static_cast<uint32_t>(frames.size()));
        defs.append(reinterpret_cast<const char*>(frames.data()), frames.size() * 4);
        return id;
    }

private:
    std::unordered_map<std::string, uint32_t> m_strings;
    std::unordered_map<std::string, uint32_t> m_frames;
    std::unordered_map<std::string, uint32_t> m_stacks;
    uint32_t m_nextString = 1, m_nextFrame = 1, m_nextStack = 1;
};

// CapturedTraceback keeps its frames private and torch offers no accessor but
// torch::symbolize (which needs the GIL for the whole batch). An explicit instantiation
// may name a private member; these read the frame lists, never write them (they are
// fixed once gathered).
template <class Tag, typename Tag::type Member>
struct PrivateMember {
    friend typename Tag::type robbed(Tag) { return Member; }
};
struct PyFramesOf {
    using type = std::vector<torch::CapturedTraceback::PyFrame> torch::CapturedTraceback::*;
    friend type robbed(PyFramesOf);
};
struct CppFramesOf {
    using type = std::vector<void*> torch::CapturedTraceback::*;
    friend type robbed(CppFramesOf);
};
struct ScriptFramesOf {
    using type = std::vector<torch::jit::StackEntry> torch::CapturedTraceback::*;
    friend type robbed(ScriptFramesOf);
};
template struct PrivateMember<PyFramesOf, &torch::CapturedTraceback::frames_>;
template struct PrivateMember<CppFramesOf, &torch::CapturedTraceback::cpp_frames_>;
template struct PrivateMember<ScriptFramesOf, &torch::CapturedTraceback::script_frames_>;

struct PyFrameKey {
    void* code;
    int lasti;
    bool operator==(const PyFrameKey& o) const { return code == o.code && lasti == o.lasti; }
};
struct PyFrameKeyHash {
    size_t operator()(const PyFrameKey& k) const
    {
        return std::hash<void*>()(k.code) ^ (std::hash<int>()(k.lasti) * 0x9e3779b97f4a7c15ull);
    }
};

std::string utf8(PyObject* s)
{
    Py_ssize_t n = 0;
    const char* p = s && PyUnicode_Check(s) ? PyUnicode_AsUTF8AndSize(s, &n) : nullptr;
    if (!p) {
        PyErr_Clear();
        return "??";
    }
    return std::string(p, static_cast<size_t>(n));
}

// The frames one (code, lasti) pair stands for, as torch's own PythonTraceback::appendSymbolized
// makes them: the frame itself, then what inductor's PyCodeCache.stack_frames_for_code adds
// for generated code. Needs the GIL.
std::vector<torch::unwind::Frame> symbolizePyFrame(PyObject* extraFn, const PyFrameKey& key)
{
    auto* code = reinterpret_cast<PyCodeObject*>(key.code);
    std::vector<torch::unwind::Frame> out;
    const int line = PyCode_Addr2Line(code, key.lasti);
    out.push_back(torch::unwind::Frame{utf8(code->co_filename), utf8(code->co_name), static_cast<uint64_t>(line)});
    if (!extraFn)
        return out;
    PyObject* lineObj = PyLong_FromLong(line);
    PyObject* extra = lineObj ? PyObject_CallFunctionObjArgs(extraFn, code->co_filename, lineObj, nullptr) : nullptr;
    Py_XDECREF(lineObj);
    if (extra && extra != Py_None) {
        PyObject* it = PyObject_GetIter(extra);
        while (PyObject* h = it ? PyIter_Next(it) : nullptr) {
            PyObject* f = PyMapping_GetItemString(h, "filename");
            PyObject* n = PyMapping_GetItemString(h, "name");
            PyObject* l = PyMapping_GetItemString(h, "line");
            const unsigned long long ln = l ? PyLong_AsUnsignedLongLong(l) : 0;
            out.push_back(torch::unwind::Frame{utf8(f), utf8(n), static_cast<uint64_t>(ln)});
            Py_XDECREF(f);
            Py_XDECREF(n);
            Py_XDECREF(l);
            Py_DECREF(h);
            PyErr_Clear();
        }
        Py_XDECREF(it);
    }
    Py_XDECREF(extra);
    PyErr_Clear();
    return out;
}

struct State {
    explicit State(size_t capacity) : queue(capacity) { }

    BoundedQueue queue;
    std::atomic<bool> accepting{false};
    std::atomic<bool> stopping{false};
    std::atomic<uint64_t> accepted{0};
    std::atomic<uint64_t> dropped{0};
    std::atomic<uint64_t> annotations{0};
    std::atomic<uint64_t> gilTakes{0}; // batches that took the GIL to symbolize
    std::atomic<uint64_t> gilNs{0}; // time spent holding (or waiting for) it
    std::atomic<uint64_t> pyFramesNew{0}; // (code, lasti) pairs symbolized
    std::atomic<uint64_t> pyFramesSeen{0};
    std::atomic<uint64_t> viaTorch{0}; // stacks with C++ frames, through torch::symbolize
    std::atomic<uint64_t> encodeNs{0}; // worker time per batch, all of it
    uint64_t highWater = 0;
    uint64_t batches = 0;
    std::thread worker;
    int batchMs = 50;

    std::mutex outMutex;
    std::condition_variable outReady;
    std::deque<Batch> out;
    std::unique_ptr<c10::ApproximateClockToUnixTimeConverter> clock;
    Encoder encoder;
    // (code, lasti) -> frame ids; each code object in it holds a reference from us.
    std::unordered_map<PyFrameKey, std::vector<uint32_t>, PyFrameKeyHash> pyFrames;
};

State* g_state = nullptr; // leaked on purpose: the allocator keeps our callback forever
bool g_attached = false;
// Light mode (torch's context="alloc"): torch then hands a free the stack of its
// allocation; the stream sends frees without one, as memscope reads such recordings.
std::atomic<bool> g_freeStacks{true};
thread_local bool t_suppressSnapshot = false;

template <class Entry>
uint8_t actionCode(typename Entry::Action a)
{
    switch (a) {
    case Entry::ALLOC: return 0;
    case Entry::FREE_REQUESTED: return 1;
    case Entry::FREE_COMPLETED: return 2;
    case Entry::SEGMENT_ALLOC: return 3;
    case Entry::SEGMENT_FREE: return 4;
    case Entry::SEGMENT_MAP: return 5;
    case Entry::SEGMENT_UNMAP: return 6;
    case Entry::SNAPSHOT: return 7;
    case Entry::OOM: return 8;
    }
    return 255;
}

template <class Entry>
void onTrace(const Entry& te)
{
    State* s = g_state;
    if (!s || !s->accepting.load(std::memory_order_relaxed))
        return;
    if (t_suppressSnapshot && te.action_ == Entry::SNAPSHOT)
        return;
    const bool ok = s->queue.push([&](Item& it) {
        it.kind = Kind::Event;
        it.action = actionCode<Entry>(te.action_);
        it.device = static_cast<int16_t>(te.device_);
        it.addr = static_cast<uint64_t>(te.addr_);
        it.size = static_cast<uint64_t>(te.size_);
        it.stream = streamBits(te.stream_);
        it.time = te.time_.approx_t_;
        const bool isFree = te.action_ == Entry::FREE_REQUESTED || te.action_ == Entry::FREE_COMPLETED;
        if (!isFree || g_freeStacks.load(std::memory_order_relaxed))
            it.context = te.context_;
        else
            it.context.reset();
        copyStrings(te, it);
    });
    if (ok)
        s->accepted.fetch_add(1, std::memory_order_relaxed);
    else
        s->dropped.fetch_add(1, std::memory_order_relaxed);
}

void onAnnotation(const at::RecordFunction& fn, uint8_t stage)
{
    State* s = g_state;
    if (!s || !s->accepting.load(std::memory_order_relaxed))
        return;
    const auto device = c10::cuda::current_device();
    const bool ok = s->queue.push([&](Item& it) {
        it.kind = Kind::Annotation;
        it.stage = stage;
        it.device = static_cast<int16_t>(device);
        it.time = c10::getApproximateTime();
        it.text = fn.name();
    });
    if (ok)
        s->annotations.fetch_add(1, std::memory_order_relaxed);
    else
        s->dropped.fetch_add(1, std::memory_order_relaxed);
}

void encodeBatch(State& s, std::vector<Item>& items, const std::function<c10::time_t(c10::approx_time_t)>& toNs)
{
    Batch b;
    const auto t0 = std::chrono::steady_clock::now();
    // Stacks: identical contexts once. Python-only ones through the frame cache, any
    // with C++ frames through torch::symbolize.
    std::vector<torch::CapturedTraceback*> unique, viaTorch;
    std::unordered_map<torch::CapturedTraceback*, size_t> index;
    std::vector<int64_t> itemTrace(items.size(), -1);
    for (size_t i = 0; i < items.size(); ++i) {
        if (!items[i].context)
            continue;
        auto* tb = dynamic_cast<torch::CapturedTraceback*>(items[i].context.get());
        if (!tb)
            continue;
        auto [it, inserted] = index.emplace(tb, unique.size());
        if (inserted)
            unique.push_back(tb);
        itemTrace[i] = static_cast<int64_t>(it->second);
    }
    std::vector<uint32_t> stackOf(unique.size(), 0);
    std::vector<PyFrameKey> fresh;
    std::unordered_map<PyFrameKey, size_t, PyFrameKeyHash> freshIndex;
    uint64_t seen = 0;
    for (auto* tb : unique) {
        if (!(tb->*robbed(CppFramesOf{})).empty()) {
            viaTorch.push_back(tb);
            continue;
        }
        for (const auto& f : tb->*robbed(PyFramesOf{})) {
            const PyFrameKey key{f.code, f.lasti};
            ++seen;
            if (!s.pyFrames.count(key) && freshIndex.emplace(key, fresh.size()).second)
                fresh.push_back(key);
        }
    }
    s.pyFramesSeen.fetch_add(seen, std::memory_order_relaxed);
    if (!fresh.empty() && Py_IsInitialized()) {
        std::vector<std::vector<torch::unwind::Frame>> symbolized;
        symbolized.reserve(fresh.size());
        const auto g0 = std::chrono::steady_clock::now();
        {
            const PyGILState_STATE gil = PyGILState_Ensure();
            // Only when inductor's code cache is already imported (there is no generated
            // code otherwise): never start an import from this thread.
            PyObject* extraFn = nullptr;
            if (PyObject* name = PyUnicode_FromString("torch._inductor.codecache")) {
                if (PyObject* mod = PyImport_GetModule(name)) {
                    if (PyObject* cache = PyObject_GetAttrString(mod, "PyCodeCache")) {
                        extraFn = PyObject_GetAttrString(cache, "stack_frames_for_code");
                        Py_DECREF(cache);
                    }
                    Py_DECREF(mod);
                }
                Py_DECREF(name);
            }
            PyErr_Clear();
            for (const auto& key : fresh) {
                Py_INCREF(reinterpret_cast<PyObject*>(key.code)); // kept: the address stays this code's
                symbolized.push_back(symbolizePyFrame(extraFn, key));
            }
            Py_XDECREF(extraFn);
            PyGILState_Release(gil);
        }
        s.gilTakes.fetch_add(1, std::memory_order_relaxed);
        s.gilNs.fetch_add(
            static_cast<uint64_t>(
                std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - g0).count()),
            std::memory_order_relaxed);
        s.pyFramesNew.fetch_add(fresh.size(), std::memory_order_relaxed);
        for (size_t k = 0; k < fresh.size(); ++k) {
            std::vector<uint32_t> ids;
            for (const auto& f : symbolized[k])
                ids.push_back(s.encoder.frame(b.defs, f));
            s.pyFrames.emplace(fresh[k], std::move(ids));
        }
    }
    std::vector<uint32_t> ids;
    for (size_t t = 0; t < unique.size(); ++t) {
        const auto* tb = unique[t];
        if (!(tb->*robbed(CppFramesOf{})).empty())
            continue;
        ids.clear();
        // As torch::symbolize orders a stack without C++ frames: TorchScript frames,
        // then the Python ones.
        for (const auto& f : tb->*robbed(ScriptFramesOf{})) {
            torch::unwind::Frame frame;
            frame.funcname = f.filename; // sic, as torch: TorchScript puts the function there
            auto flc = f.range.file_line_col();
            if (flc) {
                size_t col = 0;
                std::tie(frame.filename, frame.lineno, col) = *flc;
            } else {
                frame.filename = "??";
                frame.lineno = 0;
            }
            ids.push_back(s.encoder.frame(b.defs, frame));
        }
        for (const auto& f : tb->*robbed(PyFramesOf{})) {
            const auto& cached = s.pyFrames.at(PyFrameKey{f.code, f.lasti});
            ids.insert(ids.end(), cached.begin(), cached.end());
        }
        stackOf[t] = s.encoder.stack(b.defs, ids);
    }
    if (!viaTorch.empty()) {
        s.viaTorch.fetch_add(viaTorch.size(), std::memory_order_relaxed);
        torch::SymbolizedTracebacks sym = torch::symbolize(viaTorch);
        std::vector<uint32_t> frameIds(sym.all_frames.size());
        for (size_t f = 0; f < sym.all_frames.size(); ++f)
            frameIds[f] = s.encoder.frame(b.defs, sym.all_frames[f]);
        for (size_t t = 0; t < sym.tracebacks.size(); ++t) {
            ids.clear();
            for (uint64_t f : sym.tracebacks[t])
                ids.push_back(frameIds.at(static_cast<size_t>(f)));
            stackOf[index.at(viaTorch[t])] = s.encoder.stack(b.defs, ids);
        }
    }

    std::string records;
    size_t count = 0;
    int16_t device = -1;
    auto flush = [&]() {
        if (!count)
            return;
        header(b.events, static_cast<uint32_t>(8 + records.size()), kEvents);
        put16(b.events, static_cast<uint16_t>(device));
        put16(b.events, 0);
        put32(b.events, static_cast<uint32_t>(count));
        b.events += records;
        records.clear();
        count = 0;
    };
    for (size_t i = 0; i < items.size(); ++i) {
        Item& it = items[i];
        const int64_t timeUs = static_cast<int64_t>(toNs(it.time) / 1000);
        if (it.kind == Kind::Annotation) {
            flush();
            const uint32_t name = s.encoder.string(b.defs, it.text);
            header(b.events, 16, kAnnotation);
            put16(b.events, static_cast<uint16_t>(it.device));
            b.events.push_back(static_cast<char>(it.stage));
            b.events.push_back('\0');
            put32(b.events, name);
            put64(b.events, static_cast<uint64_t>(timeUs));
            continue;
        }
        if (count && (it.device != device || count >= kMaxEventsPerMessage))
            flush();
        device = it.device;
        const uint32_t stack = itemTrace[i] >= 0 ? stackOf.at(static_cast<size_t>(itemTrace[i])) : 0;
        const uint32_t meta = s.encoder.string(b.defs, it.text);
        const uint32_t compile = s.encoder.string(b.defs, it.compile);
        records.push_back(static_cast<char>(it.action));
        records.push_back(1); // has time_us
        put16(records, 0);
        put32(records, stack);
        put64(records, it.addr);
        put64(records, it.size);
        put64(records, it.stream);
        put64(records, static_cast<uint64_t>(timeUs));
        put32(records, meta);
        put32(records, compile);
        ++count;
        ++b.count;
    }
    flush();
    s.encodeNs.fetch_add(static_cast<uint64_t>(
                             std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count()),
                         std::memory_order_relaxed);
    {
        std::lock_guard<std::mutex> lock(s.outMutex);
        s.out.push_back(std::move(b));
        ++s.batches;
    }
    s.outReady.notify_all();
}

void workerLoop(State* s)
{
    using clock = std::chrono::steady_clock;
    std::vector<Item> items;
    auto converter = s->clock->makeConverter();
    auto convertedAt = clock::now();
    for (;;) {
        const bool last = s->stopping.load(std::memory_order_acquire);
        s->highWater = std::max<uint64_t>(s->highWater, s->queue.approxSize());
        Item it;
        while (items.size() < s->queue.capacity() && s->queue.pop(it))
            items.push_back(std::move(it));
        if (!items.empty()) {
            if (clock::now() - convertedAt > std::chrono::seconds(1)) {
                converter = s->clock->makeConverter();
                convertedAt = clock::now();
            }
            try {
                encodeBatch(*s, items, converter);
            } catch (const std::exception&) {
                s->dropped.fetch_add(items.size(), std::memory_order_relaxed);
            }
            items.clear();
        }
        if (last && s->queue.approxSize() == 0)
            break;
        std::this_thread::sleep_for(std::chrono::milliseconds(s->batchMs));
    }
    {
        std::lock_guard<std::mutex> lock(s->outMutex);
        s->out.push_back(Batch{}); // an empty batch marks the end
    }
    s->outReady.notify_all();
}

} // namespace

extern "C" {

// Starts (or restarts) tracking. Call with CUDA initialised and memory history
// recording on (stacks are only gathered then). Returns 0 on success.
int ms_start(int capacityLog2, int annotations, int batchMs)
{
    if (!g_state) {
        const size_t cap = size_t(1) << std::max(10, std::min(capacityLog2, 24));
        g_state = new State(cap);
    }
    State* s = g_state;
    if (s->worker.joinable())
        return 1;
    s->batchMs = std::max(5, std::min(batchMs, 1000));
    s->clock = std::make_unique<c10::ApproximateClockToUnixTimeConverter>();
    s->stopping.store(false);
    s->worker = std::thread(workerLoop, s);
    s->accepting.store(true, std::memory_order_release);
    if (!g_attached) {
        cca::attachAllocatorTraceTracker([](const auto& te) { onTrace(te); });
        if (annotations)
            at::addThreadLocalCallback(at::RecordFunctionCallback(
                                           [](const at::RecordFunction& fn) -> std::unique_ptr<at::ObserverContext> {
                                               onAnnotation(fn, 0);
                                               return nullptr;
                                           },
                                           [](const at::RecordFunction& fn, at::ObserverContext*) { onAnnotation(fn, 1); })
                                           .scopes({at::RecordScope::USER_SCOPE}));
        g_attached = true;
    }
    return 0;
}

// Stops accepting entries, then lets the worker encode what is queued and end.
void ms_stop()
{
    State* s = g_state;
    if (!s || !s->worker.joinable())
        return;
    s->accepting.store(false, std::memory_order_release);
    s->stopping.store(true, std::memory_order_release);
    s->worker.join();
}

// Waits up to timeoutMs for a batch. Returns 1 and its sizes (definitions bytes,
// events bytes, event count) when one is ready, 0 on timeout, -1 after the last one.
int ms_next(int timeoutMs, int64_t* sizes)
{
    State* s = g_state;
    if (!s)
        return -1;
    std::unique_lock<std::mutex> lock(s->outMutex);
    s->outReady.wait_for(lock, std::chrono::milliseconds(timeoutMs), [&] { return !s->out.empty(); });
    if (s->out.empty())
        return 0;
    const Batch& b = s->out.front();
    if (b.defs.empty() && b.events.empty() && b.count == 0) {
        s->out.pop_front();
        return -1;
    }
    sizes[0] = static_cast<int64_t>(b.defs.size());
    sizes[1] = static_cast<int64_t>(b.events.size());
    sizes[2] = static_cast<int64_t>(b.count);
    return 1;
}

// Copies the batch ms_next described into the caller's buffers and lets it go.
void ms_take(char* defs, char* events)
{
    State* s = g_state;
    std::lock_guard<std::mutex> lock(s->outMutex);
    if (s->out.empty())
        return;
    const Batch& b = s->out.front();
    std::memcpy(defs, b.defs.data(), b.defs.size());
    std::memcpy(events, b.events.data(), b.events.size());
    s->out.pop_front();
}

// keep = 0: free events go out without a stack (the light mode).
void ms_free_stacks(int keep) { g_freeStacks.store(keep != 0, std::memory_order_relaxed); }

// While on, SNAPSHOT entries made by this thread (the agent's own snapshot()) are skipped.
void ms_suppress_snapshot(int on) { t_suppressSnapshot = on != 0; }

// accepted, dropped, annotations, queue capacity, queue high water, batches, batches that
// took the GIL, ns spent taking and holding it, (code, lasti) pairs symbolized, Python
// frames looked up, stacks through torch::symbolize, ns the worker spent encoding
void ms_stats(uint64_t* out)
{
    State* s = g_state;
    if (!s) {
        std::memset(out, 0, 12 * sizeof(uint64_t));
        return;
    }
    out[0] = s->accepted.load();
    out[1] = s->dropped.load();
    out[2] = s->annotations.load();
    out[3] = s->queue.capacity();
    out[4] = s->highWater;
    out[5] = s->batches;
    out[6] = s->gilTakes.load();
    out[7] = s->gilNs.load();
    out[8] = s->pyFramesNew.load();
    out[9] = s->pyFramesSeen.load();
    out[10] = s->viaTorch.load();
    out[11] = s->encodeNs.load();
}

} // extern "C"
