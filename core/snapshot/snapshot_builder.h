#pragma once

#include "common/prefaulter.h"
#include "pickle/pickle_sink.h"
#include "snapshot/format_keys.h"
#include "snapshot/format_warnings.h"
#include "snapshot/snapshot.h"

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace memscope {

class PickleMemo;
class ParallelParse;

/*
 * Builds a Snapshot straight from the pickle VM's stream of containers.
 *
 * Containers arrive bottom-up: a trace entry dict is complete before it is appended to
 * its device's list, and that list is complete before the top-level dict names it. So
 * entries are recognised by shape, not by position:
 *
 *   dict that receives "action"        -> its keys are decoded into a pending row as they
 *                                         arrive (never stored); appended to a list, the
 *                                         row joins that list's EventTable and the node is
 *                                         recycled (its memo entry killed)
 *   list of frame dicts under "frames" -> StackId; the list's node is recycled and its memo
 *                                         entry becomes a Frozen token, so the frame list
 *                                         that a free_completed shares costs 4 bytes
 *   dict with filename/name/line       -> FrameId (cached on the node, shared via memo)
 *   tuple under "pool_id"              -> PoolId; the tuple's node is recycled and its memo
 *                                         entry becomes a Frozen pool token (kPoolToken bit)
 *   everything else (segments, blocks, annotations, settings) stays a small generic
 *   node until finish() walks the top-level dict. Containers stored inside a generic one
 *   are pinned: never recycled.
 *
 * The memory held per trace entry while loading is its columns and its memo entries
 * (4 bytes each); nodes are recycled, so their number stays that of one APPENDS batch.
 */
class SnapshotBuilder : public PickleSink {
public:
    SnapshotBuilder(Snapshot& snapshot, std::string fileName);
    ~SnapshotBuilder() override;

    // The VM's memo, to rewrite entries of recycled containers. Without it, nothing that
    // the memo names is recycled.
    void setMemo(PickleMemo* memo) { m_memo = memo; }
    // The input's size: columns are reserved from it.
    void setSizeHint(uint64_t bytes) { m_sizeHint = bytes; }

    PickleValue newContainer(ContainerKind kind, int64_t offset) override;
    PickleValue newTuple(std::span<const PickleValue> items, int64_t offset) override;
    void append(PickleValue container, std::span<const PickleValue> items, int64_t offset) override;
    void setItems(PickleValue dict, std::span<const PickleValue> keyValues, int64_t offset) override;
    void checkReference(PickleValue value, int64_t offset) override;
    void memoized(PickleValue container, uint64_t index) override;
    // Decodes a Python protocol-4 trace entry dict straight from the bytes (see
    // snapshot_builder_fast.cpp); anything unusual is left to the VM.
    size_t fastDict(std::span<const uint8_t> bytes, size_t offset, PickleValue& dict) override;
    void setFastPath(bool on) { m_fastPath = on; }
    // Commits batches of trace entries that worker threads decoded ahead of the VM
    // (parallel_parse.h, snapshot_builder_parallel.cpp); with threads <= 1, never.
    size_t fastBatches(std::span<const uint8_t> bytes, size_t offset, PickleValue list) override;
    // chunkBytes: 0 = the parse's own choice.
    void setThreads(unsigned threads, size_t chunkBytes = 0)
    {
        m_threads = threads;
        m_chunkBytes = chunkBytes;
    }
    // Batches the parallel path committed (for tests and the benchmarks).
    uint64_t parallelBatches() const { return m_parallelBatches; }
    void finish(PickleValue root, int64_t offset) override;

    size_t nodeCount() const { return m_nodes.size(); }
    size_t nodeBytes() const;

private:
    enum class Mode : uint8_t { Generic, Event, Consumed };
    static constexpr int64_t kMemoNone = -1, kMemoMany = -2;

    // A trace entry being decoded. A bad field is kept (error >= 0) and reported when the
    // entry is appended, where its device and row are known.
    struct Row {
        Action action = Action::Unknown;
        bool hasTime = false;
        bool hasDeviceFree = false;
        uint64_t addr = 0, size = 0, stream = 0, deviceFree = 0;
        int64_t time = 0;
        StackId stack;
        StackId forwardFrames;
        PoolId pool;
        StringId metadata = StringPool::empty();
        StringId context = StringPool::empty();
        int32_t error = -1; // index into m_rowErrors
    };
    struct Node {
        ContainerKind kind = ContainerKind::List;
        Mode mode = Mode::Generic;
        bool pinned = false;
        uint32_t generation = 0;
        int32_t cache = -1; // FrameId / StackId once converted (-2: an empty stack)
        int32_t table = -1; // index into m_tables for a list of trace entries
        int64_t memoIndex = kMemoNone;
        Row row;
        std::vector<PickleValue> items; // dict: key, value, key, value, ...
    };
    struct RowError {
        std::string key; // the entry's key, then a path inside its value
        std::string message;
        size_t row = 0; // once appended: its row in the table
        int64_t offset = -1; // and the APPEND's byte offset
    };

    Node& node(PickleValue v, int64_t offset)
    {
        if (v.kind != PickleKind::Container || v.node >= m_nodes.size() || m_nodes[v.node].generation != v.generation ||
            m_nodes[v.node].mode == Mode::Consumed) [[unlikely]]
            failConsumed(offset);
        return m_nodes[v.node];
    }
    [[noreturn, gnu::cold, gnu::noinline]] void failConsumed(int64_t offset) const;
    void pin(PickleValue v)
    {
        if (v.kind == PickleKind::Container && v.node < m_nodes.size() && m_nodes[v.node].generation == v.generation)
            m_nodes[v.node].pinned = true;
    }
    void recycle(uint32_t index);
    void decode(Row& row, std::span<const PickleValue> keyValues);
    void commit(Node& list, uint32_t eventNode, int64_t offset);

    // Conversions throw FieldError (relative path, message); callers add their prefix.
    // allowText: a list of strs (forward_frames) is a stack of frames named by them.
    StackId stackOf(PickleValue v, bool allowText = false);
    FrameId frameOf(PickleValue v);
    PoolId poolOf(PickleValue v);
    uint64_t u64(PickleValue v) const;
    int64_t i64(PickleValue v) const;
    StringId str(PickleValue v) const;
    Action actionOf(StringId name);

    StackId toStack(PickleValue v, int64_t offset, const std::string& path);
    uint64_t toU64(PickleValue v, int64_t offset, const std::string& path);
    int64_t toI64(PickleValue v, int64_t offset, const std::string& path);
    StringId toStr(PickleValue v, int64_t offset, const std::string& path);
    [[noreturn]] void typeError(int64_t offset, const std::string& path, const char* expected, PickleValue got) const;
    std::string toText(PickleValue v);

    void readSegments(PickleValue list, int64_t offset, const char* key, std::optional<int> device);
    void readBlockHistory(const Node& block, Segment& seg, int64_t offset, const std::string& path);
    void readTraces(PickleValue list, int64_t offset);
    void readHostTraces(PickleValue list, int64_t offset);
    DeviceTrace takeTable(Node& list, int64_t offset, const std::string& path, int device);
    void readAnnotations(PickleValue list, int64_t offset);
    void readSettings(PickleValue dict, int64_t offset, const std::string& prefix);

    Snapshot& m_snapshot;
    std::string m_fileName;
    PickleMemo* m_memo = nullptr;
    uint64_t m_sizeHint = 0;
    Prefaulter m_prefault; // the first table's columns, while the parse fills them
    std::vector<Node> m_nodes;
    std::vector<uint32_t> m_free;
    std::vector<EventTable> m_tables;
    std::vector<FrameId> m_frameScratch;
    std::vector<RowError> m_rowErrors;
    // Per table, its first bad row (index into m_rowErrors), reported by readTraces once the
    // table's device is known: a list of entries is complete before device_traces names it.
    std::vector<int32_t> m_tableError;
    std::vector<int8_t> m_actionByString; // StringId -> Action + 1; 0 = not looked up yet
    using Field = format::EntryField;
    // StringId -> the field of one kind of dict it names (format_keys.h), None past the end.
    template <class F>
    struct KeyMap {
        std::vector<F> byString;
        F operator()(PickleValue key) const
        {
            return key.kind == PickleKind::String && static_cast<size_t>(key.str) < byString.size()
                       ? byString[static_cast<size_t>(key.str)]
                       : F::None;
        }
    };
    template <class F, size_t N>
    KeyMap<F> keyMap(const std::array<std::pair<std::string_view, F>, N>& table);
    template <class F>
    const PickleValue* find(const Node& dict, const KeyMap<F>& map, F field) const;
    std::vector<Field> m_fieldOf; // StringId -> the trace entry field it names
    KeyMap<format::FrameField> m_frameField;
    KeyMap<format::TopField> m_topField;
    KeyMap<format::SegmentField> m_segmentField;
    KeyMap<format::BlockField> m_blockField;
    KeyMap<format::HistoryField> m_historyField;
    KeyMap<format::AnnotationField> m_annotationField;
    mutable FormatWarnings m_warnings;
    // A Frozen token with this bit is a pool_id tuple (index into m_pools); without, a stack.
    static constexpr uint32_t kPoolToken = 0x80000000u;
    std::vector<PoolId> m_pools;
    bool m_fastPath = true;
    // A new frame list of the fast path: its frame dict nodes, then their FrameIds. Both
    // only grow; the path keeps its own count.
    std::vector<uint32_t> m_fastItems;
    std::vector<FrameId> m_fastFrames;
    // The keys of the last trace entries, by position: Python's pickler writes an entry's
    // keys in the same order as the same memo references every time. A key whose bytes
    // (BINGET n / LONG_BINGET n) are those of its slot is known without the memo lookup,
    // as long as no str entry of the memo has been rewritten since (m_keyRewrites).
    struct KeySlot {
        uint64_t bytes = 0; // the reference's opcode and index, little-endian
        uint64_t mask = 0;
        uint8_t length = 0; // 0: empty
        Field field = Field::None;
    };
    static constexpr size_t kKeySlots = 16;
    std::array<KeySlot, kKeySlots> m_keySlots{};
    uint64_t m_keyRewrites = 0;
    struct ShortString {
        uint64_t w[2] = {0, 0};
        uint32_t length = 0;
        StringId id;
    };
    std::vector<ShortString> m_shortStrings; // direct-mapped cache in front of the StringPool
    StringId internShort(std::string_view s);
    // s (16 bytes or fewer) given also as its bytes in two little-endian words, zero-padded.
    StringId internWords(uint64_t w0, uint64_t w1, std::string_view s);
    StringId m_actionKey;

    // The parallel parse (snapshot_builder_parallel.cpp).
    EventTable& tableOf(Node& list);
    bool startParallel(std::span<const uint8_t> bytes, size_t offset);
    unsigned m_threads = 1;
    size_t m_chunkBytes = 0;
    bool m_parallelTried = false;
    std::unique_ptr<ParallelParse> m_parallel;
    uint64_t m_parallelRewrites = 0; // the memo's textRewrites() when the key table was made
    uint64_t m_parallelBatches = 0;
    std::vector<int32_t> m_runStrings; // a chunk's new strs: StringId, -1 not yet interned
    std::vector<int32_t> m_runLists; // a chunk's new frame lists: StackId, -2 not yet resolved
};

} // namespace memscope
