#include "ui/pages/report_exporter.h"

#include "io/peak_report_csv_writer.h"
#include "io/point_report.h"
#include "io/report_json_writer.h"
#include "io/timeline_csv_writer.h"
#include "ui/pages/report_chart.h"

#include <QDir>

#include <fstream>
#include <stdexcept>

namespace memscope {

namespace {

template <class Write>
void writeFile(const QString& path, Write write)
{
    std::ofstream out(path.toStdString(), std::ios::binary | std::ios::trunc);
    if (!out)
        throw std::runtime_error(path.toStdString() + ": cannot open for writing");
    write(out);
    out.flush();
    if (!out)
        throw std::runtime_error(path.toStdString() + ": write failed (disk full?)");
}

} // namespace

ReportFiles writeReport(const Document& document, size_t deviceIndex, int64_t event, const QString& directory)
{
    if (deviceIndex >= document.devices.size())
        throw std::runtime_error(document.path + ": has no device index " + std::to_string(deviceIndex));
    QDir dir(directory);
    if (!dir.mkpath(QStringLiteral(".")))
        throw std::runtime_error(directory.toStdString() + ": cannot create the directory");
    ReportFiles files;
    files.png = dir.filePath(QStringLiteral("peak_report.png"));
    files.peakCsv = dir.filePath(QStringLiteral("peak_report.csv"));
    files.timelineCsv = dir.filePath(QStringLiteral("timeline.csv"));
    files.json = dir.filePath(QStringLiteral("report.json"));

    const Attribution& a = *document.attribution;
    const PointReport at = buildPointReport(a, deviceIndex, event);
    writeFile(files.peakCsv, [&](std::ostream& out) { writePeakReportCsv(out, at, *document.frames); });
    writeFile(files.timelineCsv, [&](std::ostream& out) { writeTimelineCsv(out, a, deviceIndex); });
    writeFile(files.json, [&](std::ostream& out) { out << reportJson(a, at, *document.frames, document.diagnosis.get()); });
    ReportChart chart(document, deviceIndex, at);
    if (!chart.savePng(files.png))
        throw std::runtime_error(files.png.toStdString() + ": cannot write the PNG");
    return files;
}

} // namespace memscope
