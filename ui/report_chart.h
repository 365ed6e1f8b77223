#pragma once

#include "document.h"
#include "io/point_report.h"

#include <QString>

#include <memory>

class QCustomPlot;

namespace memscope {

class TimelinePlotter;

/*
 * peak_report.png: a title with the file name and the peak, the category timeline of the
 * whole trace with the peak (and the reported point, when it is not the peak) marked, and
 * a bar chart of what the reported point is made of. Drawn by an offscreen QCustomPlot,
 * so it needs no display; the GUI's export and `memscope report` both use it.
 */
class ReportChart {
public:
    ReportChart(const Document& document, size_t deviceIndex, const PointReport& at);
    ~ReportChart();

    bool savePng(const QString& path, int width = 1600, int height = 900);
    QCustomPlot* plot() const { return m_plot.get(); }
    QString title() const { return m_title; }

private:
    std::unique_ptr<QCustomPlot> m_plot;
    std::unique_ptr<TimelinePlotter> m_plotter;
    QString m_title;
};

} // namespace memscope
