#include "ui/pages/report_exporter.h"

#include "query/point_report.h"
#include "io/report_files.h"
#include "ui/pages/report_chart.h"

#include <QDir>

#include <stdexcept>

namespace memscope {

ReportFiles writeReport(const Document& document, size_t deviceIndex, int64_t event, const QString& directory)
{
    if (deviceIndex >= document.devices.size())
        throw std::runtime_error(document.path + ": has no device index " + std::to_string(deviceIndex));
    const PointReport at = buildPointReport(*document.attribution(), deviceIndex, event);
    const ReportDataFiles data = writeReportData(*document.attribution(), at, *document.frames(), document.diagnosis().get(),
                                                 directory.toStdString());
    ReportFiles files;
    files.peakCsv = QString::fromStdString(data.peakCsv);
    files.timelineCsv = QString::fromStdString(data.timelineCsv);
    files.json = QString::fromStdString(data.json);
    files.flameJson = QString::fromStdString(data.flameJson);
    files.flameSvg = QString::fromStdString(data.flameSvg);
    files.png = writeReportPng(document, at, directory);
    return files;
}

QString writeReportPng(const Document& document, const PointReport& at, const QString& directory)
{
    const QString png = QDir(directory).filePath(QStringLiteral("peak_report.png"));
    ReportChart chart(document, at.deviceIndex, at);
    if (!chart.savePng(png))
        throw std::runtime_error(png.toStdString() + ": cannot write the PNG");
    return png;
}

} // namespace memscope
