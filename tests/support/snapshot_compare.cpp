#include "support/snapshot_compare.h"

namespace memscope::test {

namespace {
std::string stackText(const Snapshot& s, StackId id)
{
    std::string out;
    for (FrameId f : s.stacks.frames(id)) {
        const Frame& fr = s.frames.frame(f);
        out += std::string(s.str(fr.filename)) + ":" + std::to_string(fr.line) + ":" + std::string(s.str(fr.name));
        for (StringId fx : {fr.fxNodeOp, fr.fxNodeName, fr.fxNodeTarget, fr.fxOriginalTrace})
            if (fx.valid() && !s.str(fx).empty())
                out += "|" + std::string(s.str(fx));
        out += ";";
    }
    return out;
}
} // namespace

std::string compareSnapshots(const Snapshot& a, const Snapshot& b)
{
    if (a.devices.size() != b.devices.size())
        return "device count " + std::to_string(a.devices.size()) + " vs " + std::to_string(b.devices.size());
    for (size_t d = 0; d < a.devices.size(); ++d) {
        if (a.devices[d].device != b.devices[d].device)
            return "device " + std::to_string(d) + " ordinal " + std::to_string(a.devices[d].device) + " vs " +
                   std::to_string(b.devices[d].device);
        const EventTable& x = a.devices[d].events;
        const EventTable& y = b.devices[d].events;
        if (x.count() != y.count())
            return "device " + std::to_string(d) + " event count " + std::to_string(x.count()) + " vs " +
                   std::to_string(y.count());
        for (size_t i = 0; i < x.count(); ++i) {
            const std::string where = "device " + std::to_string(d) + " event " + std::to_string(i) + ": ";
            if (x.action[i] != y.action[i])
                return where + "action";
            if (x.addr[i] != y.addr[i])
                return where + "addr";
            if (x.size[i] != y.size[i])
                return where + "size";
            if (x.stream[i] != y.stream[i])
                return where + "stream";
            if (x.timeUs[i] != y.timeUs[i])
                return where + "time_us";
            if (stackText(a, x.stack[i]) != stackText(b, y.stack[i]))
                return where + "frames";
            if (a.str(x.userMetadata[i]) != b.str(y.userMetadata[i]))
                return where + "user_metadata";
            if (a.str(x.compileContext[i]) != b.str(y.compileContext[i]))
                return where + "compile_context";
            if (!(x.poolOf(i) == y.poolOf(i)))
                return where + "pool_id";
            if (stackText(a, x.forwardFramesOf(i)) != stackText(b, y.forwardFramesOf(i)))
                return where + "forward_frames";
        }
        if (x.deviceFree != y.deviceFree)
            return "device_free differs";
    }
    if (a.segments.size() != b.segments.size())
        return "segment count " + std::to_string(a.segments.size()) + " vs " + std::to_string(b.segments.size());
    for (size_t i = 0; i < a.segments.size(); ++i) {
        const Segment& s = a.segments[i];
        const Segment& t = b.segments[i];
        const std::string where = "segment " + std::to_string(i) + ": ";
        if (s.address != t.address || s.totalSize != t.totalSize || s.device != t.device || s.expandable != t.expandable ||
            s.largePool != t.largePool || s.requestedSize != t.requestedSize)
            return where + "fields";
        if (s.poolId[0] != t.poolId[0] || s.poolId[1] != t.poolId[1])
            return where + "segment_pool_id";
        if (stackText(a, s.stack) != stackText(b, t.stack))
            return where + "frames";
        if (s.blocks.size() != t.blocks.size())
            return where + "block count";
        for (size_t k = 0; k < s.blocks.size(); ++k) {
            const Block& p = s.blocks[k];
            const Block& q = t.blocks[k];
            if (p.address != q.address || p.size != q.size || p.requestedSize != q.requestedSize || p.state != q.state)
                return where + "block " + std::to_string(k);
            if (stackText(a, p.stack) != stackText(b, q.stack))
                return where + "block frames " + std::to_string(k);
        }
    }
    if (a.annotations.size() != b.annotations.size())
        return "annotation count";
    for (size_t i = 0; i < a.annotations.size(); ++i) {
        const Annotation& p = a.annotations[i];
        const Annotation& q = b.annotations[i];
        if (a.str(p.name) != b.str(q.name) || p.stage != q.stage || p.timeUs != q.timeUs || p.device != q.device)
            return "annotation " + std::to_string(i);
    }
    if (a.allocatorSettings != b.allocatorSettings)
        return "allocator_settings";
    return {};
}

} // namespace memscope::test
