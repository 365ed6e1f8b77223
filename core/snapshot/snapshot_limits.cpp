#include "snapshot/snapshot_limits.h"

#include "common/load_error.h"

namespace memscope {

namespace {

std::string hex(uint64_t v)
{
    static const char* digits = "0123456789abcdef";
    std::string s;
    do {
        s.insert(s.begin(), digits[v & 15]);
        v >>= 4;
    } while (v);
    return "0x" + s;
}

std::string rangeError(uint64_t address, uint64_t size)
{
    if (address > UINT64_MAX - size)
        return "address " + hex(address) + " + size " + std::to_string(size) + " runs past the end of a 64-bit address space";
    return {};
}

std::string addError(uint64_t& total, uint64_t size, const char* what)
{
    if (size > kMaxTotalBytes || total > kMaxTotalBytes - size)
        return std::string("the sizes of ") + what + " add up past 2^60 bytes (1 EiB): not a real allocator snapshot";
    total += size;
    return {};
}

struct PathError {
    std::string path;
    std::string message;
};

PathError firstSegmentError(std::span<const Segment> segments)
{
    uint64_t segmentTotal = 0, blockTotal = 0, requestedTotal = 0;
    for (size_t i = 0; i < segments.size(); ++i) {
        const Segment& seg = segments[i];
        const std::string path = "segments[" + std::to_string(i) + "]";
        if (std::string e = rangeError(seg.address, seg.totalSize); !e.empty())
            return {path + ".address", e};
        if (std::string e = addError(segmentTotal, seg.totalSize, "all segments"); !e.empty())
            return {path + ".total_size", e};
        for (size_t j = 0; j < seg.blocks.size(); ++j) {
            const Block& b = seg.blocks[j];
            const std::string bpath = path + ".blocks[" + std::to_string(j) + "]";
            if (std::string e = rangeError(b.address, b.size); !e.empty())
                return {bpath + ".address", e};
            if (std::string e = addError(blockTotal, b.size, "all blocks"); !e.empty())
                return {bpath + ".size", e};
            if (std::string e = addError(requestedTotal, b.requestedSize, "all blocks"); !e.empty())
                return {bpath + ".requested_size", e};
        }
    }
    return {};
}

} // namespace

std::string timeLimitError(int64_t t)
{
    if (t > kMaxAbsTimeUs || t < -kMaxAbsTimeUs)
        return std::to_string(t) + " is not a time in microseconds (more than 2^61 away from the epoch)";
    return {};
}

std::string entryLimitError(bool hasAddress, uint64_t addr, uint64_t size, int64_t timeUs, uint64_t& deviceTotal)
{
    // One branch for the common case; the reasons are worked out only on failure.
    if ((hasAddress && addr > UINT64_MAX - size) || size > kMaxTotalBytes || deviceTotal > kMaxTotalBytes - size ||
        timeUs > kMaxAbsTimeUs || timeUs < -kMaxAbsTimeUs) [[unlikely]] {
        if (hasAddress)
            if (std::string e = rangeError(addr, size); !e.empty())
                return "addr: " + e;
        uint64_t total = deviceTotal;
        if (std::string e = addError(total, size, "this device's trace entries"); !e.empty())
            return "size: " + e;
        return "time_us: " + timeLimitError(timeUs);
    }
    deviceTotal += size;
    return {};
}

std::string segmentsLimitError(std::span<const Segment> segments)
{
    PathError e = firstSegmentError(segments);
    return e.path.empty() ? std::string() : e.path + ": " + e.message;
}

void checkSnapshotLimits(const Snapshot& s, const std::string& fileName)
{
    auto fail = [&](const std::string& path, const std::string& message) { throw LoadError(fileName, -1, path, message); };
    if (s.devices.size() > kMaxDevices)
        fail("device_traces", "holds " + std::to_string(s.devices.size()) + " per-device traces; at most " +
                                  std::to_string(kMaxDevices) + " are accepted (one per GPU)");
    for (size_t d = 0; d < s.devices.size(); ++d) {
        const EventTable& ev = s.devices[d].events;
        uint64_t total = 0;
        const size_t count = ev.count();
        for (size_t i = 0; i < count; ++i) {
            // An oom row's addr is 0 and its device_free sits aside: every row has an address.
            // entryLimitError's test, inline: no std::string per row of a file within bounds.
            const uint64_t addr = ev.addr[i], size = ev.size[i];
            const int64_t time = ev.timeUs[i];
            if (addr <= UINT64_MAX - size && size <= kMaxTotalBytes && total <= kMaxTotalBytes - size && time <= kMaxAbsTimeUs &&
                time >= -kMaxAbsTimeUs) [[likely]] {
                total += size;
                continue;
            }
            std::string e = entryLimitError(true, addr, size, time, total);
            if (!e.empty()) [[unlikely]] {
                const size_t colon = e.find(": ");
                fail("device_traces[" + std::to_string(d) + "][" + std::to_string(i) + "]." + e.substr(0, colon),
                     e.substr(colon + 2));
            }
        }
    }
    if (PathError e = firstSegmentError(s.segments); !e.path.empty())
        fail(e.path, e.message);
    for (size_t i = 0; i < s.annotations.size(); ++i)
        if (std::string e = timeLimitError(s.annotations[i].timeUs); !e.empty())
            fail("external_annotations[" + std::to_string(i) + "].time_us", e);
}

} // namespace memscope
