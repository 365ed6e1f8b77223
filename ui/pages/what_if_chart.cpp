#include "ui/pages/what_if_chart.h"

#include "ui/plot/byte_axis_ticker.h"
#include "ui/plot/replot_gate.h"
#include "ui/style/plot_theme.h"
#include "ui/style/text_format.h"

#include <QEvent>
#include <QVBoxLayout>

#include <qcustomplot.h>

#include <cmath>
#include <limits>

namespace memscope {

WhatIfChart::WhatIfChart(QWidget* parent) : QWidget(parent), m_plot(new QCustomPlot(this)), m_gate(new ReplotGate(m_plot))
{
    m_plot->setObjectName(QStringLiteral("whatIfPlot"));
    m_plot->setMinimumHeight(150);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_plot);
    // the legend in a column right of the axis rect, so that no entry is cut at 1000 px
    // (its rows at their height at the top, a spacer below)
    m_plot->axisRect()->insetLayout()->take(m_plot->legend);
    auto* side = new QCPLayoutGrid;
    m_plot->plotLayout()->addElement(0, 1, side);
    m_plot->plotLayout()->setColumnStretchFactor(1, 0.001);
    side->addElement(0, 0, m_plot->legend);
    side->addElement(1, 0, new QCPLayoutElement(m_plot));
    side->setRowStretchFactor(0, 0.001);
    side->setRowStretchFactor(1, 1);
    side->setMargins(QMargins(0, 6, 0, 0));
    m_plot->legend->setFillOrder(QCPLayoutGrid::foRowsFirst);
    m_plot->legend->setRowSpacing(-2);
    m_plot->legend->setMargins(QMargins(4, 2, 4, 2));
    m_plot->yAxis->setTicker(QSharedPointer<ByteAxisTicker>(new ByteAxisTicker));
    m_plot->yAxis->setLabel(tr("GPU memory"));
    m_plot->xAxis->setLabel(tr("Recorded event"));
    m_plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    m_plot->axisRect()->setRangeDrag(Qt::Horizontal);
    m_plot->axisRect()->setRangeZoom(Qt::Horizontal);
    rebuild();
}

void WhatIfChart::setCurve(std::shared_ptr<const WhatIfCurve> curve, int64_t capacity, std::optional<int64_t> oomEvent)
{
    m_curve = std::move(curve);
    m_capacity = capacity;
    m_oom = oomEvent;
    rebuild();
}

void WhatIfChart::clear()
{
    m_curve.reset();
    m_capacity = 0;
    m_oom.reset();
    rebuild();
}

void WhatIfChart::changeEvent(QEvent* event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange)
        rebuild();
}

void WhatIfChart::resizeEvent(QResizeEvent* event)
{
    QWidget::resizeEvent(event);
    const int ticks = std::clamp(m_plot->height() / 50, 2, 5);
    if (m_plot->yAxis->ticker()->tickCount() != ticks) {
        m_plot->yAxis->ticker()->setTickCount(ticks);
        m_gate->request();
    }
}

void WhatIfChart::rebuild()
{
    const PlotTheme theme = PlotTheme::current();
    m_plot->clearGraphs();
    m_plot->clearItems();
    theme.applyTo(m_plot);
    theme.applyTo(m_plot->legend);
    m_plot->legend->setFont(theme.smallFont);
    // fewer ticks on a low chart (a small window's detail tab)
    m_plot->yAxis->ticker()->setTickCount(std::clamp(m_plot->height() / 50, 2, 5));
    m_plot->legend->setVisible(m_curve != nullptr);
    if (!m_curve || m_curve->x.empty()) {
        m_plot->xAxis->setRange(0, 1);
        m_plot->yAxis->setRange(0, 1);
        m_gate->request();
        return;
    }
    const WhatIfCurve& c = *m_curve;
    const int n = static_cast<int>(c.x.size());
    QVector<double> x(n + 1);
    for (int k = 0; k < n; ++k)
        x[k] = c.x[static_cast<size_t>(k)];
    x[n] = static_cast<double>(c.eventCount); // the last column's right edge
    const double nan = std::numeric_limits<double>::quiet_NaN();
    auto series = [&](auto value) {
        QVector<double> y(n + 1);
        for (int k = 0; k < n; ++k)
            y[k] = value(static_cast<size_t>(k));
        y[n] = y[n - 1];
        return y;
    };
    // stacked predicted categories, each filled down to the one below
    std::array<int64_t, kCategoryCount> largest{};
    for (size_t cat = 0; cat < kCategoryCount; ++cat)
        for (int64_t v : c.byCategory[cat])
            largest[cat] = std::max(largest[cat], v);
    std::vector<int64_t> below(static_cast<size_t>(n), 0);
    QCPGraph* previous = nullptr;
    for (Category cat : kAllCategories) {
        const size_t ci = static_cast<size_t>(cat);
        if (largest[ci] == 0)
            continue;
        for (int k = 0; k < n; ++k)
            below[static_cast<size_t>(k)] += c.byCategory[ci][static_cast<size_t>(k)];
        QCPGraph* g = m_plot->addGraph();
        g->setLineStyle(QCPGraph::lsStepLeft);
        g->setData(x, series([&](size_t k) { return c.predicted[k] ? static_cast<double>(below[k]) : nan; }), true);
        QColor fill = categoryQColor(cat);
        g->setPen(QPen(fill.darker(115), 1));
        fill.setAlpha(200);
        g->setBrush(fill);
        if (previous)
            g->setChannelFillGraph(previous);
        g->setName(categoryText(cat));
        previous = g;
    }
    auto line = [&](const QString& name, const QColor& color, Qt::PenStyle style, double width, auto value) {
        QCPGraph* g = m_plot->addGraph();
        g->setLineStyle(QCPGraph::lsStepLeft);
        g->setData(x, series(value), true);
        QPen pen(color, width, style);
        g->setPen(pen);
        g->setName(name);
        return g;
    };
    const int64_t recordedReserved = *std::max_element(c.recordedReserved.begin(), c.recordedReserved.end());
    line(tr("Recorded requested"), theme.foreground, Qt::SolidLine, 1.5,
         [&](size_t k) { return static_cast<double>(c.recordedRequested[k]); });
    line(tr("Recorded reserved"), theme.muted, Qt::DashLine, 1.2,
         [&](size_t k) { return static_cast<double>(c.recordedReserved[k]); });
    line(tr("Predicted reserved"), theme.reserved, Qt::SolidLine, 2,
         [&](size_t k) { return c.predicted[k] ? static_cast<double>(c.reserved[k]) : nan; });

    double top = static_cast<double>(std::max({recordedReserved, c.reservedPeak(), c.requestedPeak()}));
    const QColor alarm(200, 30, 30);
    if (m_capacity > 0) {
        top = std::max(top, static_cast<double>(m_capacity));
        auto* cap = new QCPItemStraightLine(m_plot);
        cap->point1->setCoords(0, static_cast<double>(m_capacity));
        cap->point2->setCoords(1, static_cast<double>(m_capacity));
        cap->setPen(QPen(alarm, 1.5, Qt::DashDotLine));
        auto* label = new QCPItemText(m_plot);
        label->position->setTypeX(QCPItemPosition::ptAxisRectRatio);
        label->position->setTypeY(QCPItemPosition::ptPlotCoords);
        // at the left, where a run's curves are lowest (its reserved line only grows)
        label->position->setCoords(0.005, static_cast<double>(m_capacity));
        label->setPositionAlignment(Qt::AlignLeft | Qt::AlignBottom);
        label->setText(tr("capacity %1").arg(bytesText(m_capacity)));
        label->setColor(alarm);
        label->setFont(theme.smallFont);
        label->setClipToAxisRect(true);
    }
    if (m_oom) {
        const double ox = static_cast<double>(*m_oom);
        auto* v = new QCPItemStraightLine(m_plot);
        v->point1->setCoords(ox, 0);
        v->point2->setCoords(ox, 1);
        v->setPen(QPen(alarm, 2));
        auto* label = new QCPItemText(m_plot);
        label->position->setTypeX(QCPItemPosition::ptPlotCoords);
        label->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
        label->position->setCoords(ox, 0.02);
        const bool right = ox > static_cast<double>(c.eventCount) * 0.7;
        label->setPositionAlignment((right ? Qt::AlignRight : Qt::AlignLeft) | Qt::AlignTop);
        label->setPadding(QMargins(4, 0, 4, 0));
        label->setText(tr("out of memory"));
        label->setColor(alarm);
        label->setFont(theme.boldFont);
        label->setClipToAxisRect(true);
    }
    m_plot->xAxis->setRange(0, static_cast<double>(c.eventCount));
    m_plot->yAxis->setRange(0, top > 0 ? top * 1.12 : 1);
    m_gate->request();
}

} // namespace memscope
