#include "io/report_files.h"

#include "common/format_bytes.h"
#include "io/flame_writer.h"
#include "io/peak_report_csv_writer.h"
#include "io/report_json_writer.h"
#include "io/timeline_csv_writer.h"

#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace memscope {

namespace {

template <class Write>
void writeFile(const std::string& path, Write write)
{
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out)
        throw std::runtime_error(path + ": cannot open for writing");
    write(out);
    out.flush();
    if (!out)
        throw std::runtime_error(path + ": write failed (disk full?)");
}

} // namespace

ReportDataFiles writeReportData(const Attribution& attribution, const PointReport& at, const FrameClassifier& frames,
                                const Diagnostics* diagnostics, const std::string& directory)
{
    std::error_code ec;
    std::filesystem::create_directories(directory, ec);
    if (ec || !std::filesystem::is_directory(directory))
        throw std::runtime_error(directory + ": cannot create the directory" + (ec ? ": " + ec.message() : ""));
    const std::filesystem::path dir(directory);
    ReportDataFiles files;
    files.peakCsv = (dir / "peak_report.csv").string();
    files.timelineCsv = (dir / "timeline.csv").string();
    files.json = (dir / "report.json").string();
    writeFile(files.peakCsv, [&](std::ostream& out) { writePeakReportCsv(out, at, frames); });
    writeFile(files.timelineCsv, [&](std::ostream& out) { writeTimelineCsv(out, attribution, at.deviceIndex); });
    writeFile(files.json, [&](std::ostream& out) { out << reportJson(attribution, at, frames, diagnostics); });
    const auto flame = stackTreeAt(*attribution.replay, at.deviceIndex, frames, at.event);
    files.flameJson = (dir / "flame.json").string();
    files.flameSvg = (dir / "flame.svg").string();
    writeFile(files.flameJson, [&](std::ostream& out) { out << flameJson(*flame, frames); });
    const std::string title = "Memory by stack on device " + std::to_string(at.device) +
                              (at.globalPeak ? " at the peak" : " at") + " (event " + std::to_string(at.event) +
                              "): " + formatBytes(at.requested);
    writeFile(files.flameSvg, [&](std::ostream& out) { out << flameSvg(*flame, frames, title); });
    return files;
}

} // namespace memscope
