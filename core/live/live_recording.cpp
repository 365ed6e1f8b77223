#include "live/live_recording.h"
#include "common/format_number.h"

#include "live/protocol.h"
#include "snapshot/snapshot_limits.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace memscope {

namespace {

using live::MessageType;

class Reader {
public:
    Reader(std::span<const uint8_t> p, const char* what) : m_p(p), m_what(what) { }

    template <class T>
    T get()
    {
        need(sizeof(T));
        T v;
        std::memcpy(&v, m_p.data() + m_at, sizeof(T));
        m_at += sizeof(T);
        return v;
    }
    void skip(size_t n)
    {
        need(n);
        m_at += n;
    }
    std::span<const uint8_t> rest() const { return m_p.subspan(m_at); }
    size_t remaining() const { return m_p.size() - m_at; }
    void need(size_t n) const
    {
        if (m_p.size() - m_at < n)
            throw LiveProtocolError(std::string(m_what) + " message is " + std::to_string(m_p.size()) +
                                    " bytes, too short for its contents");
    }
    void expectEnd() const
    {
        if (m_at != m_p.size())
            throw LiveProtocolError(std::string(m_what) + " message has " + std::to_string(m_p.size() - m_at) +
                                    " unexpected trailing bytes");
    }

private:
    std::span<const uint8_t> m_p;
    const char* m_what;
    size_t m_at = 0;
};

nlohmann::json parseJson(std::span<const uint8_t> p, const char* what)
{
    try {
        auto j = nlohmann::json::parse(p.begin(), p.end());
        if (!j.is_object())
            throw LiveProtocolError(std::string(what) + " message: expected a JSON object");
        return j;
    } catch (const nlohmann::json::exception& e) {
        throw LiveProtocolError(std::string(what) + " message: invalid JSON (" + e.what() + ")");
    }
}

// The same text the pickle loader gives an allocator setting (see SnapshotBuilder::toText).
std::string settingText(const nlohmann::json& v)
{
    if (v.is_null())
        return "None";
    if (v.is_boolean())
        return v.get<bool>() ? "True" : "False";
    if (v.is_number_unsigned())
        return std::to_string(v.get<uint64_t>());
    if (v.is_number_integer())
        return std::to_string(v.get<int64_t>());
    if (v.is_number_float()) {
        return formatGeneral(v.get<double>());
    }
    if (v.is_string())
        return v.get<std::string>();
    std::string s = v.is_object() ? "{" : "[";
    size_t i = 0;
    for (const auto& item : v) {
        if (i++)
            s += ", ";
        s += item.is_structured() ? "…" : settingText(item);
        if (i >= 64)
            break;
    }
    return s + (v.is_object() ? "}" : "]");
}

void flattenSettings(const nlohmann::json& obj, const std::string& prefix, std::map<std::string, std::string>& out, int depth)
{
    if (depth > 16)
        throw LiveProtocolError("SETTINGS message: nested deeper than 16 levels");
    for (auto it = obj.begin(); it != obj.end(); ++it) {
        const std::string key = prefix + it.key();
        if (it->is_object())
            flattenSettings(*it, key + ".", out, depth + 1);
        else
            out[key] = settingText(*it);
    }
}

Action actionFromCode(uint8_t code)
{
    return code <= static_cast<uint8_t>(Action::Oom) ? static_cast<Action>(code) : Action::Unknown;
}

std::string str(const nlohmann::json& j, const char* key)
{
    auto it = j.find(key);
    if (it == j.end() || it->is_null())
        return {};
    return it->is_string() ? it->get<std::string>() : it->dump();
}

int64_t num(const nlohmann::json& j, const char* key, int64_t fallback)
{
    auto it = j.find(key);
    return it != j.end() && it->is_number_integer() ? it->get<int64_t>() : fallback;
}

} // namespace

std::unique_ptr<Snapshot> copySnapshot(const Snapshot& s)
{
    auto c = std::make_unique<Snapshot>();
    c->path = s.path;
    c->format = s.format;
    c->pickleProtocol = s.pickleProtocol;
    c->fileBytes = s.fileBytes;
    c->devices = s.devices;
    c->segments = s.segments;
    c->annotations = s.annotations;
    c->allocatorSettings = s.allocatorSettings;
    c->traceOverflowed = s.traceOverflowed;
    c->traceMaxEntries = s.traceMaxEntries;
    c->blockHistoryFormat = s.blockHistoryFormat;
    for (size_t i = 1; i < s.strings.size(); ++i)
        c->strings.intern(s.strings.view(StringId{static_cast<int32_t>(i)}));
    c->frames = s.frames;
    c->stacks = s.stacks;
    return c;
}

LiveRecording::LiveRecording() : m_snapshot(std::make_unique<Snapshot>())
{
    m_snapshot->format = SnapshotFormat::Live;
    m_snapshot->devices.push_back(DeviceTrace{0, {}});
    m_strings.emplace(0u, StringPool::empty());
    m_stacks.emplace(0u, StackId{});
}

std::shared_ptr<const Snapshot> LiveRecording::snapshot() const { return copySnapshot(*m_snapshot); }

void LiveRecording::releaseEvents()
{
    auto& devices = m_snapshot->devices;
    if (m_released.size() < devices.size())
        m_released.resize(devices.size(), 0);
    for (size_t d = 0; d < devices.size(); ++d) {
        EventTable& t = devices[d].events;
        if (t.count() == 0)
            continue;
        m_released[d] += static_cast<int64_t>(t.count());
        EventTable fresh;
        fresh.hasTime = t.hasTime;
        t = std::move(fresh);
    }
}

StringId LiveRecording::stringRef(uint32_t wire, const char* what) const
{
    auto it = m_strings.find(wire);
    if (it == m_strings.end())
        throw LiveProtocolError(std::string(what) + " refers to string " + std::to_string(wire) + ", which was never defined");
    return it->second;
}

StackId LiveRecording::stackRef(uint32_t wire, const char* what) const
{
    auto it = m_stacks.find(wire);
    if (it == m_stacks.end())
        throw LiveProtocolError(std::string(what) + " refers to stack " + std::to_string(wire) + ", which was never defined");
    return it->second;
}

DeviceTrace& LiveRecording::deviceTrace(uint32_t device)
{
    auto& devices = m_snapshot->devices;
    while (devices.size() <= device)
        devices.push_back(DeviceTrace{static_cast<int>(devices.size()), {}});
    return devices[device];
}

void LiveRecording::apply(uint8_t type, std::span<const uint8_t> p)
{
    if (!m_helloSeen && type == static_cast<uint8_t>(MessageType::Error)) {
        std::string why = "no reason given";
        try {
            why = str(parseJson(p, "ERROR"), "message");
        } catch (const LiveProtocolError&) {
        }
        throw LiveRefused("the agent refused the connection: " + why);
    }
    if (!m_helloSeen && type != static_cast<uint8_t>(MessageType::Hello))
        throw LiveProtocolError("first message has type " + std::to_string(type) + ", expected HELLO (1)");
    switch (static_cast<MessageType>(type)) {
    case MessageType::Hello: applyHello(p); break;
    case MessageType::String: applyString(p); break;
    case MessageType::Frame: applyFrame(p); break;
    case MessageType::Stack: applyStack(p); break;
    case MessageType::Events: applyEvents(p); break;
    case MessageType::Annotation: applyAnnotation(p); break;
    case MessageType::Settings: applySettings(p); break;
    case MessageType::Segments: applySegments(p); break;
    case MessageType::Status: applyStatus(p); break;
    case MessageType::End: applyEnd(p); break;
    case MessageType::Truncated: {
        Reader r(p, "TRUNCATED");
        m_stats.truncated += r.get<uint64_t>();
        r.expectEnd();
        break;
    }
    case MessageType::Error: {
        auto j = parseJson(p, "ERROR");
        m_stats.agentErrors.push_back(str(j, "message"));
        break;
    }
    default: break; // a newer agent's message type: skipped (docs/PROTOCOL.md, versioning)
    }
    ++m_stats.messages;
    m_stats.bytes += p.size() + 5;
}

void LiveRecording::applyHello(std::span<const uint8_t> p)
{
    if (m_helloSeen)
        throw LiveProtocolError("a second HELLO message");
    Reader r(p, "HELLO");
    r.need(8);
    if (std::memcmp(p.data(), live::kMagic, 4) != 0)
        throw LiveProtocolError("HELLO does not start with 'MSCP': not a memscope agent");
    r.skip(4);
    const auto major = r.get<uint16_t>();
    r.get<uint16_t>();
    if (major != live::kVersionMajor)
        throw LiveProtocolError("the agent speaks protocol version " + std::to_string(major) + ", this memscope speaks " +
                                std::to_string(live::kVersionMajor));
    const auto j = parseJson(r.rest(), "HELLO");
    m_hello.json = j.dump();
    m_hello.pid = num(j, "pid", 0);
    m_hello.mode = str(j, "mode");
    m_hello.torchVersion = str(j, "torch");
    m_hello.pythonVersion = str(j, "python");
    m_hello.host = str(j, "host");
    m_hello.startedUs = num(j, "started_us", 0);
    m_hello.job = str(j, "job");
    m_hello.rank = static_cast<int>(num(j, "rank", -1));
    m_hello.worldSize = static_cast<int>(num(j, "world_size", -1));
    m_hello.localRank = static_cast<int>(num(j, "local_rank", -1));
    if (auto it = j.find("argv"); it != j.end() && it->is_array()) {
        for (const auto& a : *it) {
            if (!m_hello.commandLine.empty())
                m_hello.commandLine += ' ';
            m_hello.commandLine += a.is_string() ? a.get<std::string>() : a.dump();
        }
    }
    if (auto it = j.find("devices"); it != j.end() && it->is_array())
        for (const auto& d : *it)
            if (d.is_object())
                m_hello.devices.push_back(str(d, "name"));
    m_snapshot->path = "live:" + std::to_string(m_hello.pid);
    m_helloSeen = true;
}

void LiveRecording::applyString(std::span<const uint8_t> p)
{
    Reader r(p, "STRING");
    const auto id = r.get<uint32_t>();
    if (m_strings.count(id))
        throw LiveProtocolError("STRING " + std::to_string(id) + " defined twice");
    auto rest = r.rest();
    m_strings.emplace(id, m_snapshot->strings.intern({reinterpret_cast<const char*>(rest.data()), rest.size()}));
}

void LiveRecording::applyFrame(std::span<const uint8_t> p)
{
    Reader r(p, "FRAME");
    const auto id = r.get<uint32_t>();
    const auto file = r.get<uint32_t>();
    const auto name = r.get<uint32_t>();
    const auto line = r.get<int32_t>();
    r.expectEnd();
    if (m_frames.count(id))
        throw LiveProtocolError("FRAME " + std::to_string(id) + " defined twice");
    Frame f;
    f.filename = stringRef(file, "FRAME filename");
    f.name = stringRef(name, "FRAME name");
    f.line = line;
    m_frames.emplace(id, m_snapshot->frames.intern(f));
}

void LiveRecording::applyStack(std::span<const uint8_t> p)
{
    Reader r(p, "STACK");
    const auto id = r.get<uint32_t>();
    const auto n = r.get<uint32_t>();
    if (n > live::kMaxStackFrames)
        throw LiveProtocolError("STACK with " + std::to_string(n) + " frames; at most " + std::to_string(live::kMaxStackFrames) +
                                " are accepted");
    if (r.remaining() != size_t(n) * 4)
        throw LiveProtocolError("STACK message size does not match its " + std::to_string(n) + " frames");
    if (m_stacks.count(id))
        throw LiveProtocolError("STACK " + std::to_string(id) + " defined twice");
    m_scratch.clear();
    for (uint32_t i = 0; i < n; ++i) {
        const auto f = r.get<uint32_t>();
        auto it = m_frames.find(f);
        if (it == m_frames.end())
            throw LiveProtocolError("STACK " + std::to_string(id) + " refers to frame " + std::to_string(f) +
                                    ", which was never defined");
        m_scratch.push_back(it->second);
    }
    m_stacks.emplace(id, m_snapshot->stacks.intern(m_scratch));
}

void LiveRecording::applyEvents(std::span<const uint8_t> p)
{
    Reader r(p, "EVENTS");
    const auto device = r.get<uint16_t>();
    r.get<uint16_t>();
    const auto count = r.get<uint32_t>();
    if (device >= live::kMaxDevices)
        throw LiveProtocolError("EVENTS for device " + std::to_string(device) + "; at most " + std::to_string(live::kMaxDevices) +
                                " devices are accepted");
    if (r.remaining() != size_t(count) * live::kEventRecordSize)
        throw LiveProtocolError("EVENTS message holds " + std::to_string(r.remaining()) + " bytes of records, " +
                                std::to_string(count) + " events need " + std::to_string(size_t(count) * live::kEventRecordSize));
    struct Row {
        Action action;
        bool hasTime;
        StackId stack;
        uint64_t addr, size, stream;
        int64_t time;
        StringId meta, context;
    };
    std::vector<Row> rows;
    rows.reserve(count);
    for (uint32_t i = 0; i < count; ++i) {
        Row row;
        row.action = actionFromCode(r.get<uint8_t>());
        row.hasTime = r.get<uint8_t>() & live::kEventHasTime;
        r.get<uint16_t>();
        row.stack = stackRef(r.get<uint32_t>(), "an event");
        row.addr = r.get<uint64_t>();
        row.size = r.get<uint64_t>();
        row.stream = r.get<uint64_t>();
        row.time = r.get<int64_t>();
        row.meta = stringRef(r.get<uint32_t>(), "an event's user_metadata");
        row.context = stringRef(r.get<uint32_t>(), "an event's compile_context");
        rows.push_back(row);
    }
    // The same bounds as a file (snapshot_limits.h), checked before anything is applied.
    if (m_sizeTotal.size() <= device)
        m_sizeTotal.resize(size_t(device) + 1, 0);
    uint64_t total = m_sizeTotal[device];
    for (size_t i = 0; i < rows.size(); ++i)
        if (std::string e = entryLimitError(rows[i].action != Action::Oom, rows[i].addr, rows[i].size, rows[i].time, total);
            !e.empty())
            throw LiveProtocolError("EVENTS for device " + std::to_string(device) + ", event " + std::to_string(i) + ": " + e);
    m_sizeTotal[device] = total;
    EventTable& t = deviceTrace(device).events;
    // Grow geometrically: reserving exactly what each message needs reallocated every column
    // on every message, quadratic in the recording (a 10M-event stream took minutes to read).
    if (t.count() + rows.size() > t.action.capacity())
        t.reserve(std::max(t.count() + rows.size(), 2 * t.action.capacity()));
    for (const Row& row : rows) {
        uint64_t addr = row.addr;
        if (row.action == Action::Oom) {
            t.deviceFree.emplace(static_cast<int64_t>(t.count()), row.addr);
            addr = 0;
        }
        if (row.hasTime)
            t.hasTime = true;
        t.push(row.action, addr, row.size, row.stream, row.time, row.stack, row.meta, row.context);
    }
    m_stats.events += count;
}

void LiveRecording::applyAnnotation(std::span<const uint8_t> p)
{
    Reader r(p, "ANNOTATION");
    Annotation a;
    a.device = r.get<int16_t>();
    a.stage = r.get<uint8_t>() ? AnnotationStage::End : AnnotationStage::Start;
    r.get<uint8_t>();
    a.name = stringRef(r.get<uint32_t>(), "ANNOTATION");
    a.timeUs = r.get<int64_t>();
    r.expectEnd();
    if (std::string e = timeLimitError(a.timeUs); !e.empty())
        throw LiveProtocolError("ANNOTATION time_us: " + e);
    m_snapshot->annotations.push_back(a);
    ++m_stats.annotations;
}

void LiveRecording::applySettings(std::span<const uint8_t> p)
{
    const auto j = parseJson(p, "SETTINGS");
    std::map<std::string, std::string> settings;
    flattenSettings(j, {}, settings, 0);
    m_snapshot->allocatorSettings = std::move(settings);
    auto& s = *m_snapshot;
    if (auto it = s.allocatorSettings.find("trace_alloc_overflowed"); it != s.allocatorSettings.end())
        s.traceOverflowed = it->second == "True" || it->second == "1";
    if (auto it = s.allocatorSettings.find("trace_alloc_max_entries"); it != s.allocatorSettings.end())
        s.traceMaxEntries = std::strtoll(it->second.c_str(), nullptr, 10);
}

void LiveRecording::applySegments(std::span<const uint8_t> p)
{
    Reader r(p, "SEGMENTS");
    const auto count = r.get<uint32_t>();
    if (size_t(count) * live::kSegmentRecordSize > r.remaining())
        throw LiveProtocolError("SEGMENTS message announces " + std::to_string(count) + " segments in " +
                                std::to_string(r.remaining()) + " bytes");
    std::vector<Segment> segments;
    segments.reserve(count);
    for (uint32_t i = 0; i < count; ++i) {
        Segment s;
        s.device = r.get<int32_t>();
        const auto flags = r.get<uint8_t>();
        r.skip(3);
        s.largePool = flags & live::kSegmentLarge;
        s.expandable = flags & live::kSegmentExpandable;
        s.stack = stackRef(r.get<uint32_t>(), "a segment");
        const auto blocks = r.get<uint32_t>();
        s.address = r.get<uint64_t>();
        s.totalSize = r.get<uint64_t>();
        s.allocatedSize = r.get<uint64_t>();
        s.activeSize = r.get<uint64_t>();
        s.requestedSize = r.get<uint64_t>();
        s.stream = r.get<uint64_t>();
        s.poolId[0] = r.get<int64_t>();
        s.poolId[1] = r.get<int64_t>();
        if (size_t(blocks) * live::kBlockRecordSize > r.remaining())
            throw LiveProtocolError("SEGMENTS message: segment " + std::to_string(i) + " announces " + std::to_string(blocks) +
                                    " blocks, more than the message holds");
        s.blocks.reserve(blocks);
        for (uint32_t k = 0; k < blocks; ++k) {
            Block b;
            b.address = r.get<uint64_t>();
            b.size = r.get<uint64_t>();
            b.requestedSize = r.get<uint64_t>();
            const auto state = r.get<uint8_t>();
            r.skip(3);
            b.state = state <= 2 ? static_cast<BlockState>(state) : BlockState::Unknown;
            b.stack = stackRef(r.get<uint32_t>(), "a block");
            s.blocks.push_back(b);
        }
        segments.push_back(std::move(s));
    }
    r.expectEnd();
    if (std::string e = segmentsLimitError(segments); !e.empty())
        throw LiveProtocolError("SEGMENTS: " + e);
    m_snapshot->segments = std::move(segments);
}

void LiveRecording::applyStatus(std::span<const uint8_t> p)
{
    const auto j = parseJson(p, "STATUS");
    m_stats.agentDropped = static_cast<uint64_t>(std::max<int64_t>(0, num(j, "dropped", 0)));
    m_stats.agentEvents = static_cast<uint64_t>(std::max<int64_t>(0, num(j, "events", 0)));
}

void LiveRecording::applyEnd(std::span<const uint8_t> p)
{
    const auto j = p.empty() ? nlohmann::json::object() : parseJson(p, "END");
    m_stats.ended = true;
    m_stats.endReason = str(j, "reason");
    m_stats.endJson = j.dump();
    if (auto it = j.find("dropped"); it != j.end() && it->is_number_integer())
        m_stats.agentDropped = it->get<uint64_t>();
    if (auto it = j.find("memory_stats"); it != j.end() && it->is_object()) {
        // One device per process as a rule (a torchrun rank's is its LOCAL_RANK): the one
        // with the highest requested peak.
        for (auto d = it->begin(); d != it->end(); ++d) {
            if (!d->is_object() || d.key().empty() || d.key().find_first_not_of("0123456789") != std::string::npos)
                continue;
            const int64_t peak = num(*d, "requested_bytes.all.peak", -1);
            if (peak > m_stats.torchRequestedPeak) {
                m_stats.torchRequestedPeak = peak;
                m_stats.torchReservedPeak = num(*d, "reserved_bytes.all.peak", -1);
                m_stats.torchDevice = std::atoi(d.key().c_str());
            }
        }
    }
}

} // namespace memscope
