#include "io/summary_writer.h"
#include "common/format_number.h"

#include "snapshot/device_name.h"

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

namespace memscope {

std::string summaryJson(const Replay& replay, std::optional<int> device, std::optional<int> focus)
{
    nlohmann::ordered_json root;
    root["file"] = replay.snapshot->path;
    if (focus)
        root["focus_device"] = *focus;
    nlohmann::ordered_json devices = nlohmann::ordered_json::array();
    for (const DeviceReplay& d : replay.devices) {
        if (device && d.device != *device)
            continue;
        nlohmann::ordered_json j;
        j["device"] = d.device;
        j["events"] = d.eventCount;
        j["peak_requested_bytes"] = d.peakRequested.bytes;
        j["peak_event_index"] = d.peakRequested.event.value;
        j["peak_time_us"] = d.peakRequested.timeUs;
        j["peak_reserved_bytes"] = d.peakReserved.bytes;
        j["peak_reserved_event_index"] = d.peakReserved.event.value;
        j["preexisting_bytes"] = d.preexistingBytes;
        j["preexisting_allocations"] = d.preexistingCount;
        j["allocations"] = d.allocations.size();
        j["final_requested_bytes"] = d.requestedAfter(d.eventCount - 1);
        j["final_reserved_bytes"] = d.reservedAfter(d.eventCount - 1);
        j["oom_events"] = d.oomEvents.size();
        j["truncated"] = d.truncated;
        if (d.truncated)
            j["truncation_reason"] = d.truncationReason;
        devices.push_back(std::move(j));
    }
    root["devices"] = std::move(devices);
    // Odd details the reader tolerated (a frame's line past 2^63, ...): shown, never fatal.
    root["warnings"] = replay.snapshot->warnings;
    // The file name may not be UTF-8: written as U+FFFD, never thrown.
    return root.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

std::string summaryText(const Replay& replay, std::optional<int> device, std::optional<int> focus)
{
    const Snapshot& s = *replay.snapshot;
    std::string out = s.path + "\n";
    out += "  format: ";
    switch (s.format) {
    case SnapshotFormat::Json: out += "JSON"; break;
    case SnapshotFormat::Live: out += "memscope live stream"; break;
    case SnapshotFormat::Pickle:
    case SnapshotFormat::PickleGzip:
        out += (s.format == SnapshotFormat::PickleGzip ? "gzip pickle protocol " : "pickle protocol ") +
               std::to_string(s.pickleProtocol);
        break;
    }
    out += ", " + std::to_string(s.segments.size()) + " segments, " + std::to_string(s.annotations.size()) + " annotations, " +
           std::to_string(s.stacks.size()) + " distinct stacks\n";
    for (const DeviceReplay& d : replay.devices) {
        if (device && d.device != *device)
            continue;
        const EventTable& ev = s.devices[static_cast<size_t>(&d - replay.devices.data())].events;
        const int64_t t0 = ev.count() ? ev.timeUs.front() : 0;
        char line[512];
        out += deviceName(d.device) + ": " + std::to_string(d.eventCount) + " events, " + std::to_string(d.allocations.size()) +
               " allocations" + (focus && *focus == d.device && !device && replay.devices.size() > 1 ? " (shown first)" : "") +
               "\n";
        std::snprintf(line, sizeof line, "  peak requested: %s (%lld bytes) at event %lld, %s s\n",
                      formatBytes(d.peakRequested.bytes).c_str(), static_cast<long long>(d.peakRequested.bytes),
                      static_cast<long long>(d.peakRequested.event.value),
                      formatFixed(static_cast<double>(d.peakRequested.timeUs - t0) / 1e6, 3).c_str());
        out += line;
        std::snprintf(line, sizeof line, "  peak reserved:  %s (%lld bytes)\n", formatBytes(d.peakReserved.bytes).c_str(),
                      static_cast<long long>(d.peakReserved.bytes));
        out += line;
        if (d.preexistingCount)
            out += "  before recording: " + std::to_string(d.preexistingCount) + " allocations, " +
                   formatBytes(d.preexistingBytes) + "\n";
        if (!d.oomEvents.empty())
            out += "  out-of-memory events: " + std::to_string(d.oomEvents.size()) + "\n";
        if (d.truncated)
            out += "  trace truncated: " + d.truncationReason + "\n";
    }
    for (const std::string& w : s.warnings)
        out += "warning: " + w + "\n";
    return out;
}

} // namespace memscope
