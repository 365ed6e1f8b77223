#pragma once

#include <QWidget>

#include <vector>

namespace memscope {

class FlameModel;

/*
 * The flame graph drawn as an icicle: the zoomed node (the root at first) across the whole
 * width on top, each frame's callees below it, widths ∝ weight, the frame's text elided inside.
 * User frames are warm, library frames cool, synthetic nodes (the op, "(no frames)") grey.
 * Hovering highlights a frame and its tooltip gives the frame, location, weight and share;
 * clicking a frame zooms into it and emits nodeClicked (the panel filters to it); clicking the
 * top row goes back up one level. Frames narrower than a pixel are left out (their weight
 * stays in their caller's width). The view asks for the height of the zoomed subtree's rows,
 * for a scroll area.
 */
class FlameView : public QWidget {
    Q_OBJECT
public:
    explicit FlameView(FlameModel* model, QWidget* parent = nullptr);

    void setZoomNode(int node); // 0: the root
    int zoomNode() const { return m_zoom; }
    void setMarkedNode(int node); // outlined (the filter's frame); -1: none
    int hoveredNode() const { return m_hover; }
    int nodeAt(const QPoint& pos) const; // -1: none
    QRectF nodeRect(int node) const; // empty when not drawn
    int drawnCount() const { return static_cast<int>(m_rects.size()); }
    int rowHeight() const;
    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

signals:
    void nodeClicked(int node);
    void zoomChanged(int node);

protected:
    void paintEvent(QPaintEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mouseReleaseEvent(QMouseEvent* event) override;
    void leaveEvent(QEvent* event) override;
    bool event(QEvent* event) override;

private:
    struct Item {
        QRectF rect;
        int node;
    };
    void relayout();
    QColor colorOf(int node) const;

    FlameModel* m_model;
    std::vector<Item> m_rects; // in drawing order
    int m_zoom = 0;
    int m_hover = -1;
    int m_marked = -1;
    int m_rows = 1;
};

} // namespace memscope
