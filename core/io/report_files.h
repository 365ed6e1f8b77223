#pragma once

#include "attribute/attribution.h"
#include "diagnose/diagnostic.h"
#include "query/point_report.h"
#include "snapshot/frame_classifier.h"

#include <string>

namespace memscope {

// The report's text files, written into `directory` (created when missing):
// peak_report.csv (writePeakReportCsv), timeline.csv (writeTimelineCsv), report.json
// (reportJson) and the flame graph of what is active there, flame.json and flame.svg
// (flame_writer.h, every frame), all at the point `at`. The GUI's File > Export Report and `memscope report`
// both write them here; the GUI build adds peak_report.png. Throws std::runtime_error with
// a one-line message naming the file or directory that could not be written.
struct ReportDataFiles {
    std::string peakCsv;
    std::string timelineCsv;
    std::string json;
    std::string flameJson;
    std::string flameSvg;
};

ReportDataFiles writeReportData(const Attribution& attribution, const PointReport& at, const FrameClassifier& frames,
                                const Diagnostics* diagnostics, const std::string& directory);

} // namespace memscope
