#pragma once

#include "query/point_report.h"
#include "ui/document/document.h"

#include <QString>

namespace memscope {

struct ReportFiles {
    QString png; // peak_report.png
    QString peakCsv; // peak_report.csv
    QString timelineCsv; // timeline.csv
    QString json; // report.json
    QString flameJson; // flame.json
    QString flameSvg; // flame.svg
};

// Writes the report of one device at one event (-1 .. events-1; the global peak for
// `memscope report` unless --at says otherwise) into `directory`, creating it. The GUI's
// File > Export Report and the headless command both call this. Throws std::runtime_error
// with a one-line message naming the file that could not be written.
// The CSVs and the JSON come from core/io/report_files.h; the PNG from writeReportPng.
ReportFiles writeReport(const Document& document, size_t deviceIndex, int64_t event, const QString& directory);

// peak_report.png alone (the chart of `at`) into an existing `directory`; the GUI build's
// part of `memscope report`. Throws std::runtime_error naming the file.
QString writeReportPng(const Document& document, const PointReport& at, const QString& directory);

} // namespace memscope
