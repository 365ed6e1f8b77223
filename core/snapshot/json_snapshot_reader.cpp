#include "snapshot/json_snapshot_reader.h"

#include "common/load_error.h"
#include "snapshot/snapshot_limits.h"

#include <cstdio>
#include <nlohmann/json.hpp>

namespace memscope {

namespace {

using nlohmann::json;

class JsonConverter {
public:
    JsonConverter(const std::string& name, Snapshot& s) : m_name(name), m_s(s) {}

    [[noreturn]] void fail(const std::string& path, const std::string& what) const
    {
        throw LoadError(m_name, -1, path, what);
    }

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
    int64_t i64(const json& v, const std::string& path) const
    {
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
    StackId stack(const json& v, const std::string& path)
    {
        if (v.is_null())
            return {};
        if (!v.is_array())
            fail(path, std::string("expected a list of frames, found ") + v.type_name());
        std::vector<FrameId> ids;
        ids.reserve(v.size());
        for (size_t i = 0; i < v.size(); ++i) {
            const json& f = v[i];
            const std::string p = path + "[" + std::to_string(i) + "]";
            if (!f.is_object())
                fail(p, std::string("expected a frame object, found ") + f.type_name());
            Frame fr;
            if (auto it = f.find("filename"); it != f.end())
                fr.filename = str(*it, p + ".filename");
            if (auto it = f.find("name"); it != f.end())
                fr.name = str(*it, p + ".name");
            if (auto it = f.find("line"); it != f.end())
                fr.line = static_cast<int32_t>(i64(*it, p + ".line"));
            ids.push_back(m_s.frames.intern(fr));
        }
        return m_s.stacks.intern(ids);
    }

    void run(const json& root)
    {
        if (root.is_array()) {
            segments(root);
            m_s.devices.push_back({});
            return;
        }
        if (!root.is_object())
            fail({}, std::string("not a CUDA memory snapshot: the JSON top level is ") + root.type_name());
        if (!root.contains("segments") && !root.contains("device_traces")) {
            std::string keys;
            for (auto it = root.begin(); it != root.end(); ++it)
                keys += (keys.empty() ? "'" : ", '") + it.key() + "'";
            fail({}, "not a CUDA memory snapshot: top-level keys are " + (keys.empty() ? std::string("(none)") : keys) +
                         "; expected 'segments' and 'device_traces'");
        }
        if (auto it = root.find("segments"); it != root.end())
            segments(*it);
        if (auto it = root.find("device_traces"); it != root.end())
            traces(*it);
        if (auto it = root.find("allocator_settings"); it != root.end() && it->is_object())
            settings(*it, {});
        if (auto it = root.find("external_annotations"); it != root.end() && it->is_array())
            annotations(*it);
        if (auto it = m_s.allocatorSettings.find("trace_alloc_overflowed"); it != m_s.allocatorSettings.end())
            m_s.traceOverflowed = it->second == "True" || it->second == "true" || it->second == "1";
        if (auto it = m_s.allocatorSettings.find("trace_alloc_max_entries"); it != m_s.allocatorSettings.end())
            m_s.traceMaxEntries = std::strtoll(it->second.c_str(), nullptr, 10);
        if (m_s.devices.empty())
            m_s.devices.push_back({});
    }

private:
    void segments(const json& list)
    {
        if (!list.is_array())
            fail("segments", std::string("expected a list, found ") + list.type_name());
        for (size_t i = 0; i < list.size(); ++i) {
            const json& j = list[i];
            const std::string p = "segments[" + std::to_string(i) + "]";
            if (!j.is_object())
                fail(p, std::string("expected a segment object, found ") + j.type_name());
            Segment seg;
            auto get = [&](const char* k) { auto it = j.find(k); return it == j.end() ? nullptr : &*it; };
            if (auto* v = get("device")) seg.device = static_cast<int>(i64(*v, p + ".device"));
            if (auto* v = get("address")) seg.address = u64(*v, p + ".address");
            if (auto* v = get("total_size")) seg.totalSize = u64(*v, p + ".total_size");
            if (auto* v = get("allocated_size")) seg.allocatedSize = u64(*v, p + ".allocated_size");
            if (auto* v = get("active_size")) seg.activeSize = u64(*v, p + ".active_size");
            if (auto* v = get("requested_size")) seg.requestedSize = u64(*v, p + ".requested_size");
            if (auto* v = get("stream"); v && v->is_number_integer()) seg.stream = static_cast<uint64_t>(v->get<int64_t>());
            if (auto* v = get("segment_type"); v && v->is_string()) seg.largePool = v->get<std::string>() != "small";
            if (auto* v = get("is_expandable"); v && v->is_boolean()) seg.expandable = v->get<bool>();
            if (auto* v = get("frames")) seg.stack = stack(*v, p + ".frames");
            if (auto* v = get("blocks")) {
                if (!v->is_array())
                    fail(p + ".blocks", std::string("expected a list, found ") + v->type_name());
                uint64_t cursor = seg.address;
                for (size_t k = 0; k < v->size(); ++k) {
                    const json& bj = (*v)[k];
                    const std::string bp = p + ".blocks[" + std::to_string(k) + "]";
                    if (!bj.is_object())
                        fail(bp, std::string("expected a block object, found ") + bj.type_name());
                    Block b;
                    b.address = cursor;
                    if (auto it = bj.find("address"); it != bj.end()) b.address = u64(*it, bp + ".address");
                    if (auto it = bj.find("size"); it != bj.end()) b.size = u64(*it, bp + ".size");
                    b.requestedSize = b.size;
                    if (auto it = bj.find("requested_size"); it != bj.end()) b.requestedSize = u64(*it, bp + ".requested_size");
                    if (auto it = bj.find("state"); it != bj.end() && it->is_string()) {
                        const std::string& st = it->get_ref<const std::string&>();
                        b.state = st == "active_allocated"      ? BlockState::ActiveAllocated
                                  : st == "active_pending_free" ? BlockState::ActivePendingFree
                                  : st == "inactive"            ? BlockState::Inactive
                                                                : BlockState::Unknown;
                    }
                    if (auto it = bj.find("frames"); it != bj.end()) b.stack = stack(*it, bp + ".frames");
                    if (auto it = bj.find("history"); it != bj.end() && it->is_array() && !it->empty()) {
                        m_s.blockHistoryFormat = true;
                        const json& last = it->back();
                        if (auto r = last.find("real_size"); r != last.end()) b.requestedSize = u64(*r, bp + ".history[-1].real_size");
                        if (auto f = last.find("frames"); f != last.end()) b.stack = stack(*f, bp + ".history[-1].frames");
                    }
                    cursor = b.address + b.size;
                    seg.blocks.push_back(b);
                }
            }
            m_s.segments.push_back(std::move(seg));
        }
    }

    void traces(const json& list)
    {
        if (!list.is_array())
            fail("device_traces", std::string("expected a list, found ") + list.type_name());
        if (list.size() > kMaxDevices)
            fail("device_traces", "holds " + std::to_string(list.size()) + " per-device traces; at most " +
                                      std::to_string(kMaxDevices) + " are accepted (one per GPU)");
        for (size_t d = 0; d < list.size(); ++d) {
            const json& t = list[d];
            const std::string dp = "device_traces[" + std::to_string(d) + "]";
            if (!t.is_array())
                fail(dp, std::string("expected a list, found ") + t.type_name());
            DeviceTrace dt;
            dt.device = static_cast<int>(d);
            dt.events.reserve(t.size());
            for (size_t r = 0; r < t.size(); ++r) {
                const json& e = t[r];
                const std::string p = dp + "[" + std::to_string(r) + "]";
                if (!e.is_object())
                    fail(p, std::string("expected a trace entry object, found ") + e.type_name());
                auto it = e.find("action");
                if (it == e.end())
                    fail(p, "trace entry has no 'action'");
                const Action a = actionFromName(m_s.strings.view(str(*it, p + ".action"))).value_or(Action::Unknown);
                uint64_t addr = 0, size = 0, stream = 0;
                int64_t time = 0;
                StackId st;
                StringId meta = StringPool::empty(), ctx = StringPool::empty();
                if (auto x = e.find("addr"); x != e.end()) addr = u64(*x, p + ".addr");
                if (auto x = e.find("size"); x != e.end()) size = u64(*x, p + ".size");
                if (auto x = e.find("stream"); x != e.end() && x->is_number_integer()) stream = static_cast<uint64_t>(x->get<int64_t>());
                if (auto x = e.find("time_us"); x != e.end()) { time = i64(*x, p + ".time_us"); dt.events.hasTime = true; }
                if (auto x = e.find("frames"); x != e.end()) st = stack(*x, p + ".frames");
                if (auto x = e.find("user_metadata"); x != e.end() && x->is_string()) meta = str(*x, p);
                if (auto x = e.find("compile_context"); x != e.end() && x->is_string()) ctx = str(*x, p);
                if (auto x = e.find("device_free"); x != e.end())
                    dt.events.deviceFree.emplace(static_cast<int64_t>(r), u64(*x, p + ".device_free"));
                dt.events.push(a, addr, size, stream, time, st, meta, ctx);
            }
            m_s.devices.push_back(std::move(dt));
        }
    }

    void annotations(const json& list)
    {
        for (size_t i = 0; i < list.size(); ++i) {
            const json& j = list[i];
            const std::string p = "external_annotations[" + std::to_string(i) + "]";
            if (!j.is_object())
                fail(p, std::string("expected an object, found ") + j.type_name());
            Annotation a;
            if (auto it = j.find("name"); it != j.end()) a.name = str(*it, p + ".name");
            if (auto it = j.find("stage"); it != j.end())
                a.stage = m_s.strings.view(str(*it, p + ".stage")) == "END" ? AnnotationStage::End : AnnotationStage::Start;
            if (auto it = j.find("device"); it != j.end()) a.device = static_cast<int>(i64(*it, p + ".device"));
            if (auto it = j.find("time_us"); it != j.end()) a.timeUs = i64(*it, p + ".time_us");
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
            else if (it->is_number_float()) {
                char buf[64];
                std::snprintf(buf, sizeof buf, "%g", it->get<double>());
                m_s.allocatorSettings[prefix + it.key()] = buf;
            } else if (it->is_null())
                m_s.allocatorSettings[prefix + it.key()] = "None";
            else
                m_s.allocatorSettings[prefix + it.key()] = it->dump();
        }
    }

    const std::string& m_name;
    Snapshot& m_s;
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
