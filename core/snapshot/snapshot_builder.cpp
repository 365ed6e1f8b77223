#include "snapshot/snapshot_builder.h"
#include "snapshot/parallel_parse.h"
#include "common/format_number.h"

#include "common/load_error.h"
#include "pickle/pickle_memo.h"
#include "snapshot/snapshot_limits.h"

#include <algorithm>
#include <cstdio>

namespace memscope {

namespace {

// A conversion failed: `path` is relative to the value converted ("", "[3].line").
struct FieldError {
    std::string path;
    std::string message;
};

std::string describe(const Snapshot& s, PickleValue v)
{
    switch (v.kind) {
    case PickleKind::None: return "None";
    case PickleKind::Bool: return v.boolean ? "True" : "False";
    case PickleKind::Int: return "int " + (v.unsignedInt ? std::to_string(static_cast<uint64_t>(v.i)) : std::to_string(v.i));
    case PickleKind::Float: return "float " + std::to_string(v.f);
    case PickleKind::String:
    case PickleKind::Bytes: {
        std::string text(s.strings.view(StringId{v.str}).substr(0, 40));
        return std::string(v.kind == PickleKind::String ? "str '" : "bytes '") + text + "'";
    }
    case PickleKind::Container:
    case PickleKind::Frozen: return "a container";
    }
    return "?";
}

constexpr const char* kConsumed = "a reference to a trace entry that was already consumed";
constexpr int32_t kReadAsEntry = -3; // Node::cache of a segment or block dict already read

} // namespace

template <class F, size_t N>
SnapshotBuilder::KeyMap<F> SnapshotBuilder::keyMap(const std::array<std::pair<std::string_view, F>, N>& table)
{
    KeyMap<F> map;
    for (const auto& [name, field] : table) {
        const size_t k = static_cast<size_t>(m_snapshot.strings.intern(name).value);
        if (k >= map.byString.size())
            map.byString.resize(k + 1, F::None);
        map.byString[k] = field;
    }
    return map;
}

SnapshotBuilder::SnapshotBuilder(Snapshot& snapshot, std::string fileName) : m_snapshot(snapshot), m_fileName(std::move(fileName))
{
    m_fieldOf = keyMap(format::kEntryFields).byString;
    m_actionKey = m_snapshot.strings.intern(format::nameOf(format::kEntryFields, Field::Action));
    m_frameField = keyMap(format::kFrameFields);
    m_topField = keyMap(format::kTopFields);
    m_segmentField = keyMap(format::kSegmentFields);
    m_blockField = keyMap(format::kBlockFields);
    m_historyField = keyMap(format::kHistoryFields);
    m_annotationField = keyMap(format::kAnnotationFields);
}

SnapshotBuilder::~SnapshotBuilder() = default;

size_t SnapshotBuilder::nodeBytes() const
{
    size_t b = m_nodes.capacity() * sizeof(Node) + m_free.capacity() * sizeof(uint32_t);
    for (const Node& n : m_nodes)
        b += n.items.capacity() * sizeof(PickleValue);
    return b;
}

PickleValue SnapshotBuilder::newContainer(ContainerKind kind, int64_t)
{
    uint32_t index;
    if (!m_free.empty()) {
        index = m_free.back();
        m_free.pop_back();
    } else {
        index = static_cast<uint32_t>(m_nodes.size());
        m_nodes.emplace_back();
    }
    Node& n = m_nodes[index];
    n.kind = kind;
    return PickleValue::fromNode(index, n.generation);
}

PickleValue SnapshotBuilder::newTuple(std::span<const PickleValue> items, int64_t offset)
{
    PickleValue v = newContainer(ContainerKind::Tuple, offset);
    m_nodes[v.node].items.assign(items.begin(), items.end());
    for (const PickleValue& item : items)
        pin(item);
    return v;
}

void SnapshotBuilder::failConsumed(int64_t offset) const { throw LoadError(m_fileName, offset, {}, kConsumed); }

void SnapshotBuilder::checkReference(PickleValue value, int64_t offset) { node(value, offset); }

void SnapshotBuilder::memoized(PickleValue container, uint64_t index)
{
    if (container.node >= m_nodes.size() || m_nodes[container.node].generation != container.generation)
        return;
    Node& n = m_nodes[container.node];
    n.memoIndex = n.memoIndex == kMemoNone || n.memoIndex == static_cast<int64_t>(index) ? static_cast<int64_t>(index)
                                                                                         : kMemoMany;
}

void SnapshotBuilder::recycle(uint32_t index)
{
    Node& n = m_nodes[index];
    n.items.clear();
    ++n.generation;
    n.mode = Mode::Generic;
    n.pinned = false;
    n.cache = -1;
    n.table = -1;
    n.memoIndex = kMemoNone;
    // n.row is left as it is: a node becomes an Event only with a fresh row (setItems
    // resets it, fastDict assigns it).
    m_free.push_back(index);
}

void SnapshotBuilder::append(PickleValue container, std::span<const PickleValue> items, int64_t offset)
{
    Node& list = node(container, offset);
    if (list.kind == ContainerKind::Dict || list.kind == ContainerKind::Tuple)
        throw LoadError(m_fileName, offset, {}, "APPEND to a dict or tuple, expected a list");
    for (const PickleValue& item : items) {
        if (item.kind == PickleKind::Container && item.node != container.node && node(item, offset).mode == Mode::Event) {
            commit(list, item.node, offset);
        } else {
            list.items.push_back(item);
            pin(item);
        }
    }
}

void SnapshotBuilder::setItems(PickleValue dict, std::span<const PickleValue> keyValues, int64_t offset)
{
    Node& n = node(dict, offset);
    if (n.kind != ContainerKind::Dict)
        throw LoadError(m_fileName, offset, {}, "SETITEMS on a list or tuple, expected a dict");
    if (n.mode == Mode::Event) {
        decode(n.row, keyValues);
        return;
    }
    bool hasAction = false;
    for (size_t i = 0; i + 1 < keyValues.size() && !hasAction; i += 2)
        hasAction = keyValues[i].kind == PickleKind::String && keyValues[i].str == m_actionKey.value;
    if (hasAction) { // a trace entry: decode its keys now, keep none of them
        n.mode = Mode::Event;
        n.row = Row{};
        if (!n.items.empty()) { // keys set one by one before 'action' (SETITEM)
            decode(n.row, n.items);
            n.items.clear();
        }
        decode(n.row, keyValues);
        return;
    }
    n.items.insert(n.items.end(), keyValues.begin(), keyValues.end());
    for (size_t i = 1; i < keyValues.size(); i += 2)
        pin(keyValues[i]);
}

Action SnapshotBuilder::actionOf(StringId name)
{
    const size_t k = static_cast<size_t>(name.value);
    if (k >= m_actionByString.size())
        m_actionByString.resize(std::max(k + 1, m_actionByString.size() * 2), 0);
    if (m_actionByString[k] == 0) {
        const Action a = actionFromName(m_snapshot.strings.view(name)).value_or(Action::Unknown);
        m_actionByString[k] = static_cast<int8_t>(static_cast<int>(a) + 1);
    }
    return static_cast<Action>(m_actionByString[k] - 1);
}

void SnapshotBuilder::decode(Row& row, std::span<const PickleValue> keyValues)
{
    for (size_t i = 0; i + 1 < keyValues.size(); i += 2) {
        const PickleValue k = keyValues[i];
        const PickleValue v = keyValues[i + 1];
        if (k.kind != PickleKind::String)
            continue;
        const int32_t key = k.str;
        const Field field = static_cast<size_t>(key) < m_fieldOf.size() ? m_fieldOf[static_cast<size_t>(key)] : Field::None;
        try {
            switch (field) {
            case Field::None: break;
            case Field::Action: row.action = actionOf(str(v)); break;
            case Field::Addr: row.addr = u64(v); break;
            case Field::Size: row.size = u64(v); break;
            case Field::Stream:
                // Streams are raw cudaStream_t values; keep the bits whatever their sign.
                if (v.kind != PickleKind::Int)
                    throw FieldError{{}, "expected an integer, found " + describe(m_snapshot, v)};
                row.stream = static_cast<uint64_t>(v.i);
                break;
            case Field::TimeUs:
                row.hasTime = true;
                row.time = i64(v);
                break;
            case Field::Frames: row.stack = stackOf(v); break;
            case Field::UserMetadata:
                if (v.kind == PickleKind::String)
                    row.metadata = StringId{v.str};
                else if (v.kind != PickleKind::None)
                    m_warnings.note(FormatWarning::OddEntryField);
                break;
            case Field::CompileContext:
                if (v.kind == PickleKind::String)
                    row.context = StringId{v.str};
                else if (v.kind != PickleKind::None)
                    m_warnings.note(FormatWarning::OddEntryField);
                break;
            case Field::DeviceFree:
                row.deviceFree = u64(v);
                row.hasDeviceFree = true;
                break;
            case Field::ForwardFrames:
                try { // a list of strs (or of frame dicts): kept as a stack
                    row.forwardFrames = stackOf(v, true);
                } catch (const FieldError&) {
                    m_warnings.note(FormatWarning::OddEntryField);
                }
                break;
            case Field::PoolId: row.pool = poolOf(v); break;
            }
        } catch (FieldError& e) {
            if (row.error < 0) {
                row.error = static_cast<int32_t>(m_rowErrors.size());
                m_rowErrors.push_back({std::string(m_snapshot.strings.view(StringId{key})) + e.path, std::move(e.message)});
            }
        }
    }
}

PoolId SnapshotBuilder::poolOf(PickleValue v)
{
    // A (capture id, pool id) tuple; anything else is noted and read as the default pool.
    if (v.kind == PickleKind::Frozen && (v.node & kPoolToken) && (v.node & ~kPoolToken) < m_pools.size())
        return m_pools[v.node & ~kPoolToken];
    if (v.kind != PickleKind::Container || v.node >= m_nodes.size() || m_nodes[v.node].generation != v.generation ||
        m_nodes[v.node].mode != Mode::Generic || m_nodes[v.node].kind == ContainerKind::Dict) {
        if (v.kind != PickleKind::None)
            m_warnings.note(FormatWarning::OddEntryField);
        return {};
    }
    const uint32_t index = v.node;
    PoolId pool;
    {
        const Node& n = m_nodes[index];
        const size_t count = n.items.size();
        if (count != 2 || n.items[0].kind != PickleKind::Int || n.items[1].kind != PickleKind::Int) {
            m_warnings.note(FormatWarning::OddEntryField);
            return {};
        }
        pool = PoolId{n.items[0].i, n.items[1].i};
    }
    // Freeze, as stackOf does: the memo entry becomes a pool token and the node is recycled.
    Node& n = m_nodes[index];
    if (n.pinned || n.memoIndex == kMemoMany || (n.memoIndex >= 0 && !m_memo))
        return pool;
    if (n.memoIndex >= 0 && m_memo->names(static_cast<uint64_t>(n.memoIndex), index)) {
        uint32_t token = 0;
        while (token < m_pools.size() && !(m_pools[token] == pool))
            ++token;
        if (token == m_pools.size()) {
            if (m_pools.size() >= 4096) // a real file has a few pools; keep the node instead
                return pool;
            m_pools.push_back(pool);
        }
        m_memo->replace(static_cast<uint64_t>(n.memoIndex), PickleValue::fromFrozen(kPoolToken | token));
    }
    recycle(index);
    return pool;
}

EventTable& SnapshotBuilder::tableOf(Node& list)
{
    if (list.table < 0) {
        list.table = static_cast<int32_t>(m_tables.size());
        m_tables.emplace_back();
        // Python's pickler spends about 90 bytes on an entry; reserve for 48 (pages never
        // touched cost nothing) so the columns are not copied while they grow.
        // The pages of the rows a typical entry size (90 bytes) predicts are faulted in on
        // the other core.
        if (m_tables.size() == 1 && m_sizeHint > 0) {
            EventTable& t = m_tables.back();
            t.reserve(static_cast<size_t>(m_sizeHint / 48));
            const size_t expected = static_cast<size_t>(m_sizeHint / 96);
            m_prefault.add(t.addr.data(), expected * sizeof(uint64_t));
            m_prefault.add(t.size.data(), expected * sizeof(uint64_t));
            m_prefault.add(t.timeUs.data(), expected * sizeof(int64_t));
            m_prefault.add(t.stack.data(), expected * sizeof(StackId));
            m_prefault.add(t.action.data(), expected * sizeof(Action));
            m_prefault.start();
        }
    }
    return m_tables[static_cast<size_t>(list.table)];
}

void SnapshotBuilder::commit(Node& list, uint32_t eventNode, int64_t offset)
{
    EventTable& table = tableOf(list);
    Node& ev = m_nodes[eventNode];
    const Row& r = ev.row;
    const size_t row = table.count();
    if (r.error >= 0) {
        const size_t t = static_cast<size_t>(list.table);
        if (m_tableError.size() <= t)
            m_tableError.resize(t + 1, -1);
        if (m_tableError[t] < 0) {
            RowError& e = m_rowErrors[static_cast<size_t>(r.error)];
            e.row = row;
            e.offset = offset;
            m_tableError[t] = r.error;
        }
    }
    if (r.hasDeviceFree)
        table.deviceFree.emplace(static_cast<int64_t>(row), r.deviceFree);
    if (r.hasTime)
        table.hasTime = true;
    if (!r.pool.isDefault()) [[unlikely]]
        table.pool.emplace_back(static_cast<uint32_t>(row), r.pool);
    if (r.forwardFrames.valid()) [[unlikely]]
        table.forwardFrames.emplace_back(static_cast<uint32_t>(row), r.forwardFrames);
    table.push(r.action, r.addr, r.size, r.stream, r.time, r.stack, r.metadata, r.context);

    // The entry is consumed: a later reference to it is an error.
    if (ev.memoIndex >= 0 && m_memo && m_memo->names(static_cast<uint64_t>(ev.memoIndex), eventNode))
        m_memo->kill(static_cast<uint64_t>(ev.memoIndex));
    if (ev.memoIndex == kMemoMany || (ev.memoIndex >= 0 && !m_memo)) {
        ev.mode = Mode::Consumed;
        return;
    }
    recycle(eventNode);
}

void SnapshotBuilder::typeError(int64_t offset, const std::string& path, const char* expected, PickleValue got) const
{
    throw LoadError(m_fileName, offset, path, std::string("expected ") + expected + ", found " + describe(m_snapshot, got));
}

uint64_t SnapshotBuilder::u64(PickleValue v) const
{
    if (v.kind == PickleKind::Int && (v.unsignedInt || v.i >= 0))
        return static_cast<uint64_t>(v.i);
    if (v.kind == PickleKind::Bool)
        return v.boolean;
    throw FieldError{{}, "expected a non-negative integer, found " + describe(m_snapshot, v)};
}

int64_t SnapshotBuilder::i64(PickleValue v) const
{
    if (v.kind == PickleKind::Int) {
        if (v.unsignedInt) [[unlikely]] // past 2^63: most often a C++ -1 written unsigned
            m_warnings.note(FormatWarning::UnsignedSigned);
        return v.i;
    }
    if (v.kind == PickleKind::Bool)
        return v.boolean;
    throw FieldError{{}, "expected an integer, found " + describe(m_snapshot, v)};
}

StringId SnapshotBuilder::str(PickleValue v) const
{
    if (v.kind == PickleKind::String || v.kind == PickleKind::Bytes)
        return StringId{v.str};
    throw FieldError{{}, "expected a string, found " + describe(m_snapshot, v)};
}

uint64_t SnapshotBuilder::toU64(PickleValue v, int64_t offset, const std::string& path)
{
    try {
        return u64(v);
    } catch (const FieldError& e) {
        throw LoadError(m_fileName, offset, path + e.path, e.message);
    }
}

int64_t SnapshotBuilder::toI64(PickleValue v, int64_t offset, const std::string& path)
{
    try {
        return i64(v);
    } catch (const FieldError& e) {
        throw LoadError(m_fileName, offset, path + e.path, e.message);
    }
}

StringId SnapshotBuilder::toStr(PickleValue v, int64_t offset, const std::string& path)
{
    try {
        return str(v);
    } catch (const FieldError& e) {
        throw LoadError(m_fileName, offset, path + e.path, e.message);
    }
}

StackId SnapshotBuilder::toStack(PickleValue v, int64_t offset, const std::string& path)
{
    try {
        return stackOf(v);
    } catch (const FieldError& e) {
        throw LoadError(m_fileName, offset, path + e.path, e.message);
    }
}

std::string SnapshotBuilder::toText(PickleValue v)
{
    switch (v.kind) {
    case PickleKind::None: return "None";
    case PickleKind::Bool: return v.boolean ? "True" : "False";
    case PickleKind::Int: return v.unsignedInt ? std::to_string(static_cast<uint64_t>(v.i)) : std::to_string(v.i);
    case PickleKind::Float: {
        return formatGeneral(v.f);
    }
    case PickleKind::String:
    case PickleKind::Bytes: return std::string(m_snapshot.strings.view(StringId{v.str}));
    case PickleKind::Frozen: return "[…]";
    case PickleKind::Container: {
        const Node& n = m_nodes[v.node];
        std::string s = n.kind == ContainerKind::Dict ? "{" : "[";
        for (size_t i = 0; i < n.items.size() && i < 64; ++i) {
            if (i)
                s += n.kind == ContainerKind::Dict && i % 2 ? ": " : ", ";
            s += n.items[i].kind == PickleKind::Container ? "…" : toText(n.items[i]);
        }
        return s + (n.kind == ContainerKind::Dict ? "}" : "]");
    }
    }
    return {};
}

FrameId SnapshotBuilder::frameOf(PickleValue v)
{
    if (v.kind != PickleKind::Container)
        throw FieldError{{}, "expected a frame dict {filename, line, name}, found " + describe(m_snapshot, v)};
    if (v.node >= m_nodes.size() || m_nodes[v.node].generation != v.generation || m_nodes[v.node].mode != Mode::Generic)
        throw FieldError{{}, kConsumed};
    Node& n = m_nodes[v.node];
    if (n.cache >= 0)
        return FrameId{n.cache};
    if (n.kind != ContainerKind::Dict)
        throw FieldError{{}, "expected a frame dict {filename, line, name}, found a list"};
    // An odd value inside a frame makes that detail unknown, never the file unreadable.
    Frame f;
    bool oddText = false, oddLine = false;
    auto text = [&](PickleValue x, StringId& out) {
        if (x.kind == PickleKind::String || x.kind == PickleKind::Bytes)
            out = StringId{x.str};
        else if (x.kind != PickleKind::None)
            oddText = true;
    };
    for (size_t i = 0; i + 1 < n.items.size(); i += 2) {
        const PickleValue x = n.items[i + 1];
        switch (m_frameField(n.items[i])) {
        case format::FrameField::None: break;
        case format::FrameField::Filename: text(x, f.filename); break;
        case format::FrameField::Name: text(x, f.name); break;
        case format::FrameField::Line:
            if (x.kind == PickleKind::Int && !x.unsignedInt && format::isKnownLine(x.i))
                f.line = static_cast<int32_t>(x.i);
            else if (x.kind != PickleKind::None)
                oddLine = true;
            break;
        case format::FrameField::FxNodeOp: text(x, f.fxNodeOp); break;
        case format::FrameField::FxNodeName: text(x, f.fxNodeName); break;
        case format::FrameField::FxNodeTarget: text(x, f.fxNodeTarget); break;
        case format::FrameField::FxOriginalTrace: text(x, f.fxOriginalTrace); break;
        }
    }
    const FrameId id = m_snapshot.frames.intern(f);
    if (oddText) [[unlikely]]
        m_warnings.noteFrame(FormatWarning::FrameText, id.value);
    if (oddLine) [[unlikely]]
        m_warnings.noteFrame(FormatWarning::FrameLine, id.value);
    n.cache = id.value;
    std::vector<PickleValue>().swap(n.items); // only the id is needed from now on
    return id;
}

StackId SnapshotBuilder::stackOf(PickleValue v, bool allowText)
{
    if (v.kind == PickleKind::None)
        return StackId{};
    if (v.kind == PickleKind::Frozen) {
        if (v.node & kPoolToken)
            throw FieldError{{}, "expected a list of frames, found a tuple"};
        return StackId{static_cast<int32_t>(v.node) - 1};
    }
    if (v.kind != PickleKind::Container)
        throw FieldError{{}, "expected a list of frames, found " + describe(m_snapshot, v)};
    if (v.node >= m_nodes.size() || m_nodes[v.node].generation != v.generation || m_nodes[v.node].mode != Mode::Generic)
        throw FieldError{{}, kConsumed};
    const uint32_t index = v.node;
    {
        const Node& n = m_nodes[index];
        if (n.cache >= 0)
            return StackId{n.cache};
        if (n.cache == -2)
            return StackId{};
        if (n.kind == ContainerKind::Dict)
            throw FieldError{{}, "expected a list of frames, found a dict"};
        m_frameScratch.clear();
        for (size_t i = 0; i < n.items.size(); ++i) {
            try {
                const PickleValue item = n.items[i];
                if (allowText && (item.kind == PickleKind::String || item.kind == PickleKind::Bytes)) {
                    Frame f;
                    f.name = StringId{item.str};
                    m_frameScratch.push_back(m_snapshot.frames.intern(f));
                } else {
                    m_frameScratch.push_back(frameOf(item));
                }
            } catch (FieldError& e) {
                throw FieldError{"[" + std::to_string(i) + "]" + e.path, std::move(e.message)};
            }
        }
    }
    const StackId id = m_snapshot.stacks.intern(m_frameScratch);
    Node& n = m_nodes[index];
    n.cache = id.valid() ? id.value : -2;
    // Freeze: the memo entry becomes the stack's token and the node is recycled, unless
    // a generic container holds it or several memo entries name it.
    if (n.pinned || n.memoIndex == kMemoMany || (n.memoIndex >= 0 && !m_memo)) {
        std::vector<PickleValue>().swap(n.items);
        return id;
    }
    if (n.memoIndex >= 0 && m_memo->names(static_cast<uint64_t>(n.memoIndex), index))
        m_memo->replace(static_cast<uint64_t>(n.memoIndex), PickleValue::fromFrozen(static_cast<uint32_t>(id.value + 1)));
    recycle(index);
    return id;
}

template <class F>
const PickleValue* SnapshotBuilder::find(const Node& dict, const KeyMap<F>& map, F field) const
{
    for (size_t i = 0; i + 1 < dict.items.size(); i += 2)
        if (map(dict.items[i]) == field)
            return &dict.items[i + 1];
    return nullptr;
}

void SnapshotBuilder::finish(PickleValue root, int64_t offset)
{
    m_parallel.reset(); // the traces are read: the workers' buffers go
    m_prefault.join();
    if (root.kind != PickleKind::Container)
        throw LoadError(m_fileName, offset, {},
                        std::string("not a CUDA memory snapshot: the pickle holds a single ") + pickleKindName(root.kind) +
                            ", expected a dict with 'segments' and 'device_traces'");
    Node& top = node(root, offset);
    if (top.kind == ContainerKind::List) { // torch.cuda.memory_snapshot(): segments only
        readSegments(root, offset, "segments", std::nullopt);
        m_snapshot.devices.push_back(DeviceTrace{0, {}});
        m_warnings.finish(m_snapshot);
        return;
    }
    if (top.kind != ContainerKind::Dict)
        throw LoadError(m_fileName, offset, {}, "not a CUDA memory snapshot: the top level is a tuple, expected a dict");

    using format::TopField;
    // Copy: reading may grow m_nodes and move `top`.
    auto value = [&](TopField f) {
        const PickleValue* x = find(node(root, offset), m_topField, f);
        return x ? *x : PickleValue::none();
    };
    const PickleValue segmentsValue = value(TopField::Segments);
    const PickleValue tracesValue = value(TopField::DeviceTraces);
    if (segmentsValue.kind == PickleKind::None && tracesValue.kind == PickleKind::None) {
        std::string keys;
        for (size_t i = 0; i + 1 < top.items.size() && i < 40; i += 2) {
            if (!keys.empty())
                keys += ", ";
            keys += top.items[i].kind == PickleKind::String ? "'" + toText(top.items[i]) + "'" : toText(top.items[i]);
        }
        throw LoadError(m_fileName, offset, {},
                        "not a CUDA memory snapshot: top-level keys are " + (keys.empty() ? std::string("(none)") : keys) +
                            "; expected 'segments' and 'device_traces'");
    }
    const PickleValue settingsValue = value(TopField::AllocatorSettings);
    const PickleValue annotationsValue = value(TopField::ExternalAnnotations);
    const PickleValue hostSegmentsValue = value(TopField::HostSegments);
    const PickleValue hostTracesValue = value(TopField::HostTraces);

    if (segmentsValue.kind != PickleKind::None)
        readSegments(segmentsValue, offset, "segments", std::nullopt);
    if (tracesValue.kind != PickleKind::None)
        readTraces(tracesValue, offset);
    if (settingsValue.kind == PickleKind::Container)
        readSettings(settingsValue, offset, {});
    if (annotationsValue.kind == PickleKind::Container)
        readAnnotations(annotationsValue, offset);
    // Pinned host memory (record_pinned_host_memory=True): its own device, ordinal -1.
    if (hostSegmentsValue.kind == PickleKind::Container)
        readSegments(hostSegmentsValue, offset, "host_segments", format::kHostDevice);
    if (hostTracesValue.kind == PickleKind::Container)
        readHostTraces(hostTracesValue, offset);

    if (auto it = m_snapshot.allocatorSettings.find(std::string(format::kTraceOverflowed));
        it != m_snapshot.allocatorSettings.end())
        m_snapshot.traceOverflowed = it->second == "True" || it->second == "1";
    if (auto it = m_snapshot.allocatorSettings.find(std::string(format::kTraceMaxEntries));
        it != m_snapshot.allocatorSettings.end())
        m_snapshot.traceMaxEntries = std::strtoll(it->second.c_str(), nullptr, 10);
    if (m_snapshot.devices.empty())
        m_snapshot.devices.push_back(DeviceTrace{0, {}});
    m_warnings.finish(m_snapshot);
}

DeviceTrace SnapshotBuilder::takeTable(Node& dn, int64_t offset, const std::string& path, int device)
{
    // Items that are not trace entries (not dicts with 'action') stayed behind.
    if (!dn.items.empty()) {
        std::string what = dn.items[0].kind == PickleKind::Container ? "a dict or list without 'action'"
                                                                     : describe(m_snapshot, dn.items[0]);
        throw LoadError(m_fileName, offset, path, "expected trace entries (dicts with 'action'), found " + what);
    }
    DeviceTrace t;
    t.device = device;
    if (dn.table >= 0 && static_cast<size_t>(dn.table) < m_tableError.size() &&
        m_tableError[static_cast<size_t>(dn.table)] >= 0) {
        const RowError& e = m_rowErrors[static_cast<size_t>(m_tableError[static_cast<size_t>(dn.table)])];
        throw LoadError(m_fileName, e.offset, path + "[" + std::to_string(e.row) + "]." + e.key, e.message);
    }
    if (dn.table >= 0)
        t.events = std::move(m_tables[static_cast<size_t>(dn.table)]);
    return t;
}

void SnapshotBuilder::readTraces(PickleValue list, int64_t offset)
{
    if (list.kind != PickleKind::Container || node(list, offset).kind == ContainerKind::Dict)
        typeError(offset, "device_traces", "a list of per-device lists", list);
    if (node(list, offset).items.size() > kMaxDevices)
        throw LoadError(m_fileName, offset, "device_traces",
                        "holds " + std::to_string(node(list, offset).items.size()) + " per-device traces; at most " +
                            std::to_string(kMaxDevices) + " are accepted (one per GPU)");
    const std::vector<PickleValue> devices = node(list, offset).items;
    for (size_t d = 0; d < devices.size(); ++d) {
        const std::string path = "device_traces[" + std::to_string(d) + "]";
        if (devices[d].kind != PickleKind::Container)
            typeError(offset, path, "a list of trace entries", devices[d]);
        Node& dn = node(devices[d], offset);
        if (dn.kind == ContainerKind::Dict)
            throw LoadError(m_fileName, offset, path, "expected a list of trace entries, found a dict");
        m_snapshot.devices.push_back(takeTable(dn, offset, path, static_cast<int>(d)));
    }
}

void SnapshotBuilder::readHostTraces(PickleValue list, int64_t offset)
{
    // host_traces is one list of trace entries; a list holding one such list is taken too.
    Node* n = &node(list, offset);
    std::string path = "host_traces";
    if (n->kind == ContainerKind::Dict)
        throw LoadError(m_fileName, offset, path, "expected a list of trace entries, found a dict");
    if (n->table < 0 && n->items.size() == 1 && n->items[0].kind == PickleKind::Container &&
        node(n->items[0], offset).kind == ContainerKind::List) {
        n = &node(n->items[0], offset);
        path += "[0]";
    }
    m_snapshot.devices.push_back(takeTable(*n, offset, path, format::kHostDevice));
}

void SnapshotBuilder::readBlockHistory(const Node& block, Segment& seg, int64_t offset, const std::string& path)
{
    // PyTorch 2.0: a block carries `history`, a list of {addr, real_size, frames}; the
    // newest entry is the block's current allocation.
    const PickleValue* h = find(block, m_blockField, format::BlockField::History);
    if (!h || h->kind != PickleKind::Container)
        return;
    m_snapshot.blockHistoryFormat = true;
    const Node& history = node(*h, offset); // not copied: blocks may share one long history
    if (history.items.empty() || seg.blocks.empty())
        return;
    const PickleValue last = history.items.back();
    if (last.kind != PickleKind::Container)
        return;
    const Node e = node(last, offset); // copy: converting frames may recycle nodes
    Block& b = seg.blocks.back();
    for (size_t i = 0; i + 1 < e.items.size(); i += 2) {
        const PickleValue x = e.items[i + 1];
        switch (m_historyField(e.items[i])) {
        case format::HistoryField::None:
        case format::HistoryField::Addr: break;
        case format::HistoryField::RealSize: b.requestedSize = toU64(x, offset, path + ".history[-1].real_size"); break;
        case format::HistoryField::Frames: b.stack = toStack(x, offset, path + ".history[-1].frames"); break;
        }
    }
}

void SnapshotBuilder::readSegments(PickleValue list, int64_t offset, const char* key, std::optional<int> device)
{
    if (list.kind != PickleKind::Container || node(list, offset).kind == ContainerKind::Dict)
        typeError(offset, key, "a list of segments", list);
    const std::vector<PickleValue> segs = node(list, offset).items;
    m_snapshot.segments.reserve(m_snapshot.segments.size() + segs.size());
    for (size_t i = 0; i < segs.size(); ++i) {
        const std::string path = std::string(key) + "[" + std::to_string(i) + "]";
        if (segs[i].kind != PickleKind::Container || node(segs[i], offset).kind != ContainerKind::Dict)
            typeError(offset, path, "a segment dict", segs[i]);
        // A memo reference can name one segment dict many times, and its blocks list many
        // more: that multiplies (a billion laughs). Real snapshots never share a segment.
        if (m_nodes[segs[i].node].cache == kReadAsEntry)
            throw LoadError(m_fileName, offset, path, "the same segment dict appears twice (a memo reference); refused");
        m_nodes[segs[i].node].cache = kReadAsEntry;
        const Node sn = node(segs[i], offset); // copy: nested reads may grow m_nodes
        Segment seg;
        PickleValue blocksValue = PickleValue::none();
        bool hasBlocks = false;
        using format::SegmentField;
        for (size_t f = 0; f + 1 < sn.items.size(); f += 2) {
            const PickleValue x = sn.items[f + 1];
            const SegmentField field = m_segmentField(sn.items[f]);
            const std::string at = path + "." + std::string(format::nameOf(format::kSegmentFields, field));
            switch (field) {
            case SegmentField::None: break;
            case SegmentField::Device: seg.device = static_cast<int>(toI64(x, offset, at)); break;
            case SegmentField::Address: seg.address = toU64(x, offset, at); break;
            case SegmentField::TotalSize: seg.totalSize = toU64(x, offset, at); break;
            case SegmentField::AllocatedSize: seg.allocatedSize = toU64(x, offset, at); break;
            case SegmentField::ActiveSize: seg.activeSize = toU64(x, offset, at); break;
            case SegmentField::RequestedSize: seg.requestedSize = toU64(x, offset, at); break;
            case SegmentField::Stream:
                if (x.kind == PickleKind::Int)
                    seg.stream = static_cast<uint64_t>(x.i);
                else if (x.kind != PickleKind::None)
                    m_warnings.note(FormatWarning::OddSegmentField);
                break;
            case SegmentField::SegmentType:
                if (x.kind == PickleKind::String)
                    seg.largePool = m_snapshot.strings.view(StringId{x.str}) != format::kSmallPool;
                else if (x.kind != PickleKind::None)
                    m_warnings.note(FormatWarning::OddSegmentField);
                break;
            case SegmentField::IsExpandable:
                if (x.kind == PickleKind::Bool)
                    seg.expandable = x.boolean;
                else if (x.kind != PickleKind::None)
                    m_warnings.note(FormatWarning::OddSegmentField);
                break;
            case SegmentField::SegmentPoolId:
                if (x.kind == PickleKind::Container && node(x, offset).kind != ContainerKind::Dict) {
                    const Node& t = node(x, offset);
                    for (size_t k = 0; k < 2 && k < t.items.size(); ++k)
                        if (t.items[k].kind == PickleKind::Int)
                            seg.poolId[k] = t.items[k].i;
                } else if (x.kind == PickleKind::Frozen && (x.node & kPoolToken) && (x.node & ~kPoolToken) < m_pools.size()) {
                    const PoolId p = m_pools[x.node & ~kPoolToken];
                    seg.poolId[0] = p.first;
                    seg.poolId[1] = p.second;
                } else if (x.kind != PickleKind::None) {
                    m_warnings.note(FormatWarning::OddSegmentField);
                }
                break;
            case SegmentField::Frames: seg.stack = toStack(x, offset, at); break;
            case SegmentField::Blocks:
                blocksValue = x;
                hasBlocks = true;
                break;
            }
        }
        if (device)
            seg.device = *device;
        if (hasBlocks) {
            if (blocksValue.kind != PickleKind::Container)
                typeError(offset, path + ".blocks", "a list of blocks", blocksValue);
            const std::vector<PickleValue> blocks = node(blocksValue, offset).items;
            uint64_t cursor = seg.address;
            for (size_t j = 0; j < blocks.size(); ++j) {
                const std::string bpath = path + ".blocks[" + std::to_string(j) + "]";
                if (blocks[j].kind != PickleKind::Container || node(blocks[j], offset).kind != ContainerKind::Dict)
                    typeError(offset, bpath, "a block dict", blocks[j]);
                if (m_nodes[blocks[j].node].cache == kReadAsEntry)
                    throw LoadError(m_fileName, offset, bpath, "the same block dict appears twice (a memo reference); refused");
                m_nodes[blocks[j].node].cache = kReadAsEntry;
                const Node bn = node(blocks[j], offset);
                Block b;
                b.address = cursor; // 2.0 blocks have no address: they tile the segment in order
                bool hasRequested = false;
                using format::BlockField;
                for (size_t f = 0; f + 1 < bn.items.size(); f += 2) {
                    const PickleValue y = bn.items[f + 1];
                    const BlockField field = m_blockField(bn.items[f]);
                    const std::string at = bpath + "." + std::string(format::nameOf(format::kBlockFields, field));
                    switch (field) {
                    case BlockField::None:
                    case BlockField::History: break; // after the block is placed
                    case BlockField::Address: b.address = toU64(y, offset, at); break;
                    case BlockField::Size: b.size = toU64(y, offset, at); break;
                    case BlockField::RequestedSize:
                        b.requestedSize = toU64(y, offset, at);
                        hasRequested = true;
                        break;
                    case BlockField::State:
                        if (y.kind == PickleKind::String)
                            b.state = format::blockStateFromName(m_snapshot.strings.view(StringId{y.str}));
                        else if (y.kind != PickleKind::None)
                            m_warnings.note(FormatWarning::OddSegmentField);
                        break;
                    case BlockField::Frames: b.stack = toStack(y, offset, at); break;
                    }
                }
                if (!hasRequested)
                    b.requestedSize = b.size;
                cursor = b.address + b.size;
                seg.blocks.push_back(b);
                readBlockHistory(bn, seg, offset, bpath);
            }
        }
        m_snapshot.segments.push_back(std::move(seg));
    }
}

void SnapshotBuilder::readAnnotations(PickleValue list, int64_t offset)
{
    const std::vector<PickleValue> items = node(list, offset).items;
    for (size_t i = 0; i < items.size(); ++i) {
        const std::string path = "external_annotations[" + std::to_string(i) + "]";
        if (items[i].kind != PickleKind::Container || node(items[i], offset).kind != ContainerKind::Dict)
            typeError(offset, path, "an annotation dict", items[i]);
        const Node& n = node(items[i], offset);
        Annotation a;
        using format::AnnotationField;
        for (size_t f = 0; f + 1 < n.items.size(); f += 2) {
            const PickleValue x = n.items[f + 1];
            const AnnotationField field = m_annotationField(n.items[f]);
            const std::string at = path + "." + std::string(format::nameOf(format::kAnnotationFields, field));
            switch (field) {
            case AnnotationField::None: break;
            case AnnotationField::Name: a.name = toStr(x, offset, at); break;
            case AnnotationField::Stage:
                a.stage = m_snapshot.strings.view(toStr(x, offset, at)) == format::kStageEnd ? AnnotationStage::End
                                                                                             : AnnotationStage::Start;
                break;
            case AnnotationField::Device: a.device = static_cast<int>(toI64(x, offset, at)); break;
            case AnnotationField::TimeUs: a.timeUs = toI64(x, offset, at); break;
            }
        }
        m_snapshot.annotations.push_back(a);
    }
}

void SnapshotBuilder::readSettings(PickleValue dict, int64_t offset, const std::string& prefix)
{
    // Settings nest one level in practice. A dict that contains itself, or one dict shared
    // under many keys, must neither recurse nor multiply without bound.
    constexpr int kMaxDepth = 8;
    constexpr size_t kMaxEntries = 4096;
    size_t entries = 0;
    auto walk = [&](auto& self, PickleValue d, const std::string& pre, int depth) -> void {
        if (node(d, offset).kind != ContainerKind::Dict)
            return;
        for (size_t i = 0; i + 1 < node(d, offset).items.size(); i += 2) {
            const Node& n = node(d, offset); // nothing here grows m_nodes; re-read anyway
            const std::string key = pre + toText(n.items[i]);
            const PickleValue v = n.items[i + 1];
            if (++entries > kMaxEntries)
                throw LoadError(m_fileName, offset, "allocator_settings",
                                "more than " + std::to_string(kMaxEntries) + " settings; a snapshot has about 30");
            if (v.kind == PickleKind::Container && m_nodes[v.node].kind == ContainerKind::Dict) {
                if (depth >= kMaxDepth)
                    throw LoadError(m_fileName, offset, "allocator_settings." + key,
                                    "settings nested deeper than " + std::to_string(kMaxDepth) +
                                        " levels (a dict that contains itself?)");
                self(self, v, key + ".", depth + 1);
            } else {
                m_snapshot.allocatorSettings[key] = toText(v);
            }
        }
    };
    walk(walk, dict, prefix, 0);
}

} // namespace memscope
