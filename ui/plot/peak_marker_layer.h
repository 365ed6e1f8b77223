#pragma once

#include <QColor>
#include <QPixmap>
#include <QPointer>
#include <qcustomplot.h>

#include <vector>

namespace memscope {

/*
 * Many identical circle markers (each iteration's peak) in one axis rect. QCPItemTracer
 * strokes an antialiased ellipse per marker, ~40 µs each: thousands of iterations cost tens
 * of milliseconds a frame. Here the circle is rendered once into a sprite and copied to
 * each marker's pixel; markers landing on a pixel already drawn are skipped (the topmost,
 * the last, is kept), so a frame draws at most one sprite per visible pixel position.
 * Vector exports get real ellipses.
 */
class PeakMarkerLayer : public QCPLayerable {
    Q_OBJECT
public:
    PeakMarkerLayer(QCustomPlot* plot, QCPAxisRect* rect);

    void setPoints(std::vector<QPointF> points); // (x, bytes)
    const std::vector<QPointF>& points() const { return m_points; }
    void setStyle(double size, const QPen& pen, const QBrush& brush);
    int drawnLastFrame() const { return m_drawn; }

protected:
    void applyDefaultAntialiasingHint(QCPPainter* painter) const override;
    void draw(QCPPainter* painter) override;
    QRect clipRect() const override;

private:
    QPointer<QCPAxisRect> m_rect;
    std::vector<QPointF> m_points;
    double m_size = 7;
    QPen m_pen;
    QBrush m_brush;
    QPixmap m_sprite;
    double m_spriteDpr = 0;
    int m_drawn = 0;
};

} // namespace memscope
