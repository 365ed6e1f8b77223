#pragma once

#include <QObject>
#include <QPointer>

class QCustomPlot;

namespace memscope {

// Queues a plot's replot, or holds it while the plot is hidden (a detail tab not shown, a
// snapshot tab in the background) and replots when it is shown: a hidden view at 10M events
// would otherwise render on every pan of the view beside it, and at first paint.
class ReplotGate : public QObject {
    Q_OBJECT
public:
    explicit ReplotGate(QCustomPlot* plot);

    void request();
    bool pending() const { return m_pending; }

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    QPointer<QCustomPlot> m_plot;
    bool m_pending = false;
};

} // namespace memscope
