#include "snapshot/json_snapshot_reader.h"
#include "common/format_number.h"

#include "common/load_error.h"
#include "snapshot/format_keys.h"
#include "snapshot/format_warnings.h"
#include "snapshot/snapshot_limits.h"

#include <cstdio>
#include <iterator>
#include <optional>
#include <nlohmann/json.hpp>

namespace memscope {

namespace {

using nlohmann::json;

class JsonConverter {
public:
    JsonConverter(const std::string& name, Snapshot& s) : m_name(name), m_s(s) { }

    [[noreturn]] void fail(const std::string& path, const std::string& what) const { throw LoadError(m_name, -1, path, what); }

    uint64_t u64(const json& v, const std::string& path) const
    {
        if (v.is_number_unsigned())
            return v.get<uint64_t>();
        if (v.is_number_integer() && v.get<int64_t>() >= 0)
            return static_cast<uint64_t>(v.get<int64_t>());
        if (v.is_boolean())
            return v.get<bool>();
        fail(path, std::string("expected a non-negative integer, found ") + v.type_name());
    }
    int64_t i64(const json& v, const std::string& path)
    {
        if (v.is_number_unsigned()) {
            const uint64_t u = v.get<uint64_t>();
            if (u > static_cast<uint64_t>(INT64_MAX)) // past 2^63: most often a C++ -1 written unsigned
                m_warnings.note(FormatWarning::UnsignedSigned);
            return static_cast<int64_t>(u);
        }
        if (v.is_number_integer())
            return v.get<int64_t>();
        if (v.is_boolean())
            return v.get<bool>();
        fail(path, std::string("expected an integer, found ") + v.type_name());
    }
    StringId str(const json& v, const std::string& path)
    {
        if (!v.is_string())
            fail(path, std::string("expected a string, found ") + v.type_name());
        return m_s.strings.intern(v.get_ref<const std::string&>());
    }
    // A frame's fields; an odd value makes that detail unknown, never the file unreadable.
    FrameId frame(const json& f)
    {
        Frame fr;
        bool oddText = false, oddLine = false;
        auto text = [&](const json& x, StringId& out) {
            if (x.is_string())
                out = m_s.strings.intern(x.get_ref<const std::string&>());
            else if (!x.is_null())
                oddText = true;
        };
        for (auto it = f.begin(); it != f.end(); ++it) {
            const json& x = *it;
            switch (format::fieldOf(format::kFrameFields, it.key())) {
            case format::FrameField::None: break;
            case format::FrameField::Filename: text(x, fr.filename); break;
            case format::FrameField::Name: text(x, fr.name); break;
            case format::FrameField::Line:
                if (x.is_number_integer() && !(x.is_number_unsigned() && x.get<uint64_t>() > INT64_MAX) &&
                    format::isKnownLine(x.get<int64_t>()))
                    fr.line = static_cast<int32_t>(x.get<int64_t>());
                else if (!x.is_null())
                    oddLine = true;
                break;
            case format::FrameField::FxNodeOp: text(x, fr.fxNodeOp); break;
            case format::FrameField::FxNodeName: text(x, fr.fxNodeName); break;
            case format::FrameField::FxNodeTarget: text(x, fr.fxNodeTarget); break;
            case format::FrameField::FxOriginalTrace: text(x, fr.fxOriginalTrace); break;
            }
        }
        const FrameId id = m_s.frames.intern(fr);
        if (oddText)
            m_warnings.noteFrame(FormatWarning::FrameText, id.value);
        if (oddLine)
            m_warnings.noteFrame(FormatWarning::FrameLine, id.value);
        return id;
    }
    // allowText: a list of strings (forward_frames) is a stack of frames named by them.
    StackId stack(const json& v, const std::string& path, bool allowText = false)
    {
        if (v.is_null())
            return {};
        if (!v.is_array())
            fail(path, std::string("expected a list of frames, found ") + v.type_name());
        std::vector<FrameId> ids;
        ids.reserve(v.size());
        for (size_t i = 0; i < v.size(); ++i) {
            const json& f = v[i];
            if (allowText && f.is_string()) {
                Frame fr;
                fr.name = m_s.strings.intern(f.get_ref<const std::string&>());
                ids.push_back(m_s.frames.intern(fr));
                continue;
            }
            if (!f.is_object())
                fail(path + "[" + std::to_string(i) + "]", std::string("expected a frame object, found ") + f.type_name());
            ids.push_back(frame(f));
        }
        return m_s.stacks.intern(ids);
    }

    void run(const json& root)
    {
        if (root.is_array()) {
            segments(root, "segments", std::nullopt);
            m_s.devices.push_back({});
            m_warnings.finish(m_s);
            return;
        }
        if (!root.is_object())
            fail({}, std::string("not a CUDA memory snapshot: the JSON top level is ") + root.type_name());
        const json* top[std::size(format::kTopFields) + 1] = {};
        for (auto it = root.begin(); it != root.end(); ++it)
            top[static_cast<size_t>(format::fieldOf(format::kTopFields, it.key()))] = &*it;
        using format::TopField;
        auto get = [&](TopField f) { return top[static_cast<size_t>(f)]; };
        if (!get(TopField::Segments) && !get(TopField::DeviceTraces)) {
            std::string keys;
            for (auto it = root.begin(); it != root.end(); ++it)
                keys += (keys.empty() ? "'" : ", '") + it.key() + "'";
            fail({}, "not a CUDA memory snapshot: top-level keys are " + (keys.empty() ? std::string("(none)") : keys) +
                         "; expected 'segments' and 'device_traces'");
        }
        if (auto* v = get(TopField::Segments))
            segments(*v, "segments", std::nullopt);
        if (auto* v = get(TopField::DeviceTraces))
            traces(*v);
        if (auto* v = get(TopField::AllocatorSettings); v && v->is_object())
            settings(*v, {});
        if (auto* v = get(TopField::ExternalAnnotations); v && v->is_array())
            annotations(*v);
        // Pinned host memory (record_pinned_host_memory=True): its own device, ordinal -1.
        if (auto* v = get(TopField::HostSegments); v && v->is_array())
            segments(*v, "host_segments", format::kHostDevice);
        if (auto* v = get(TopField::HostTraces); v && v->is_array()) {
            const bool nested = v->size() == 1 && (*v)[0].is_array();
            m_s.devices.push_back(trace(nested ? (*v)[0] : *v, nested ? "host_traces[0]" : "host_traces", format::kHostDevice));
        }
        if (auto it = m_s.allocatorSettings.find(std::string(format::kTraceOverflowed)); it != m_s.allocatorSettings.end())
            m_s.traceOverflowed = it->second == "True" || it->second == "true" || it->second == "1";
        if (auto it = m_s.allocatorSettings.find(std::string(format::kTraceMaxEntries)); it != m_s.allocatorSettings.end())
            m_s.traceMaxEntries = std::strtoll(it->second.c_str(), nullptr, 10);
        if (m_s.devices.empty())
            m_s.devices.push_back({});
        m_warnings.finish(m_s);
    }

private:
    void segments(const json& list, const char* key, std::optional<int> device)
    {
        if (!list.is_array())
            fail(key, std::string("expected a list, found ") + list.type_name());
        for (size_t i = 0; i < list.size(); ++i) {
            const json& j = list[i];
            const std::string p = std::string(key) + "[" + std::to_string(i) + "]";
            if (!j.is_object())
                fail(p, std::string("expected a segment object, found ") + j.type_name());
            Segment seg;
            const json* blocks = nullptr;
            using format::SegmentField;
            for (auto it = j.begin(); it != j.end(); ++it) {
                const json& v = *it;
                const std::string at = p + "." + it.key();
                switch (format::fieldOf(format::kSegmentFields, it.key())) {
                case SegmentField::None: break;
                case SegmentField::Device: seg.device = static_cast<int>(i64(v, at)); break;
                case SegmentField::Address: seg.address = u64(v, at); break;
                case SegmentField::TotalSize: seg.totalSize = u64(v, at); break;
                case SegmentField::AllocatedSize: seg.allocatedSize = u64(v, at); break;
                case SegmentField::ActiveSize: seg.activeSize = u64(v, at); break;
                case SegmentField::RequestedSize: seg.requestedSize = u64(v, at); break;
                case SegmentField::Stream:
                    if (v.is_number_integer())
                        seg.stream = v.is_number_unsigned() ? v.get<uint64_t>() : static_cast<uint64_t>(v.get<int64_t>());
                    else if (!v.is_null())
                        m_warnings.note(FormatWarning::OddSegmentField);
                    break;
                case SegmentField::SegmentType:
                    if (v.is_string())
                        seg.largePool = v.get_ref<const std::string&>() != format::kSmallPool;
                    else if (!v.is_null())
                        m_warnings.note(FormatWarning::OddSegmentField);
                    break;
                case SegmentField::IsExpandable:
                    if (v.is_boolean())
                        seg.expandable = v.get<bool>();
                    else if (!v.is_null())
                        m_warnings.note(FormatWarning::OddSegmentField);
                    break;
                case SegmentField::SegmentPoolId: {
                    const PoolId pool = poolOf(v, FormatWarning::OddSegmentField);
                    seg.poolId[0] = pool.first;
                    seg.poolId[1] = pool.second;
                    break;
                }
                case SegmentField::Frames: seg.stack = stack(v, at); break;
                case SegmentField::Blocks: blocks = &v; break;
                }
            }
            if (device)
                seg.device = *device;
            if (blocks) {
                if (!blocks->is_array())
                    fail(p + ".blocks", std::string("expected a list, found ") + blocks->type_name());
                uint64_t cursor = seg.address;
                for (size_t k = 0; k < blocks->size(); ++k) {
                    const json& bj = (*blocks)[k];
                    const std::string bp = p + ".blocks[" + std::to_string(k) + "]";
                    if (!bj.is_object())
                        fail(bp, std::string("expected a block object, found ") + bj.type_name());
                    seg.blocks.push_back(block(bj, bp, cursor));
                    cursor = seg.blocks.back().address + seg.blocks.back().size;
                }
            }
            m_s.segments.push_back(std::move(seg));
        }
    }

    Block block(const json& bj, const std::string& bp, uint64_t cursor)
    {
        Block b;
        b.address = cursor; // 2.0 blocks have no address: they tile the segment in order
        bool hasRequested = false;
        const json* history = nullptr;
        using format::BlockField;
        for (auto it = bj.begin(); it != bj.end(); ++it) {
            const json& v = *it;
            const std::string at = bp + "." + it.key();
            switch (format::fieldOf(format::kBlockFields, it.key())) {
            case BlockField::None: break;
            case BlockField::Address: b.address = u64(v, at); break;
            case BlockField::Size: b.size = u64(v, at); break;
            case BlockField::RequestedSize:
                b.requestedSize = u64(v, at);
                hasRequested = true;
                break;
            case BlockField::State:
                if (v.is_string())
                    b.state = format::blockStateFromName(v.get_ref<const std::string&>());
                else if (!v.is_null())
                    m_warnings.note(FormatWarning::OddSegmentField);
                break;
            case BlockField::Frames: b.stack = stack(v, at); break;
            case BlockField::History: history = &v; break;
            }
        }
        if (!hasRequested)
            b.requestedSize = b.size;
        // PyTorch 2.0: the newest entry of `history` is the block's current allocation.
        if (history && history->is_array() && !history->empty()) {
            m_s.blockHistoryFormat = true;
            const json& last = history->back();
            if (last.is_object()) {
                for (auto it = last.begin(); it != last.end(); ++it) {
                    const std::string at = bp + ".history[-1]." + it.key();
                    switch (format::fieldOf(format::kHistoryFields, it.key())) {
                    case format::HistoryField::None:
                    case format::HistoryField::Addr: break;
                    case format::HistoryField::RealSize: b.requestedSize = u64(*it, at); break;
                    case format::HistoryField::Frames: b.stack = stack(*it, at); break;
                    }
                }
            }
        }
        return b;
    }

    PoolId poolOf(const json& v, FormatWarning odd)
    {
        if (v.is_array() && v.size() == 2 && v[0].is_number_integer() && v[1].is_number_integer())
            return PoolId{v[0].get<int64_t>(), v[1].get<int64_t>()};
        if (!v.is_null())
            m_warnings.note(odd);
        return {};
    }

    void traces(const json& list)
    {
        if (!list.is_array())
            fail("device_traces", std::string("expected a list, found ") + list.type_name());
        if (list.size() > kMaxDevices)
            fail("device_traces", "holds " + std::to_string(list.size()) + " per-device traces; at most " +
                                      std::to_string(kMaxDevices) + " are accepted (one per GPU)");
        for (size_t d = 0; d < list.size(); ++d)
            m_s.devices.push_back(trace(list[d], "device_traces[" + std::to_string(d) + "]", static_cast<int>(d)));
    }

    DeviceTrace trace(const json& t, const std::string& dp, int device)
    {
        if (!t.is_array())
            fail(dp, std::string("expected a list, found ") + t.type_name());
        DeviceTrace dt;
        dt.device = device;
        dt.events.reserve(t.size());
        for (size_t r = 0; r < t.size(); ++r) {
            const json& e = t[r];
            const std::string p = dp + "[" + std::to_string(r) + "]";
            if (!e.is_object())
                fail(p, std::string("expected a trace entry object, found ") + e.type_name());
            if (!e.contains(format::nameOf(format::kEntryFields, format::EntryField::Action)))
                fail(p, "trace entry has no 'action'");
            Action a = Action::Unknown;
            uint64_t addr = 0, size = 0, stream = 0;
            int64_t time = 0;
            StackId st;
            StringId meta = StringPool::empty(), ctx = StringPool::empty();
            using format::EntryField;
            for (auto it = e.begin(); it != e.end(); ++it) {
                const json& x = *it;
                const std::string at = p + "." + it.key();
                const EntryField field = format::fieldOf(format::kEntryFields, it.key());
                switch (field) {
                case EntryField::None: break;
                case EntryField::Action: a = actionFromName(m_s.strings.view(str(x, at))).value_or(Action::Unknown); break;
                case EntryField::Addr: addr = u64(x, at); break;
                case EntryField::Size: size = u64(x, at); break;
                case EntryField::Stream:
                    // Streams are raw cudaStream_t values; keep the bits whatever their sign.
                    if (x.is_number_integer())
                        stream = x.is_number_unsigned() ? x.get<uint64_t>() : static_cast<uint64_t>(x.get<int64_t>());
                    break;
                case EntryField::TimeUs:
                    time = i64(x, at);
                    dt.events.hasTime = true;
                    break;
                case EntryField::Frames: st = stack(x, at); break;
                case EntryField::UserMetadata:
                case EntryField::CompileContext:
                    if (x.is_string())
                        (field == EntryField::UserMetadata ? meta : ctx) = str(x, at);
                    else if (!x.is_null())
                        m_warnings.note(FormatWarning::OddEntryField);
                    break;
                case EntryField::DeviceFree: dt.events.deviceFree.emplace(static_cast<int64_t>(r), u64(x, at)); break;
                case EntryField::ForwardFrames:
                    if (x.is_array()) {
                        if (const StackId f = stack(x, at, true); f.valid())
                            dt.events.forwardFrames.emplace_back(static_cast<uint32_t>(r), f);
                    } else if (!x.is_null()) {
                        m_warnings.note(FormatWarning::OddEntryField);
                    }
                    break;
                case EntryField::PoolId:
                    if (const PoolId pool = poolOf(x, FormatWarning::OddEntryField); !pool.isDefault())
                        dt.events.pool.emplace_back(static_cast<uint32_t>(r), pool);
                    break;
                }
            }
            dt.events.push(a, addr, size, stream, time, st, meta, ctx);
        }
        return dt;
    }

    void annotations(const json& list)
    {
        for (size_t i = 0; i < list.size(); ++i) {
            const json& j = list[i];
            const std::string p = "external_annotations[" + std::to_string(i) + "]";
            if (!j.is_object())
                fail(p, std::string("expected an object, found ") + j.type_name());
            Annotation a;
            using format::AnnotationField;
            for (auto it = j.begin(); it != j.end(); ++it) {
                const std::string at = p + "." + it.key();
                switch (format::fieldOf(format::kAnnotationFields, it.key())) {
                case AnnotationField::None: break;
                case AnnotationField::Name: a.name = str(*it, at); break;
                case AnnotationField::Stage:
                    a.stage = m_s.strings.view(str(*it, at)) == format::kStageEnd ? AnnotationStage::End : AnnotationStage::Start;
                    break;
                case AnnotationField::Device: a.device = static_cast<int>(i64(*it, at)); break;
                case AnnotationField::TimeUs: a.timeUs = i64(*it, at); break;
                }
            }
            m_s.annotations.push_back(a);
        }
    }

    void settings(const json& obj, const std::string& prefix)
    {
        for (auto it = obj.begin(); it != obj.end(); ++it) {
            if (it->is_object() && prefix.size() < 256)
                settings(*it, prefix + it.key() + ".");
            else if (it->is_string())
                m_s.allocatorSettings[prefix + it.key()] = it->get<std::string>();
            else if (it->is_boolean())
                m_s.allocatorSettings[prefix + it.key()] = it->get<bool>() ? "True" : "False";
            else if (it->is_number_float())
                m_s.allocatorSettings[prefix + it.key()] = formatGeneral(it->get<double>());
            else if (it->is_null())
                m_s.allocatorSettings[prefix + it.key()] = "None";
            else
                m_s.allocatorSettings[prefix + it.key()] = it->dump();
        }
    }

    const std::string& m_name;
    Snapshot& m_s;
    FormatWarnings m_warnings;
};

// nlohmann's parser keeps its own stack, but dump() and a few other paths recurse once
// per level: nesting past what a snapshot needs (about 6) is refused before parsing.
constexpr int kMaxJsonDepth = 64;

void checkJsonDepth(std::span<const uint8_t> bytes, const std::string& name)
{
    int depth = 0;
    bool inString = false;
    bool escaped = false;
    for (size_t i = 0; i < bytes.size(); ++i) {
        const uint8_t c = bytes[i];
        if (inString) {
            if (escaped)
                escaped = false;
            else if (c == '\\')
                escaped = true;
            else if (c == '"')
                inString = false;
        } else if (c == '"') {
            inString = true;
        } else if (c == '[' || c == '{') {
            if (++depth > kMaxJsonDepth)
                throw LoadError(name, static_cast<int64_t>(i), {},
                                "JSON nested deeper than " + std::to_string(kMaxJsonDepth) +
                                    " levels; a memory snapshot needs about 6");
        } else if (c == ']' || c == '}') {
            --depth;
        }
    }
}

} // namespace

void readJsonSnapshot(std::span<const uint8_t> bytes, const std::string& name, Snapshot& snapshot)
{
    checkJsonDepth(bytes, name);
    json root;
    try {
        root = json::parse(bytes.begin(), bytes.end(), nullptr, true, false);
    } catch (const json::parse_error& e) {
        if (e.byte >= bytes.size()) // nlohmann counts from 1: the input ran out
            throw LoadError(name, static_cast<int64_t>(bytes.size()), {},
                            "JSON ends early: the file is truncated (" + std::string(e.what()) + ")");
        throw LoadError(name, static_cast<int64_t>(e.byte), {}, std::string("invalid JSON: ") + e.what());
    } catch (const json::exception& e) {
        throw LoadError(name, -1, {}, std::string("invalid JSON: ") + e.what());
    }
    JsonConverter(name, snapshot).run(root);
}

} // namespace memscope
