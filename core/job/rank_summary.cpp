#include "job/rank_summary.h"
#include "job/rank_oom_json.h"

#include "common/load_error.h"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>

namespace memscope {

namespace {

using Json = nlohmann::ordered_json;

constexpr int kSummaryFormat = 1;

int64_t eventTime(const EventTable& ev, int64_t i)
{
    return i >= 0 && static_cast<size_t>(i) < ev.count() ? ev.timeUs[static_cast<size_t>(i)] : 0;
}

} // namespace

int64_t RankSummary::collectiveAtPeakTotal() const
{
    int64_t total = 0;
    for (size_t k = 1; k < collectiveAtPeak.size(); ++k)
        total += collectiveAtPeak[k];
    return total;
}

RankSummary summarizeRank(const Analysis& analysis, size_t deviceIndex, int rank)
{
    const DeviceReplay& r = analysis.replay->devices.at(deviceIndex);
    const EventTable& ev = analysis.snapshot->devices.at(deviceIndex).events;
    RankSummary s;
    s.file = analysis.name;
    s.device = r.device;
    s.rank = rank >= 0 ? rank : r.device;
    s.events = r.eventCount;
    s.allocations = static_cast<int64_t>(r.allocations.size());
    s.peakRequested = r.peakRequested.bytes;
    s.peakReserved = r.peakReserved.bytes;
    s.peakEvent = r.peakRequested.event.value;
    s.peakTimeUs = r.peakRequested.timeUs;
    s.startUs = ev.count() ? ev.timeUs.front() : 0;
    s.endUs = ev.count() ? ev.timeUs.back() : 0;
    if (!r.peakRequested.event.valid())
        s.peakTimeUs = s.startUs;
    if (!r.oomEvents.empty()) {
        const int64_t i = r.oomEvents.front().value;
        s.oom = true;
        s.oomEvent = i;
        s.oomTimeUs = eventTime(ev, i);
        s.oomAskedBytes = static_cast<int64_t>(ev.size[static_cast<size_t>(i)]);
    }

    const DeviceAttribution* a = analysis.attribution && deviceIndex < analysis.attribution->devices.size()
                                     ? &analysis.attribution->devices[deviceIndex]
                                     : nullptr;
    if (a && !a->eventPhase.empty()) {
        if (s.peakEvent >= 0)
            s.peakPhase = std::string(phaseName(a->eventPhase[static_cast<size_t>(s.peakEvent)]));
        if (s.oom)
            s.oomPhase = std::string(phaseName(a->eventPhase[static_cast<size_t>(s.oomEvent)]));
        for (const Iteration& it : a->iterations) {
            s.iterationStartUs.push_back(eventTime(ev, it.firstEvent));
            if (s.peakEvent >= it.firstEvent && s.peakEvent <= it.lastEvent)
                s.peakIteration = it.index;
        }
        const DeviceCollectives c = std::move(findCollectives(*analysis.replay).devices.at(deviceIndex));
        s.collectiveAtPeak = c.atPeak;
        s.collectivePeak = c.peakBytes;
    }
    if (s.oom && analysis.frames) {
        const StackId stack = ev.stack[static_cast<size_t>(s.oomEvent)];
        const FrameId top = analysis.frames->topUserFrame(stack);
        s.oomWhere = top.valid() ? analysis.frames->frameText(top) : analysis.frames->librarySummary(stack);
    }

    const int64_t n = r.eventCount;
    const int64_t columns = std::min<int64_t>(n, static_cast<int64_t>(kRankTimelinePoints));
    for (int64_t c = 0; c < columns; ++c) {
        const int64_t first = c * n / columns;
        const int64_t last = (c + 1) * n / columns; // exclusive
        RankTimelinePoint p{eventTime(ev, first), first, r.requested[static_cast<size_t>(first)],
                            r.requested[static_cast<size_t>(first)]};
        for (int64_t i = first + 1; i < last; ++i) {
            p.low = std::min(p.low, r.requested[static_cast<size_t>(i)]);
            p.high = std::max(p.high, r.requested[static_cast<size_t>(i)]);
        }
        s.timeline.push_back(p);
    }
    return s;
}

std::string rankSummaryJson(const RankSummary& s)
{
    Json j;
    j["memscope_rank_summary"] = kSummaryFormat;
    j["rank"] = s.rank;
    j["file"] = s.file;
    j["device"] = s.device;
    j["events"] = s.events;
    j["allocations"] = s.allocations;
    j["peak_requested_bytes"] = s.peakRequested;
    j["peak_reserved_bytes"] = s.peakReserved;
    j["peak_event_index"] = s.peakEvent;
    j["peak_time_us"] = s.peakTimeUs;
    j["peak_phase"] = s.peakPhase;
    j["peak_iteration"] = s.peakIteration;
    j["start_time_us"] = s.startUs;
    j["end_time_us"] = s.endUs;
    j["iteration_start_us"] = s.iterationStartUs;
    j["oom"] = rankOomJson(s);
    j["iteration_folder"] = s.iteration;
    j["oom_dump"] = s.oomDump;
    Json comm;
    comm["peak_bytes"] = s.collectivePeak;
    Json atPeak = Json::object();
    for (size_t k = 1; k < s.collectiveAtPeak.size(); ++k)
        atPeak[std::string(collectiveKindName(static_cast<CollectiveKind>(k)))] = s.collectiveAtPeak[k];
    comm["at_peak"] = std::move(atPeak);
    j["communication"] = std::move(comm);
    // One string of numbers, four a column (time less start_time_us, event, low, high): a JSON
    // array of arrays cost ~2 µs a value to parse, most of opening a job of 1,024 ranks.
    std::string timeline;
    timeline.reserve(s.timeline.size() * 40);
    for (const RankTimelinePoint& p : s.timeline) {
        if (!timeline.empty())
            timeline += ' ';
        timeline += std::to_string(p.timeUs - s.startUs) + ' ' + std::to_string(p.event) + ' ' + std::to_string(p.low) + ' ' +
                    std::to_string(p.high);
    }
    j["timeline"] = std::move(timeline);
    return j.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
}

RankSummary parseRankSummary(std::string_view text, const std::string& path)
{
    Json j;
    try {
        j = Json::parse(text.begin(), text.end());
    } catch (const Json::parse_error& e) {
        throw LoadError(path, static_cast<int64_t>(e.byte), "", "not JSON: " + std::string(e.what()));
    }
    auto need = [&](const Json& obj, const char* key, const std::string& where) -> const Json& {
        if (!obj.is_object() || !obj.contains(key))
            throw LoadError(path, -1, where + key, "missing; expected a memscope rank summary (memscope summarize)");
        return obj[key];
    };
    auto integer = [&](const Json& obj, const char* key, const std::string& where = "") -> int64_t {
        const Json& v = need(obj, key, where);
        if (!v.is_number_integer())
            throw LoadError(path, -1, where + key, "expected an integer, got " + std::string(v.type_name()));
        return v.get<int64_t>();
    };
    auto text_ = [&](const Json& obj, const char* key, const std::string& where = "") -> std::string {
        const Json& v = need(obj, key, where);
        if (!v.is_string())
            throw LoadError(path, -1, where + key, "expected a string, got " + std::string(v.type_name()));
        return v.get<std::string>();
    };
    auto boolean = [&](const Json& obj, const char* key, const std::string& where = "") -> bool {
        const Json& v = need(obj, key, where);
        if (!v.is_boolean())
            throw LoadError(path, -1, where + key, "expected true or false, got " + std::string(v.type_name()));
        return v.get<bool>();
    };
    if (integer(j, "memscope_rank_summary") != kSummaryFormat)
        throw LoadError(path, -1, "memscope_rank_summary", "this memscope reads format " + std::to_string(kSummaryFormat));
    RankSummary s;
    s.rank = static_cast<int>(integer(j, "rank"));
    s.file = text_(j, "file");
    s.device = static_cast<int>(integer(j, "device"));
    s.events = integer(j, "events");
    s.allocations = integer(j, "allocations");
    s.peakRequested = integer(j, "peak_requested_bytes");
    s.peakReserved = integer(j, "peak_reserved_bytes");
    s.peakEvent = integer(j, "peak_event_index");
    s.peakTimeUs = integer(j, "peak_time_us");
    s.peakPhase = text_(j, "peak_phase");
    s.peakIteration = static_cast<int>(integer(j, "peak_iteration"));
    s.startUs = integer(j, "start_time_us");
    s.endUs = integer(j, "end_time_us");
    for (const Json& t : need(j, "iteration_start_us", "")) {
        if (!t.is_number_integer())
            throw LoadError(path, -1, "iteration_start_us", "expected integers");
        s.iterationStartUs.push_back(t.get<int64_t>());
    }
    const Json& oom = need(j, "oom", "");
    s.oom = boolean(oom, "happened", "oom.");
    if (s.oom) {
        s.oomEvent = integer(oom, "event_index", "oom.");
        s.oomTimeUs = integer(oom, "time_us", "oom.");
        s.oomAskedBytes = integer(oom, "asked_bytes", "oom.");
        s.oomPhase = text_(oom, "phase", "oom.");
        s.oomWhere = text_(oom, "where", "oom.");
    }
    s.iteration = static_cast<int>(integer(j, "iteration_folder"));
    s.oomDump = boolean(j, "oom_dump");
    const Json& comm = need(j, "communication", "");
    s.collectivePeak = integer(comm, "peak_bytes", "communication.");
    const Json& atPeak = need(comm, "at_peak", "communication.");
    for (size_t k = 1; k < s.collectiveAtPeak.size(); ++k) {
        const std::string name(collectiveKindName(static_cast<CollectiveKind>(k)));
        s.collectiveAtPeak[k] = integer(atPeak, name.c_str(), "communication.at_peak.");
    }
    const std::string timeline = text_(j, "timeline");
    std::vector<int64_t> values;
    values.reserve(kRankTimelinePoints * 4);
    for (const char *at = timeline.data(), *end = at + timeline.size(); at < end;) {
        if (*at == ' ') {
            ++at;
            continue;
        }
        int64_t v = 0;
        const auto [next, ec] = std::from_chars(at, end, v);
        if (ec != std::errc())
            throw LoadError(path, -1, "timeline",
                            "expected numbers, four a column (time_us less start_time_us, event, low, high); byte " +
                                std::to_string(at - timeline.data()) + " of it is not one");
        values.push_back(v);
        at = next;
    }
    if (values.size() % 4 != 0)
        throw LoadError(path, -1, "timeline", "expected four numbers a column, got " + std::to_string(values.size()));
    s.timeline.reserve(values.size() / 4);
    for (size_t i = 0; i < values.size(); i += 4)
        s.timeline.push_back({values[i] + s.startUs, values[i + 1], values[i + 2], values[i + 3]});
    return s;
}

RankSummary readRankSummaryFile(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw LoadError(path, -1, "", "cannot open for reading");
    std::ostringstream text;
    text << in.rdbuf();
    return parseRankSummary(text.str(), path);
}

} // namespace memscope

namespace memscope {

double iterationPosition(const RankSummary& s, int64_t timeUs)
{
    const std::vector<int64_t>& st = s.iterationStartUs;
    if (st.empty())
        return static_cast<double>(timeUs - s.startUs) / 1e6;
    // The iteration holding the time: the last start at or before it.
    const auto it = std::upper_bound(st.begin(), st.end(), timeUs);
    if (it == st.begin()) {
        const double len = st.size() > 1 ? static_cast<double>(st[1] - st[0]) : 1e6;
        return static_cast<double>(timeUs - st[0]) / std::max(1.0, len);
    }
    const size_t k = static_cast<size_t>(it - st.begin()) - 1;
    const int64_t next = k + 1 < st.size() ? st[k + 1] : -1;
    double len;
    if (next > 0)
        len = static_cast<double>(next - st[k]);
    else if (st.size() > 1)
        len = static_cast<double>(st[k] - st[k - 1]);
    else
        len = std::max<double>(1.0, static_cast<double>(s.endUs - st[k]));
    return static_cast<double>(k) + static_cast<double>(timeUs - st[k]) / std::max(1.0, len);
}

} // namespace memscope
