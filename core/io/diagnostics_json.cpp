#include "io/diagnostics_json.h"

#include <nlohmann/json.hpp>

namespace memscope {

namespace {

using Json = nlohmann::ordered_json;

} // namespace

std::string diagnosticsToJson(const Diagnostics& diagnostics, const Replay& replay, const FrameClassifier& frames,
                              std::optional<size_t> device, int indent, size_t maxAllocations)
{
    Json arr = Json::array();
    for (const Diagnostic& d : diagnostics.items) {
        if (device && d.deviceIndex != *device)
            continue;
        Json j;
        j["kind"] = diagnosticKindName(d.kind);
        j["severity"] = severityName(d.severity);
        j["device"] = d.device;
        j["message"] = d.message;
        j["detail"] = d.detail;
        j["bytes"] = d.bytes;
        if (d.kind == DiagnosticKind::Growth)
            j["bytes_per_iteration"] = d.bytesPerIteration;
        j["iterations"] = d.iterations;
        j["event_index"] = d.event;
        Json figures = Json::object();
        for (const DiagnosticFigure& f : d.figures)
            figures[f.key] = f.value;
        j["figures"] = std::move(figures);
        j["fix"] = d.fix;
        Json allocations = Json::array();
        const DeviceReplay* r = d.deviceIndex < replay.devices.size() ? &replay.devices[d.deviceIndex] : nullptr;
        for (size_t k = 0; r && k < d.allocations.size() && k < maxAllocations; ++k) {
            const Allocation& a = r->allocation(d.allocations[k]);
            Json x;
            x["id"] = d.allocations[k].value;
            x["address"] = a.addr;
            x["size"] = a.size;
            x["alloc_event"] = a.allocEvent.value;
            x["free_event"] = a.freeEvent.value;
            x["stack_id"] = a.stack.value;
            allocations.push_back(std::move(x));
        }
        Json sites = Json::array();
        for (const EvidenceSite& s : d.sites) {
            Json x;
            x["stack_id"] = s.stack.value;
            x["bytes"] = s.bytes;
            x["count"] = s.count;
            x["top_user_frame"] = frames.frameText(frames.topUserFrame(s.stack));
            x["stack"] = frames.stackSummary(s.stack, 8);
            sites.push_back(std::move(x));
        }
        Json evidence;
        evidence["allocations"] = std::move(allocations);
        evidence["allocation_count"] = d.allocations.size();
        evidence["call_sites"] = std::move(sites);
        j["evidence"] = std::move(evidence);
        arr.push_back(std::move(j));
    }
    // Frame names from the file may hold bytes that are not UTF-8: written as U+FFFD.
    return arr.dump(indent, ' ', false, Json::error_handler_t::replace) + "\n";
}

std::string diagnosticsText(const Diagnostics& diagnostics, const FrameClassifier& frames, std::optional<size_t> device)
{
    std::string out;
    size_t shown = 0;
    for (const Diagnostic& d : diagnostics.items) {
        if (device && d.deviceIndex != *device)
            continue;
        ++shown;
        std::string sev(severityName(d.severity));
        for (char& c : sev)
            c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        out += "[" + sev + "] device " + std::to_string(d.device) + " " + std::string(diagnosticKindName(d.kind)) + ": " +
               d.message + "\n";
        if (!d.detail.empty())
            out += "    " + d.detail + "\n";
        for (size_t k = 0; k < d.sites.size() && k < 3; ++k) {
            const EvidenceSite& s = d.sites[k];
            std::string stack = frames.stackSummary(s.stack, 4);
            out += "    at " + (stack.empty() ? std::string("(no frames)") : stack) + ": " + formatBytes(s.bytes) + " in " +
                   std::to_string(s.count) + (s.count == 1 ? " block" : " blocks") + "\n";
        }
        if (!d.fix.empty())
            out += "    fix: " + d.fix + "\n";
        out += "\n";
    }
    if (shown == 0)
        out += "no findings\n";
    return out;
}

} // namespace memscope
