#pragma once

#include "ui/document/band_set.h"

#include <QColor>
#include <QPointer>
#include <QString>
#include <qcustomplot.h>

#include <functional>
#include <memory>
#include <vector>

namespace memscope {

// Shaded x ranges drawn inside one axis rect, in rows (lanes) or as full-height bands or
// boundary lines. Ranges are drawn per pixel column (BandLod: a column shows the range that
// covers most of it, runs of equal columns are one rectangle), boundary lines at most one
// every few pixels, labels where they fit: the painter gets O(pixels) primitives a frame
// however many ranges there are. Colours come from the band's style, labels from the
// owner's labeler, tooltips from the owner on hover (`source`/`tag`).
class BandLayer : public QCPLayerable {
    Q_OBJECT
public:
    enum class Style { Lanes, FullHeight, Lines };
    using Band = memscope::Band;
    using Labeler = std::function<QString(const Band&)>;

    BandLayer(QCustomPlot* plot, QCPAxisRect* rect, Style style, int rows = 1);

    // A set shared with its owner (built off the GUI thread), or one made here from bands.
    void setBands(std::shared_ptr<const BandSet> bands);
    void setBands(std::vector<Band> bands);
    const std::vector<Band>& bands() const { return m_set->bands(); }
    // A band's colour is colors[style] (transparent past the end); its label, labeler(band).
    void setColors(std::vector<QColor> colors);
    void setRows(int rows); // lanes: how many rows share the rect (a set's own rows are clamped to it)
    int rows() const { return m_rows; }
    void setLabeler(Labeler labeler) { m_labeler = std::move(labeler); }
    // Pixel rectangles a line's label must not cover (the peak and range labels, the
    // iterations' peak labels and circles, the peak's line): a label that would is moved down below the
    // one it meets, and left out if it still meets one there (never drawn over them).
    using Obstacles = std::function<std::vector<QRectF>()>;
    void setLabelObstacles(Obstacles obstacles) { m_obstacles = std::move(obstacles); }
    void setTextColor(const QColor& c) { m_text = c; }
    void setFont(const QFont& f) { m_font = f; }
    // The band under a pixel, or nullptr.
    const Band* bandAt(const QPointF& pos) const;
    // The band each pixel column of a row shows over [lower, upper] (an index into bands(), or -1).
    std::vector<int64_t> columnBands(int row, double lower, double upper, int columns) const;
    int primitivesDrawn() const { return m_primitives; } // rectangles, lines and labels of the last draw
    const std::vector<QRectF>& labelsDrawn() const { return m_labelsDrawn; } // Lines: the last draw's label boxes

protected:
    void applyDefaultAntialiasingHint(QCPPainter* painter) const override;
    void draw(QCPPainter* painter) override;
    QRect clipRect() const override;

private:
    QRectF rowRect(int row, double px0, double px1) const;
    void drawLines(QCPPainter* painter);
    QColor colorOf(const Band& b) const;
    QString labelOf(const Band& b) const { return m_labeler ? m_labeler(b) : QString(); }

    QPointer<QCPAxisRect> m_rect;
    Style m_style;
    int m_rows;
    std::shared_ptr<const BandSet> m_set;
    std::vector<QColor> m_colors;
    Labeler m_labeler;
    Obstacles m_obstacles;
    int m_primitives = 0;
    std::vector<QRectF> m_labelsDrawn;
    QColor m_text = Qt::black;
    QFont m_font;
};

} // namespace memscope
