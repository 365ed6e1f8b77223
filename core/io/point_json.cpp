#include "io/point_json.h"

#include "io/report_json_writer.h"

#include <nlohmann/json.hpp>

namespace memscope {

std::string pointJson(const Attribution& attribution, const PointReport& point, const FrameClassifier& frames, size_t top)
{
    using Json = nlohmann::ordered_json;
    const Replay& replay = *attribution.replay;
    const DeviceReplay& d = replay.devices.at(point.deviceIndex);
    Json root;
    root["file"] = replay.snapshot->path;
    root["device"] = d.device;
    root["events"] = d.eventCount;
    root["live_allocations"] = point.live.size();
    root["point"] = Json::parse(reportPointJson(attribution, point));
    root["is_global_peak"] = point.globalPeak;
    Json allocations = Json::array();
    for (size_t i = 0; i < point.live.size() && i < top; ++i) {
        const ActiveAllocation& a = point.live[i];
        Json j;
        j["id"] = a.id.value;
        j["address"] = a.addr;
        j["size_bytes"] = a.size;
        j["category"] = categoryName(a.category);
        j["phase"] = phaseName(a.phase);
        j["alloc_event"] = a.allocEvent;
        j["free_event"] = a.freeEvent;
        j["top_user_frame"] = frames.frameText(frames.topUserFrame(a.stack));
        j["op"] = frames.opText(a.stack);
        j["module"] = frames.moduleText(a.stack);
        allocations.push_back(std::move(j));
    }
    root["top_allocations"] = std::move(allocations);
    Json sites = Json::array();
    for (size_t i = 0; i < point.callSites.size() && i < top; ++i) {
        const CallSite& s = point.callSites[i];
        Json site;
        site["bytes"] = s.bytes;
        site["count"] = s.count;
        site["category"] = categoryName(s.category);
        site["top_user_frame"] = frames.frameText(frames.topUserFrame(s.stack));
        site["op"] = frames.opText(s.stack);
        site["module"] = frames.moduleText(s.stack);
        site["stack"] = frames.stackSummary(s.stack, 8);
        sites.push_back(std::move(site));
    }
    root["top_call_sites"] = std::move(sites);
    // Names from the file may hold bytes that are not UTF-8: written as U+FFFD, never thrown.
    return root.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

} // namespace memscope
