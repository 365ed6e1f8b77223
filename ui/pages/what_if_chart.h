#pragma once

#include "allocator/what_if_curve.h"

#include <QWidget>

#include <memory>
#include <optional>

class QCustomPlot;

namespace memscope {

class ReplotGate;

// The what-if panel's chart: the predicted requested bytes stacked by category over the
// recorded requested line (and the recorded reserved, dashed), the predicted reserved line,
// the capacity line and, when the prediction runs out of it, a line at the out-of-memory's
// event. The x axis is the recorded event index (allocator/what_if_curve.h).
class WhatIfChart : public QWidget {
    Q_OBJECT
public:
    explicit WhatIfChart(QWidget* parent = nullptr);

    // capacity 0: none drawn; oomEvent: the recorded event the prediction failed at.
    void setCurve(std::shared_ptr<const WhatIfCurve> curve, int64_t capacity, std::optional<int64_t> oomEvent);
    void clear();
    const WhatIfCurve* curve() const { return m_curve.get(); }
    QCustomPlot* plot() const { return m_plot; }

protected:
    void changeEvent(QEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;

private:
    void rebuild();

    QCustomPlot* m_plot;
    ReplotGate* m_gate;
    std::shared_ptr<const WhatIfCurve> m_curve;
    int64_t m_capacity = 0;
    std::optional<int64_t> m_oom;
};

} // namespace memscope
