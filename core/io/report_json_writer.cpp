#include "io/report_json_writer.h"

#include "io/diagnostics_json.h"
#include "query/module_breakdown.h"

#include <nlohmann/json.hpp>

namespace memscope {

namespace {

using Json = nlohmann::ordered_json;

Json byCategory(const std::array<int64_t, kCategoryCount>& bytes)
{
    Json j = Json::object();
    for (Category c : kAllCategories)
        j[std::string(categoryName(c))] = bytes[static_cast<size_t>(c)];
    return j;
}

// Iterations are numbered from 1, as the window and the diagnostics' messages number them;
// -1 is a point outside any iteration.
int iterationNumber(int index) { return index >= 0 ? index + 1 : -1; }

Json point(const PointReport& p, int64_t t0)
{
    Json j;
    j["bytes"] = p.requested;
    j["event_index"] = p.event;
    j["time_us"] = p.timeUs;
    j["seconds_from_start"] = static_cast<double>(p.timeUs - t0) / 1e6;
    j["phase"] = phaseName(p.phase);
    j["iteration"] = iterationNumber(p.iteration);
    j["reserved_bytes"] = p.reserved;
    j["by_category"] = byCategory(p.byCategory);
    return j;
}

// The point's live bytes by module path at every depth, each depth's rows adding up to the
// point's bytes: the 8 largest, then one "(other modules: N)" row for the rest.
Json modulesJson(const PointReport& at, const FrameClassifier& frames)
{
    constexpr size_t kRows = 8;
    Json depths = Json::array();
    for (size_t depth = 1;; ++depth) {
        const ModuleBreakdown b = moduleBreakdown(at, frames, depth);
        Json rows = Json::array();
        int64_t restBytes = 0, restCount = 0;
        size_t rest = 0;
        for (size_t i = 0; i < b.rows.size(); ++i) {
            const ModuleShare& m = b.rows[i];
            if (i >= kRows) {
                restBytes += m.bytes;
                restCount += m.count;
                ++rest;
                continue;
            }
            rows.push_back(
                {{"module", m.module}, {"bytes", m.bytes}, {"count", m.count}, {"category", categoryName(m.category)}});
        }
        if (rest)
            rows.push_back({{"module", "(other modules: " + std::to_string(rest) + ")"},
                            {"bytes", restBytes},
                            {"count", restCount},
                            {"category", ""}});
        depths.push_back({{"depth", depth}, {"bytes", b.bytes}, {"rows", std::move(rows)}});
        if (depth >= b.maxDepth)
            break;
    }
    return depths;
}

} // namespace

std::string reportPointJson(const Attribution& attribution, const PointReport& p)
{
    const EventTable& ev = attribution.replay->snapshot->devices.at(p.deviceIndex).events;
    const int64_t t0 = ev.count() ? ev.timeUs.front() : 0;
    return point(p, t0).dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string reportJson(const Attribution& attribution, const PointReport& at, const FrameClassifier& frames,
                       const Diagnostics* diagnostics)
{
    const Replay& replay = *attribution.replay;
    const DeviceReplay& d = replay.devices.at(at.deviceIndex);
    const DeviceAttribution& a = attribution.devices.at(at.deviceIndex);
    const EventTable& ev = replay.snapshot->devices.at(at.deviceIndex).events;
    const int64_t t0 = ev.count() ? ev.timeUs.front() : 0;
    auto timeAt = [&](int64_t e) { return e >= 0 && e < d.eventCount ? ev.timeUs[static_cast<size_t>(e)] : t0; };

    Json root;
    root["file"] = replay.snapshot->path;
    root["device"] = d.device;
    root["events"] = d.eventCount;
    root["allocations"] = d.allocations.size();

    const PointReport peak = at.globalPeak ? at : buildPointReport(attribution, at.deviceIndex, peakEvent(d));
    root["peak"] = point(peak, t0);
    Json reserved;
    reserved["bytes"] = d.peakReserved.bytes;
    reserved["event_index"] = d.peakReserved.event.valid() ? d.peakReserved.event.value : -1;
    reserved["time_us"] = d.peakReserved.timeUs;
    root["peak_reserved"] = reserved;

    Json atJson = point(at, t0);
    atJson["is_global_peak"] = at.globalPeak;
    atJson["live_allocations"] = at.live.size();
    Json sites = Json::array();
    for (size_t i = 0; i < at.callSites.size() && i < 20; ++i) {
        const CallSite& s = at.callSites[i];
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
    atJson["top_call_sites"] = std::move(sites);
    atJson["modules"] = modulesJson(at, frames);
    root["at"] = std::move(atJson);

    Json iterations = Json::array();
    for (const Iteration& it : a.iterations) {
        Json j;
        j["index"] = iterationNumber(it.index);
        j["first_event"] = it.firstEvent;
        j["last_event"] = it.lastEvent;
        j["start_time_us"] = timeAt(it.firstEvent);
        j["end_time_us"] = timeAt(it.lastEvent);
        Json phases = Json::array();
        for (const PhaseRange& p : it.phases)
            phases.push_back({{"phase", phaseName(p.phase)}, {"first_event", p.firstEvent}, {"last_event", p.lastEvent}});
        j["phases"] = std::move(phases);
        Json pk;
        pk["bytes"] = it.peak.bytes;
        pk["event_index"] = it.peak.event.valid() ? it.peak.event.value : -1;
        pk["time_us"] = it.peak.timeUs;
        pk["phase"] = phaseName(it.peak.phase);
        pk["by_category"] = byCategory(it.peak.byCategory);
        j["peak"] = std::move(pk);
        iterations.push_back(std::move(j));
    }
    root["iterations"] = std::move(iterations);
    Json ooms = Json::array();
    for (EventIndex e : d.oomEvents)
        ooms.push_back(e.value);
    root["oom_events"] = std::move(ooms);
    if (diagnostics)
        root["diagnostics"] = Json::parse(diagnosticsToJson(*diagnostics, replay, frames, at.deviceIndex, -1));
    // Names from the file may hold bytes that are not UTF-8: written as U+FFFD, never thrown.
    return root.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

} // namespace memscope
