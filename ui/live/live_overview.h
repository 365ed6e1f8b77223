#pragma once

#include <QWidget>

#include <memory>

namespace memscope {

struct LiveView;

/*
 * The whole live run at a glance, redrawn on every update: per pixel column, the highest
 * requested bytes over the events that column covers (filled) and the highest reserved bytes
 * (a line), read from the incremental model's pyramids (GrowingPyramid::View
 * queries: O(width · log events) a paint, whatever the run's length). The categories come
 * with the slower full analysis, in the tab below.
 */
class LiveOverview : public QWidget {
    Q_OBJECT
public:
    explicit LiveOverview(QWidget* parent = nullptr);

    void setView(std::shared_ptr<const LiveView> view, int device);
    QSize sizeHint() const override { return {600, 90}; }
    // The columns drawn by the last paint (tests).
    int columnsDrawn() const { return m_columns; }
    int device() const { return m_device; } // the CUDA ordinal drawn

protected:
    void paintEvent(QPaintEvent* event) override;

private:
    std::shared_ptr<const LiveView> m_view;
    int m_device = 0;
    int m_columns = 0;
};

} // namespace memscope
