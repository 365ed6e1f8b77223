#pragma once

namespace memscope {

// Gives `memscope report` its peak_report.png: the GUI's report chart, drawn on Qt's
// offscreen platform when no QApplication runs (no display needed).
void installReportPngWriter();

} // namespace memscope
