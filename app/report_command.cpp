#include "report_command.h"

#include "command_line.h"

#include "io/report_files.h"

#include <cmath>
#include <iostream>
#include <optional>
#include <stdexcept>

namespace memscope {

namespace {

ReportPngWriter& pngWriter()
{
    static ReportPngWriter writer;
    return writer;
}

// The event shown at --at: the global peak, or the state after the last event at or
// before the time.
int64_t resolveAt(const std::string& at, const DeviceReplay& replay, const EventTable& ev)
{
    if (at.empty() || at == "peak")
        return peakEvent(replay);
    size_t used = 0;
    double value = 0;
    try {
        value = std::stod(at, &used);
    } catch (...) {
        throw UsageError("--at takes 'peak' or a time (1795310585562833, 1.5s, 350ms), got '" + at + "'");
    }
    const std::string unit = at.substr(used);
    const int64_t t0Us = ev.count() ? ev.timeUs.front() : 0;
    int64_t timeUs;
    if (unit.empty()) {
        if (at.find_first_not_of("0123456789") != std::string::npos)
            throw UsageError("--at: a time_us is a whole number of microseconds, got '" + at + "'");
        timeUs = std::stoll(at);
    } else if (unit == "s" || unit == "ms" || unit == "us") {
        const double scale = unit == "s" ? 1e6 : unit == "ms" ? 1e3 : 1.0;
        timeUs = t0Us + static_cast<int64_t>(std::llround(value * scale));
    } else {
        throw UsageError("--at: unknown unit '" + unit + "' in '" + at + "' (use s, ms or us)");
    }
    if (ev.count() == 0)
        return -1;
    if (timeUs < ev.timeUs.front() || timeUs > ev.timeUs.back() + 1000000)
        throw UsageError("--at " + at + ": the trace runs from time_us " + std::to_string(ev.timeUs.front()) + " to " +
                         std::to_string(ev.timeUs.back()));
    return eventAtTime(ev, timeUs);
}

} // namespace

void setReportPngWriter(ReportPngWriter writer) { pngWriter() = std::move(writer); }

int runReport(const std::vector<std::string>& args)
{
    std::string file, out, at;
    std::optional<int> device;
    try {
        const CommandLine cl(args,
                             {.command = "report", .flags = {"--help", "-h"}, .options = {{"--device"}, {"--at"}, {"--out"}}});
        if (cl.has("--help") || cl.has("-h")) {
            std::cout << kReportUsage << "\n";
            return 0;
        }
        device = cl.device();
        file = cl.operand();
        out = cl.value("--out").value_or("");
        at = cl.value("--at").value_or("peak");
        if (file.empty() || out.empty())
            throw UsageError(kReportUsage);
    } catch (const UsageError& e) {
        std::cerr << "memscope report: " << e.what() << "\n";
        return 2;
    }

    try {
        const auto analysis = analyze(AnalysisSource::file(file));
        const size_t index = analysis->deviceIndex(device);
        const int64_t event = resolveAt(at, analysis->replay->devices.at(index), analysis->snapshot->devices.at(index).events);
        const PointReport point = buildPointReport(*analysis->attribution, index, event);
        const ReportDataFiles files = writeReportData(*analysis->attribution, point, *analysis->frames, analysis->diagnosis.get(),
                                                      out);
        if (pngWriter())
            std::cout << pngWriter()(analysis, point, out) << "\n";
        for (const std::string& f : {files.peakCsv, files.timelineCsv, files.json, files.flameJson, files.flameSvg})
            std::cout << f << "\n";
        if (!pngWriter())
            std::cerr << "memscope report: peak_report.png needs the GUI build (this memscope was built with "
                         "MEMSCOPE_BUILD_UI=OFF); the CSV and JSON files are complete\n";
        return 0;
    } catch (const std::exception& e) {
        std::cerr << "memscope report: " << e.what() << "\n";
        return 1;
    }
}

} // namespace memscope
