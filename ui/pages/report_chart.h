#pragma once

#include "ui/document/document.h"
#include "query/point_report.h"

#include <QString>
#include <QStringList>

#include <memory>

class QCustomPlot;

namespace memscope {

class TimelinePlotter;

/*
 * peak_report.png: a title with the file name and the peak, the category timeline of the
 * whole trace with the peak (and the reported point, when it is not the peak) marked, and
 * a bar chart of what the reported point is made of, and under them the device's findings
 * (core/diagnose), most severe first. Drawn by an offscreen QCustomPlot,
 * so it needs no display; the GUI's export and `memscope report` both use it.
 */
class ReportChart {
public:
    ReportChart(const Document& document, size_t deviceIndex, const PointReport& at);
    ~ReportChart();

    bool savePng(const QString& path, int width = 1600, int height = 900);
    QCustomPlot* plot() const { return m_plot.get(); }
    QString title() const { return m_title; }
    QStringList findingLines() const { return m_findings; } // as printed under the charts

private:
    std::unique_ptr<QCustomPlot> m_plot;
    std::unique_ptr<TimelinePlotter> m_plotter;
    QString m_title;
    QStringList m_findings;
};

} // namespace memscope
