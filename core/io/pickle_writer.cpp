#include "io/pickle_writer.h"

#include "pickle/pickle_opcodes.h"
#include "snapshot/format_keys.h"

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <algorithm>
#include <map>
#include <stdexcept>
#include <unordered_map>
#include <variant>
#include <vector>

namespace memscope {

namespace {

using namespace pickle_op;
constexpr size_t kFrameTarget = 64 * 1024;
constexpr size_t kBatch = 1000;

class Pickler {
public:
    std::string finish()
    {
        op(kStop);
        commitFrame();
        return std::move(m_out);
    }

    Pickler()
    {
        m_out.push_back(static_cast<char>(kProto));
        m_out.push_back(4);
    }

    void op(uint8_t o) { m_frame.push_back(static_cast<char>(o)); }
    void raw(const void* p, size_t n) { m_frame.append(static_cast<const char*>(p), n); }

    // Called between whole values: starts a new frame once the current one is big enough.
    void boundary()
    {
        if (m_frame.size() >= kFrameTarget)
            commitFrame();
    }

    void memoize() { op(kMemoize), ++m_memoSize; }
    uint32_t lastMemo() const { return m_memoSize - 1; }

    void get(uint32_t memo)
    {
        if (memo < 256) {
            op(kBinGet);
            m_frame.push_back(static_cast<char>(memo));
        } else {
            op(kLongBinGet);
            raw(&memo, 4);
        }
    }

    void none() { op(kNone); }
    void boolean(bool b) { op(b ? kNewTrue : kNewFalse); }

    void integer(int64_t v)
    {
        if (v >= 0 && v <= 0xff) {
            op(kBinInt1);
            m_frame.push_back(static_cast<char>(v));
        } else if (v >= 0 && v <= 0xffff) {
            op(kBinInt2);
            const uint16_t x = static_cast<uint16_t>(v);
            raw(&x, 2);
        } else if (v >= INT32_MIN && v <= INT32_MAX) {
            op(kBinInt);
            const int32_t x = static_cast<int32_t>(v);
            raw(&x, 4);
        } else {
            long1(static_cast<uint64_t>(v), v < 0);
        }
    }

    void unsignedInteger(uint64_t v)
    {
        if (v <= static_cast<uint64_t>(INT64_MAX))
            integer(static_cast<int64_t>(v));
        else
            long1(v, false);
    }

    void floating(double d)
    {
        op(kBinFloat);
        uint64_t bits;
        std::memcpy(&bits, &d, 8);
        for (int i = 7; i >= 0; --i)
            m_frame.push_back(static_cast<char>((bits >> (8 * i)) & 0xff));
    }

    // A string, written once and then referred to through the memo.
    void string(std::string_view s)
    {
        auto it = m_strings.find(s);
        if (it != m_strings.end()) {
            get(it->second);
            return;
        }
        if (s.size() < 256) {
            op(kShortBinUnicode);
            m_frame.push_back(static_cast<char>(s.size()));
        } else {
            op(kBinUnicode);
            const uint32_t n = static_cast<uint32_t>(s.size());
            raw(&n, 4);
        }
        raw(s.data(), s.size());
        memoize();
        m_strings.emplace(std::string(s), lastMemo());
    }

    void emptyDict() { op(kEmptyDict); }
    void emptyList() { op(kEmptyList); }
    void mark() { op(kMark); }
    void setItems() { op(kSetItems); }
    void appends() { op(kAppends); }
    void tuple2() { op(kTuple2); }

private:
    // Python's encode_long: the shortest little-endian two's complement.
    void long1(uint64_t bits, bool negative)
    {
        uint8_t bytes[9];
        int n = 0;
        for (int i = 0; i < 8; ++i)
            bytes[i] = static_cast<uint8_t>(bits >> (8 * i));
        n = 8;
        if (!negative) {
            while (n > 1 && bytes[n - 1] == 0 && !(bytes[n - 2] & 0x80))
                --n;
            if (bytes[n - 1] & 0x80)
                bytes[n++] = 0;
        } else {
            while (n > 1 && bytes[n - 1] == 0xff && (bytes[n - 2] & 0x80))
                --n;
        }
        op(kLong1);
        m_frame.push_back(static_cast<char>(n));
        raw(bytes, static_cast<size_t>(n));
    }

    void commitFrame()
    {
        if (m_frame.empty())
            return;
        m_out.push_back(static_cast<char>(kFrame));
        const uint64_t n = m_frame.size();
        m_out.append(reinterpret_cast<const char*>(&n), 8);
        m_out += m_frame;
        m_frame.clear();
    }

    std::string m_out;
    std::string m_frame;
    uint32_t m_memoSize = 0;
    struct Hash {
        using is_transparent = void;
        size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
    };
    std::unordered_map<std::string, uint32_t, Hash, std::equal_to<>> m_strings;
};

// A setting's text turned back into the value it most likely was.
struct SettingValue {
    std::variant<std::monostate, bool, int64_t, double, std::string> v;
};

SettingValue typedSetting(const std::string& text)
{
    if (text == "True")
        return {true};
    if (text == "False")
        return {false};
    if (text == "None")
        return {std::monostate{}};
    int64_t i = 0;
    auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), i);
    if (ec == std::errc() && p == text.data() + text.size() && !text.empty())
        return {i};
    if (!text.empty() && text.find_first_not_of("0123456789+-.eEinfa") == std::string::npos) {
        char* end = nullptr;
        const double d = std::strtod(text.c_str(), &end);
        if (end == text.c_str() + text.size())
            return {d};
    }
    return {text};
}

struct SettingNode {
    std::map<std::string, SettingNode> children;
    const std::string* value = nullptr;
};

class SnapshotPickler {
public:
    explicit SnapshotPickler(const Snapshot& s) : m_s(s) { }

    std::string run()
    {
        m_p.emptyDict();
        m_p.memoize();
        m_p.mark();
        m_p.string("segments");
        segments();
        m_p.string("device_traces");
        traces();
        m_p.string("allocator_settings");
        settings();
        m_p.string("external_annotations");
        annotations();
        // Pinned host memory (record_pinned_host_memory=True), as torch writes it.
        const DeviceTrace* host = m_s.device(format::kHostDevice);
        const bool hostSegments = std::any_of(m_s.segments.begin(), m_s.segments.end(),
                                              [](const Segment& g) { return g.device == format::kHostDevice; });
        if (host || hostSegments) {
            m_p.string("host_segments");
            segments(true);
            m_p.string("host_traces");
            if (host)
                list(host->events.count(), [&](size_t i) { event(host->events, i); });
            else
                m_p.emptyList();
        }
        m_p.setItems();
        return m_p.finish();
    }

private:
    void key(std::string_view k) { m_p.string(k); }

    // Items of a list, in MARK ... APPENDS batches.
    template <class F>
    void list(size_t n, F&& item)
    {
        m_p.emptyList();
        m_p.memoize();
        for (size_t i = 0; i < n; i += kBatch) {
            m_p.mark();
            for (size_t k = i; k < std::min(n, i + kBatch); ++k) {
                item(k);
                m_p.boundary();
            }
            m_p.appends();
        }
    }

    void frame(FrameId id)
    {
        if (auto it = m_frameMemo.find(id.value); it != m_frameMemo.end()) {
            m_p.get(it->second);
            return;
        }
        const Frame& f = m_s.frames.frame(id);
        m_p.emptyDict();
        m_p.memoize();
        const uint32_t memo = m_p.lastMemo();
        m_p.mark();
        key("filename");
        m_p.string(m_s.str(f.filename));
        key("line");
        m_p.integer(f.line);
        key("name");
        m_p.string(m_s.str(f.name));
        const std::pair<const char*, StringId> fx[] = {{"fx_node_op", f.fxNodeOp},
                                                       {"fx_node_name", f.fxNodeName},
                                                       {"fx_node_target", f.fxNodeTarget},
                                                       {"fx_original_trace", f.fxOriginalTrace}};
        for (const auto& [name, value] : fx) {
            if (!value.valid() || m_s.str(value).empty())
                continue;
            key(name);
            m_p.string(m_s.str(value));
        }
        m_p.setItems();
        m_frameMemo.emplace(id.value, memo);
    }

    void stack(StackId id)
    {
        if (!id.valid()) {
            m_p.emptyList();
            return;
        }
        if (auto it = m_stackMemo.find(id.value); it != m_stackMemo.end()) {
            m_p.get(it->second);
            return;
        }
        const auto frames = m_s.stacks.frames(id);
        m_p.emptyList();
        m_p.memoize();
        const uint32_t memo = m_p.lastMemo();
        for (size_t i = 0; i < frames.size(); i += kBatch) {
            m_p.mark();
            for (size_t k = i; k < std::min(frames.size(), i + kBatch); ++k)
                frame(frames[k]);
            m_p.appends();
        }
        m_stackMemo.emplace(id.value, memo);
    }

    void segments(bool host = false)
    {
        std::vector<size_t> which;
        for (size_t i = 0; i < m_s.segments.size(); ++i)
            if ((m_s.segments[i].device == format::kHostDevice) == host)
                which.push_back(i);
        list(which.size(), [&](size_t w) {
            const Segment& g = m_s.segments[which[w]];
            m_p.emptyDict();
            m_p.mark();
            key("device");
            m_p.integer(g.device);
            key("address");
            m_p.unsignedInteger(g.address);
            key("total_size");
            m_p.unsignedInteger(g.totalSize);
            key("allocated_size");
            m_p.unsignedInteger(g.allocatedSize);
            key("active_size");
            m_p.unsignedInteger(g.activeSize);
            key("requested_size");
            m_p.unsignedInteger(g.requestedSize);
            key("stream");
            m_p.integer(static_cast<int64_t>(g.stream));
            key("segment_type");
            m_p.string(g.largePool ? "large" : "small");
            key("segment_pool_id");
            m_p.integer(g.poolId[0]);
            m_p.integer(g.poolId[1]);
            m_p.tuple2();
            key("is_expandable");
            m_p.boolean(g.expandable);
            key("frames");
            stack(g.stack);
            key("blocks");
            list(g.blocks.size(), [&](size_t k) {
                const Block& b = g.blocks[k];
                m_p.emptyDict();
                m_p.mark();
                key("address");
                m_p.unsignedInteger(b.address);
                key("size");
                m_p.unsignedInteger(b.size);
                key("requested_size");
                m_p.unsignedInteger(b.requestedSize);
                key("state");
                m_p.string(b.state == BlockState::ActiveAllocated     ? "active_allocated"
                           : b.state == BlockState::ActivePendingFree ? "active_pending_free"
                                                                      : "inactive");
                key("frames");
                stack(b.stack);
                m_p.setItems();
            });
            m_p.setItems();
        });
    }

    void traces()
    {
        int maxOrdinal = -1;
        for (const DeviceTrace& d : m_s.devices)
            maxOrdinal = std::max(maxOrdinal, d.device);
        list(static_cast<size_t>(maxOrdinal + 1), [&](size_t ordinal) {
            const DeviceTrace* d = m_s.device(static_cast<int>(ordinal)); // host (-1) goes to host_traces
            if (!d) {
                m_p.emptyList();
                return;
            }
            const EventTable& t = d->events;
            list(t.count(), [&](size_t i) { event(t, i); });
        });
    }

    void event(const EventTable& t, size_t i)
    {
        m_p.emptyDict();
        m_p.mark();
        key("action");
        m_p.string(actionName(t.action[i]));
        if (t.action[i] == Action::Oom) {
            key("device_free");
            auto it = t.deviceFree.find(static_cast<int64_t>(i));
            m_p.unsignedInteger(it != t.deviceFree.end() ? it->second : 0);
        } else {
            key("addr");
            m_p.unsignedInteger(t.addr[i]);
        }
        key("size");
        m_p.unsignedInteger(t.size[i]);
        key("stream");
        m_p.integer(static_cast<int64_t>(t.stream[i]));
        if (t.hasTime) {
            key("time_us");
            m_p.integer(t.timeUs[i]);
        }
        if (const std::string_view c = m_s.str(t.compileContext[i]); !c.empty()) {
            key("compile_context");
            m_p.string(c);
        }
        key("user_metadata");
        m_p.string(m_s.str(t.userMetadata[i]));
        key("frames");
        stack(t.stack[i]);
        if (!t.pool.empty()) [[unlikely]] {
            if (const PoolId p = t.poolOf(i); !p.isDefault()) {
                key("pool_id");
                m_p.integer(p.first);
                m_p.integer(p.second);
                m_p.tuple2();
            }
        }
        if (!t.forwardFrames.empty()) [[unlikely]] {
            if (const StackId f = t.forwardFramesOf(i); f.valid()) {
                key("forward_frames");
                forwardFrames(f);
            }
        }
        m_p.setItems();
    }

    // forward_frames as torch writes them, a list of strings, when the reader kept them as
    // name-only frames; as frame dicts otherwise.
    void forwardFrames(StackId id)
    {
        const auto frames = m_s.stacks.frames(id);
        const bool text = std::all_of(frames.begin(), frames.end(), [&](FrameId f) {
            const Frame& fr = m_s.frames.frame(f);
            return m_s.str(fr.filename).empty() && fr.line == 0 && m_s.str(fr.fxNodeName).empty() &&
                   m_s.str(fr.fxOriginalTrace).empty();
        });
        if (!text) {
            stack(id);
            return;
        }
        m_p.emptyList();
        if (frames.empty())
            return;
        m_p.mark();
        for (FrameId f : frames)
            m_p.string(m_s.str(m_s.frames.frame(f).name));
        m_p.appends();
    }

    void settingValue(const std::string& text)
    {
        const SettingValue v = typedSetting(text);
        if (std::holds_alternative<std::monostate>(v.v))
            m_p.none();
        else if (auto* b = std::get_if<bool>(&v.v))
            m_p.boolean(*b);
        else if (auto* i = std::get_if<int64_t>(&v.v))
            m_p.integer(*i);
        else if (auto* d = std::get_if<double>(&v.v))
            m_p.floating(*d);
        else
            m_p.string(std::get<std::string>(v.v));
    }

    void settingNode(const SettingNode& node)
    {
        m_p.emptyDict();
        if (node.children.empty())
            return;
        m_p.mark();
        for (const auto& [k, child] : node.children) {
            key(k);
            if (child.value)
                settingValue(*child.value);
            else
                settingNode(child);
        }
        m_p.setItems();
    }

    void settings()
    {
        // "a.b" keys were nested dicts; rebuild them where the dots allow it.
        SettingNode root;
        for (const auto& [k, v] : m_s.allocatorSettings) {
            SettingNode* node = &root;
            size_t start = 0;
            bool ok = true;
            for (size_t dot = k.find('.'); dot != std::string::npos; dot = k.find('.', start)) {
                node = &node->children[k.substr(start, dot - start)];
                if (node->value) {
                    ok = false;
                    break;
                }
                start = dot + 1;
            }
            SettingNode* leaf = ok ? &node->children[k.substr(start)] : nullptr;
            if (!ok || !leaf->children.empty())
                leaf = &root.children[k]; // a key that cannot nest stays flat
            leaf->value = &v;
        }
        settingNode(root);
    }

    void annotations()
    {
        list(m_s.annotations.size(), [&](size_t i) {
            const Annotation& a = m_s.annotations[i];
            m_p.emptyDict();
            m_p.mark();
            key("name");
            m_p.string(m_s.str(a.name));
            key("stage");
            m_p.string(a.stage == AnnotationStage::End ? "END" : "START");
            key("device");
            m_p.integer(a.device);
            key("time_us");
            m_p.integer(a.timeUs);
            m_p.setItems();
        });
    }

    const Snapshot& m_s;
    Pickler m_p;
    std::unordered_map<int32_t, uint32_t> m_frameMemo;
    std::unordered_map<int32_t, uint32_t> m_stackMemo;
};

} // namespace

std::string pickleSnapshot(const Snapshot& snapshot) { return SnapshotPickler(snapshot).run(); }

void writePickleSnapshotFile(const Snapshot& snapshot, const std::string& path)
{
    const std::string bytes = pickleSnapshot(snapshot);
    const std::string tmp = path + ".tmp";
    std::FILE* f = std::fopen(tmp.c_str(), "wb");
    if (!f)
        throw std::runtime_error(path + ": cannot write: " + std::strerror(errno));
    const bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
    const bool closed = std::fclose(f) == 0;
    if (!ok || !closed) {
        std::remove(tmp.c_str());
        throw std::runtime_error(path + ": writing failed: " + std::strerror(errno));
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
        std::remove(tmp.c_str());
        throw std::runtime_error(path + ": cannot rename the finished file into place: " + std::strerror(errno));
    }
}

} // namespace memscope
