#pragma once

#include "analysis/analysis.h"
#include "query/point_report.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace memscope {

inline constexpr char kReportUsage[] = "usage: memscope report FILE [--device N] [--at peak|TIME] --out DIR\n"
                                       "  TIME: a time_us value as in timeline.csv, or a time since the first event\n"
                                       "        with a unit: 1.5s, 350ms, 1200us";

// `memscope report FILE [--device N] [--at peak|TIME] --out DIR`: writes peak_report.csv,
// timeline.csv and report.json (core/io/report_files.h), and peak_report.png through the
// PNG writer the GUI build installs; without one it says the PNG needs the GUI build.
// Needs no display: the GUI build draws on Qt's offscreen platform.
int runReport(const std::vector<std::string>& args);

// Draws peak_report.png of `at` into `directory` and returns its path.
using ReportPngWriter = std::function<std::string(const std::shared_ptr<const Analysis>& analysis, const PointReport& at,
                                                  const std::string& directory)>;
void setReportPngWriter(ReportPngWriter writer);

} // namespace memscope
