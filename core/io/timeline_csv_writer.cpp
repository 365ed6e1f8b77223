#include "io/timeline_csv_writer.h"

#include <charconv>
#include <string>

namespace memscope {

namespace {

void appendInt(std::string& line, int64_t v)
{
    char buf[24];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
    (void)ec;
    line.append(buf, end);
}

} // namespace

void writeTimelineCsv(std::ostream& out, const Attribution& attribution, size_t deviceIndex)
{
    const DeviceReplay& d = attribution.replay->devices.at(deviceIndex);
    const DeviceAttribution& a = attribution.devices.at(deviceIndex);
    const EventTable& ev = attribution.replay->snapshot->devices.at(deviceIndex).events;

    std::string line = "time_us,event_index,requested_bytes,reserved_bytes";
    for (Category c : kAllCategories) {
        line += ',';
        line += categoryName(c);
    }
    line += ",phase\n";
    out << line;

    bool haveCurves = true;
    for (const auto& curve : a.categoryBytes)
        haveCurves = haveCurves && curve.size() == static_cast<size_t>(d.eventCount);
    const bool havePhases = a.eventPhase.size() == static_cast<size_t>(d.eventCount);
    for (int64_t i = 0; i < d.eventCount; ++i) {
        const size_t k = static_cast<size_t>(i);
        line.clear();
        appendInt(line, ev.timeUs[k]);
        line += ',';
        appendInt(line, i);
        line += ',';
        appendInt(line, d.requested[k]);
        line += ',';
        appendInt(line, d.reserved[k]);
        for (size_t c = 0; c < a.categoryBytes.size(); ++c) {
            line += ',';
            appendInt(line, haveCurves ? a.categoryBytes[c][k] : 0);
        }
        line += ',';
        line += phaseName(havePhases ? a.eventPhase[k] : Phase::Other);
        line += '\n';
        out << line;
    }
}

} // namespace memscope
