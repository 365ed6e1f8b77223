#pragma once

#include <string>
#include <vector>

namespace memscope {

// `memscope report FILE [--device N] [--at peak|TIME] --out DIR`: writes peak_report.png,
// peak_report.csv, timeline.csv and report.json with the GUI's export code. Needs no
// display: without QT_QPA_PLATFORM it renders on Qt's offscreen platform.
int runReport(const std::vector<std::string>& args);

} // namespace memscope
