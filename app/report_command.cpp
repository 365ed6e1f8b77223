#include "report_command.h"

#include "command_line.h"

#include "ui/document/document.h"
#include "io/point_report.h"
#include "ui/pages/report_exporter.h"

#include <QApplication>
#include <QDir>

#include <cmath>
#include <iostream>
#include <memory>
#include <optional>
#include <stdexcept>

namespace memscope {

namespace {

constexpr const char* kUsage = "usage: memscope report FILE [--device N] [--at peak|TIME] --out DIR\n"
                               "  TIME: a time_us value as in timeline.csv, or a time since the first event\n"
                               "        with a unit: 1.5s, 350ms, 1200us";

// The event shown at --at: the global peak, or the state after the last event at or
// before the time.
int64_t resolveAt(const std::string& at, const DeviceModel& m)
{
    if (at.empty() || at == "peak")
        return peakEvent(*m.replay);
    size_t used = 0;
    double value = 0;
    try {
        value = std::stod(at, &used);
    } catch (...) {
        throw UsageError("--at takes 'peak' or a time (1795310585562833, 1.5s, 350ms), got '" + at + "'");
    }
    const std::string unit = at.substr(used);
    int64_t timeUs;
    if (unit.empty()) {
        if (at.find_first_not_of("0123456789") != std::string::npos)
            throw UsageError("--at: a time_us is a whole number of microseconds, got '" + at + "'");
        timeUs = std::stoll(at);
    } else if (unit == "s" || unit == "ms" || unit == "us") {
        const double scale = unit == "s" ? 1e6 : unit == "ms" ? 1e3 : 1.0;
        timeUs = m.t0Us + static_cast<int64_t>(std::llround(value * scale));
    } else {
        throw UsageError("--at: unknown unit '" + unit + "' in '" + at + "' (use s, ms or us)");
    }
    const EventTable& ev = *m.events;
    if (ev.count() == 0)
        return -1;
    if (timeUs < ev.timeUs.front() || timeUs > ev.timeUs.back() + 1000000)
        throw UsageError("--at " + at + ": the trace runs from time_us " + std::to_string(ev.timeUs.front()) + " to " +
                         std::to_string(ev.timeUs.back()));
    return eventAtTime(ev, timeUs);
}

} // namespace

int runReport(const std::vector<std::string>& args)
{
    std::string file, out, at;
    std::optional<int> device;
    try {
        const CommandLine cl(args, {.command = "report", .flags = {"--help", "-h"}, .options = {{"--device"}, {"--at"}, {"--out"}}});
        if (cl.has("--help") || cl.has("-h")) {
            std::cout << kUsage << "\n";
            return 0;
        }
        device = cl.device();
        file = cl.operand();
        out = cl.value("--out").value_or("");
        at = cl.value("--at").value_or("peak");
        if (file.empty() || out.empty())
            throw UsageError(kUsage);
    } catch (const UsageError& e) {
        std::cerr << "memscope report: " << e.what() << "\n";
        return 2;
    }

    // QCustomPlot draws through QWidget, which needs a QApplication; the report never shows a
    // window, so Qt's offscreen platform serves when no platform was asked for.
    std::unique_ptr<QApplication> app;
    if (!QCoreApplication::instance()) {
        if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
            qputenv("QT_QPA_PLATFORM", "offscreen");
        static int argc = 1;
        static char name[] = "memscope";
        static char* argv[] = {name, nullptr};
        app = std::make_unique<QApplication>(argc, argv);
    }
    try {
        const auto doc = analyzeFile(file);
        const size_t index = doc->analysis->deviceIndex(device);
        const int64_t event = resolveAt(at, doc->devices[index]);
        const ReportFiles files = writeReport(*doc, index, event, QString::fromStdString(out));
        for (const QString& f : {files.png, files.peakCsv, files.timelineCsv, files.json})
            std::cout << QDir::toNativeSeparators(f).toStdString() << "\n";
        return 0;
    } catch (const std::exception& e) {
        std::cerr << "memscope report: " << e.what() << "\n";
        return 1;
    }
}

} // namespace memscope
