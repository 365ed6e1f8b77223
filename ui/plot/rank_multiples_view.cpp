#include "ui/plot/rank_multiples_view.h"

#include "ui/plot/byte_axis_ticker.h"

#include <qcustomplot.h>

#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <limits>

namespace memscope {

RankMultiplesView::RankMultiplesView(QWidget* parent) : QWidget(parent), m_plot(new QCustomPlot(this))
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_plot);
    m_plot->plotLayout()->clear();
    connect(m_plot, &QCustomPlot::mousePress, this, [this](QMouseEvent* e) {
        const QPointF at = e->position();
        for (size_t k = 0; k < m_shown.size(); ++k) {
            auto* rect = qobject_cast<QCPAxisRect*>(m_plot->plotLayout()->elementAt(static_cast<int>(k)));
            if (rect && rect->outerRect().contains(at.toPoint())) {
                emit rankActivated(static_cast<int>(m_shown[k]));
                return;
            }
        }
    });
}

void RankMultiplesView::setRankSet(std::shared_ptr<const RankSet> set)
{
    m_set = std::move(set);
    m_shown.clear();
    if (m_set && m_set->size()) {
        std::vector<size_t> order;
        for (size_t i = 0; i < m_set->size(); ++i)
            if (m_set->ranks()[i].ok())
                order.push_back(i);
        const size_t focus = m_set->focusRank();
        std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
            if ((a == focus) != (b == focus))
                return a == focus;
            return m_set->ranks()[a].summary.peakRequested > m_set->ranks()[b].summary.peakRequested;
        });
        order.resize(std::min<size_t>(order.size(), kMaxPlots));
        // Shown in rank order, the focus rank among them.
        std::sort(order.begin(), order.end());
        m_shown = order;
        m_jobStartUs = std::numeric_limits<int64_t>::max();
        for (size_t i : m_shown)
            m_jobStartUs = std::min(m_jobStartUs, m_set->ranks()[i].summary.startUs);
    }
    rebuild();
}

void RankMultiplesView::setAlignment(Alignment alignment)
{
    if (m_alignment == alignment)
        return;
    m_alignment = alignment;
    rebuild();
}

double RankMultiplesView::xOf(const RankSummary& s, int64_t timeUs) const
{
    if (m_alignment == Alignment::Iteration)
        return iterationPosition(s, timeUs);
    return static_cast<double>(timeUs - m_jobStartUs) / 1e6;
}

int RankMultiplesView::pointCount(size_t k) const
{
    auto* rect = qobject_cast<QCPAxisRect*>(m_plot->plotLayout()->elementAt(static_cast<int>(k)));
    if (!rect || rect->graphs().isEmpty())
        return 0;
    return rect->graphs().front()->data()->size();
}

void RankMultiplesView::resizeEvent(QResizeEvent* event)
{
    QWidget::resizeEvent(event);
    if (width() != m_builtWidth)
        rebuild();
}

void RankMultiplesView::rebuild()
{
    m_builtWidth = width();
    m_plot->clearGraphs();
    m_plot->plotLayout()->clear();
    if (!m_set || m_shown.empty()) {
        m_plot->replot();
        return;
    }
    const int n = static_cast<int>(m_shown.size());
    const int columns = n <= 2 ? 1 : n <= 8 ? 2 : 4;
    const int plotWidth = std::max(16, m_plot->width() / columns - 60);
    double xMin = std::numeric_limits<double>::max(), xMax = std::numeric_limits<double>::lowest();
    int64_t yMax = 1;
    for (size_t i : m_shown) {
        const RankSummary& s = m_set->ranks()[i].summary;
        if (s.timeline.empty())
            continue;
        xMin = std::min(xMin, xOf(s, s.timeline.front().timeUs));
        xMax = std::max(xMax, xOf(s, s.endUs));
        yMax = std::max(yMax, s.peakRequested);
    }
    if (!(xMax > xMin))
        xMax = xMin + 1;
    const auto ticker = QSharedPointer<ByteAxisTicker>::create();
    for (int k = 0; k < n; ++k) {
        const RankEntry& e = m_set->ranks()[m_shown[static_cast<size_t>(k)]];
        const RankSummary& s = e.summary;
        auto* rect = new QCPAxisRect(m_plot);
        m_plot->plotLayout()->addElement(k / columns, k % columns, rect);
        rect->axis(QCPAxis::atLeft)->setTicker(ticker);
        rect->axis(QCPAxis::atLeft)->setRange(0, static_cast<double>(yMax) * 1.05);
        rect->axis(QCPAxis::atBottom)->setRange(xMin, xMax);
        rect->axis(QCPAxis::atLeft)->setTickLabelFont(font());
        rect->axis(QCPAxis::atBottom)->setTickLabelFont(font());
        QString title = tr("rank %1").arg(s.rank);
        if (s.oom)
            title += tr(" · OOM");
        if (m_set->focusRank() == m_shown[static_cast<size_t>(k)])
            title += tr(" · shown first");
        rect->axis(QCPAxis::atTop)->setVisible(true);
        rect->axis(QCPAxis::atTop)->setTicks(false);
        rect->axis(QCPAxis::atTop)->setTickLabels(false);
        rect->axis(QCPAxis::atTop)->setLabel(title);

        // One min/max column per pixel: the summary's columns that fall in each pixel merged.
        QVector<QCPGraphData> high, low;
        int64_t pixel = std::numeric_limits<int64_t>::min();
        for (const RankTimelinePoint& p : s.timeline) {
            const double x = xOf(s, p.timeUs);
            const auto px = static_cast<int64_t>(std::floor((x - xMin) / (xMax - xMin) * plotWidth));
            if (px == pixel && !high.isEmpty()) {
                high.back().value = std::max(high.back().value, static_cast<double>(p.high));
                low.back().value = std::min(low.back().value, static_cast<double>(p.low));
                continue;
            }
            pixel = px;
            high.push_back({x, static_cast<double>(p.high)});
            low.push_back({x, static_cast<double>(p.low)});
        }
        const QColor colour = s.oom ? QColor(0xc6, 0x28, 0x28) : palette().color(QPalette::Highlight);
        QCPGraph* top = m_plot->addGraph(rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft));
        QCPGraph* bottom = m_plot->addGraph(rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft));
        top->data()->set(high, true);
        bottom->data()->set(low, true);
        top->setLineStyle(QCPGraph::lsStepLeft);
        bottom->setLineStyle(QCPGraph::lsStepLeft);
        top->setPen(QPen(colour, 1));
        bottom->setPen(QPen(colour, 1));
        QColor fill = colour;
        fill.setAlpha(90);
        top->setBrush(fill);
        top->setChannelFillGraph(bottom);
    }
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

} // namespace memscope
