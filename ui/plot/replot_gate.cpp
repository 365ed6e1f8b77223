#include "ui/plot/replot_gate.h"

#include <QEvent>
#include <qcustomplot.h>

namespace memscope {

ReplotGate::ReplotGate(QCustomPlot* plot) : QObject(plot), m_plot(plot)
{
    plot->installEventFilter(this);
    // A replot for any other reason (a resize on first show) covers the one held back.
    connect(plot, &QCustomPlot::afterReplot, this, [this] { m_pending = false; });
}

void ReplotGate::request()
{
    if (!m_plot)
        return;
    if (m_plot->isVisible()) {
        m_pending = false;
        m_plot->replot(QCustomPlot::rpQueuedReplot);
    } else {
        m_pending = true;
    }
}

bool ReplotGate::eventFilter(QObject* watched, QEvent* event)
{
    // Show comes before the first paint, so the plot is painted from fresh buffers.
    if (watched == m_plot && event->type() == QEvent::Show && m_pending) {
        m_pending = false;
        m_plot->replot(QCustomPlot::rpRefreshHint);
    }
    return QObject::eventFilter(watched, event);
}

} // namespace memscope
