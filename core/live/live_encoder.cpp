#include "live/live_encoder.h"

#include "live/protocol.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>

namespace memscope {

namespace {

template <class T>
void put(std::vector<uint8_t>& out, T v)
{
    const size_t at = out.size();
    out.resize(at + sizeof(T));
    std::memcpy(out.data() + at, &v, sizeof(T));
}

// Starts a message; returns where its length goes (filled by endMessage).
size_t beginMessage(std::vector<uint8_t>& out, live::MessageType type)
{
    const size_t at = out.size();
    put<uint32_t>(out, 0);
    put<uint8_t>(out, static_cast<uint8_t>(type));
    return at;
}

void endMessage(std::vector<uint8_t>& out, size_t at)
{
    const uint32_t length = static_cast<uint32_t>(out.size() - at - 4);
    std::memcpy(out.data() + at, &length, 4);
}

uint32_t wireString(StringId id) { return id.valid() && id.value > 0 ? static_cast<uint32_t>(id.value) : 0; }
uint32_t wireStack(StackId id) { return id.valid() ? static_cast<uint32_t>(id.value) + 1 : 0; }

} // namespace

LiveStreamEncoder::LiveStreamEncoder(const Snapshot& snapshot) : m_snapshot(snapshot) { }

void LiveStreamEncoder::appendJson(std::vector<uint8_t>& out, uint8_t type, const std::string& json)
{
    const size_t at = beginMessage(out, static_cast<live::MessageType>(type));
    out.insert(out.end(), json.begin(), json.end());
    endMessage(out, at);
}

void LiveStreamEncoder::appendHello(std::vector<uint8_t>& out, const std::string& infoJson) const
{
    const size_t at = beginMessage(out, live::MessageType::Hello);
    out.insert(out.end(), live::kMagic, live::kMagic + 4);
    put<uint16_t>(out, live::kVersionMajor);
    put<uint16_t>(out, live::kVersionMinor);
    out.insert(out.end(), infoJson.begin(), infoJson.end());
    endMessage(out, at);
}

void LiveStreamEncoder::appendDefinitions(std::vector<uint8_t>& out) const
{
    const Snapshot& s = m_snapshot;
    for (size_t i = 1; i < s.strings.size(); ++i) {
        const size_t at = beginMessage(out, live::MessageType::String);
        put<uint32_t>(out, static_cast<uint32_t>(i));
        const std::string_view v = s.strings.view(StringId{static_cast<int32_t>(i)});
        out.insert(out.end(), v.begin(), v.end());
        endMessage(out, at);
    }
    for (size_t i = 0; i < s.frames.size(); ++i) {
        const Frame& f = s.frames.frame(FrameId{static_cast<int32_t>(i)});
        const size_t at = beginMessage(out, live::MessageType::Frame);
        put<uint32_t>(out, static_cast<uint32_t>(i) + 1);
        put<uint32_t>(out, wireString(f.filename));
        put<uint32_t>(out, wireString(f.name));
        put<int32_t>(out, f.line);
        endMessage(out, at);
    }
    for (size_t i = 0; i < s.stacks.size(); ++i) {
        const auto frames = s.stacks.frames(StackId{static_cast<int32_t>(i)});
        const size_t n = std::min<size_t>(frames.size(), live::kMaxStackFrames);
        const size_t at = beginMessage(out, live::MessageType::Stack);
        put<uint32_t>(out, static_cast<uint32_t>(i) + 1);
        put<uint32_t>(out, static_cast<uint32_t>(n));
        for (size_t k = 0; k < n; ++k)
            put<uint32_t>(out, static_cast<uint32_t>(frames[k].value) + 1);
        endMessage(out, at);
    }
}

void LiveStreamEncoder::appendEvents(std::vector<uint8_t>& out, size_t deviceIndex, size_t first, size_t last) const
{
    const DeviceTrace& trace = m_snapshot.devices[deviceIndex];
    const EventTable& t = trace.events;
    constexpr size_t kBatch = 8192;
    for (size_t from = first; from < last; from += kBatch) {
        const size_t to = std::min(last, from + kBatch);
        const size_t at = beginMessage(out, live::MessageType::Events);
        put<uint16_t>(out, static_cast<uint16_t>(trace.device < 0 ? 0 : trace.device));
        put<uint16_t>(out, 0);
        put<uint32_t>(out, static_cast<uint32_t>(to - from));
        const size_t base = out.size();
        out.resize(base + (to - from) * live::kEventRecordSize);
        uint8_t* p = out.data() + base;
        for (size_t k = from; k < to; ++k, p += live::kEventRecordSize) {
            const Action a = t.action[k];
            const uint8_t code = a <= Action::Oom ? static_cast<uint8_t>(a) : live::kActionUnknown;
            uint64_t addr = t.addr[k];
            if (a == Action::Oom)
                if (auto it = t.deviceFree.find(static_cast<int64_t>(k)); it != t.deviceFree.end())
                    addr = it->second;
            const uint8_t flags = t.hasTime ? live::kEventHasTime : 0;
            const uint16_t zero = 0;
            const uint32_t stack = wireStack(t.stack[k]);
            const uint64_t size = t.size[k];
            const uint64_t stream = t.stream[k];
            const int64_t time = t.timeUs[k];
            const uint32_t meta = wireString(t.userMetadata[k]);
            const uint32_t context = wireString(t.compileContext[k]);
            std::memcpy(p, &code, 1);
            std::memcpy(p + 1, &flags, 1);
            std::memcpy(p + 2, &zero, 2);
            std::memcpy(p + 4, &stack, 4);
            std::memcpy(p + 8, &addr, 8);
            std::memcpy(p + 16, &size, 8);
            std::memcpy(p + 24, &stream, 8);
            std::memcpy(p + 32, &time, 8);
            std::memcpy(p + 40, &meta, 4);
            std::memcpy(p + 44, &context, 4);
        }
        endMessage(out, at);
    }
}

void LiveStreamEncoder::appendAnnotations(std::vector<uint8_t>& out, size_t first, size_t last) const
{
    for (size_t i = first; i < last; ++i) {
        const Annotation& a = m_snapshot.annotations[i];
        const size_t at = beginMessage(out, live::MessageType::Annotation);
        put<int16_t>(out, static_cast<int16_t>(a.device));
        put<uint8_t>(out, a.stage == AnnotationStage::Start ? 0 : 1);
        put<uint8_t>(out, 0);
        put<uint32_t>(out, wireString(a.name));
        put<int64_t>(out, a.timeUs);
        endMessage(out, at);
    }
}

void LiveStreamEncoder::appendSettings(std::vector<uint8_t>& out) const
{
    // The snapshot keeps its settings as text; numbers and booleans go back as such.
    nlohmann::json j = nlohmann::json::object();
    for (const auto& [key, text] : m_snapshot.allocatorSettings) {
        char* end = nullptr;
        const long long v = std::strtoll(text.c_str(), &end, 10);
        if (text == "True" || text == "False")
            j[key] = text == "True";
        else if (!text.empty() && end && *end == '\0')
            j[key] = v;
        else
            j[key] = text;
    }
    appendJson(out, static_cast<uint8_t>(live::MessageType::Settings), j.dump());
}

void LiveStreamEncoder::appendSegments(std::vector<uint8_t>& out) const
{
    const size_t at = beginMessage(out, live::MessageType::Segments);
    put<uint32_t>(out, static_cast<uint32_t>(m_snapshot.segments.size()));
    for (const Segment& s : m_snapshot.segments) {
        put<int32_t>(out, s.device);
        put<uint8_t>(
            out, static_cast<uint8_t>((s.largePool ? live::kSegmentLarge : 0) | (s.expandable ? live::kSegmentExpandable : 0)));
        put<uint8_t>(out, 0);
        put<uint8_t>(out, 0);
        put<uint8_t>(out, 0);
        put<uint32_t>(out, wireStack(s.stack));
        put<uint32_t>(out, static_cast<uint32_t>(s.blocks.size()));
        put<uint64_t>(out, s.address);
        put<uint64_t>(out, s.totalSize);
        put<uint64_t>(out, s.allocatedSize);
        put<uint64_t>(out, s.activeSize);
        put<uint64_t>(out, s.requestedSize);
        put<uint64_t>(out, s.stream);
        put<int64_t>(out, s.poolId[0]);
        put<int64_t>(out, s.poolId[1]);
        for (const Block& b : s.blocks) {
            put<uint64_t>(out, b.address);
            put<uint64_t>(out, b.size);
            put<uint64_t>(out, b.requestedSize);
            put<uint8_t>(out, b.state == BlockState::Unknown ? 3 : static_cast<uint8_t>(b.state));
            put<uint8_t>(out, 0);
            put<uint8_t>(out, 0);
            put<uint8_t>(out, 0);
            put<uint32_t>(out, wireStack(b.stack));
        }
    }
    endMessage(out, at);
}

} // namespace memscope
