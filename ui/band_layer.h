#pragma once

#include "band_lod.h"

#include <QColor>
#include <QPointer>
#include <QString>
#include <qcustomplot.h>

#include <vector>

namespace memscope {

// Shaded x ranges drawn inside one axis rect, in rows (lanes) or as full-height bands or
// boundary lines. Ranges are drawn per pixel column (BandLod: a column shows the range that
// covers most of it, runs of equal columns are one rectangle), boundary lines at most one
// every few pixels, labels where they fit: the painter gets O(pixels) primitives a frame
// however many ranges there are. Tooltips are the owner's, made on hover from `source`/`tag`.
class BandLayer : public QCPLayerable {
    Q_OBJECT
public:
    enum class Style { Lanes, FullHeight, Lines };
    struct Band {
        double x0 = 0;
        double x1 = 0;
        int row = 0;
        QColor color;
        QString label;
        int64_t firstEvent = -1;
        int64_t lastEvent = -1;
        int64_t source = -1; // the owner's index of what the band shows (an iteration, an annotation)
        int tag = 0;         // the owner's kind of band (a phase)
    };

    BandLayer(QCustomPlot* plot, QCPAxisRect* rect, Style style, int rows = 1);

    // Sorted by row, then x0 (stable).
    void setBands(std::vector<Band> bands);
    const std::vector<Band>& bands() const { return m_bands; }
    void setTextColor(const QColor& c) { m_text = c; }
    void setFont(const QFont& f) { m_font = f; }
    // The band under a pixel, or nullptr.
    const Band* bandAt(const QPointF& pos) const;
    // The band each pixel column of a row shows over [lower, upper] (an index into bands(), or -1).
    std::vector<int64_t> columnBands(int row, double lower, double upper, int columns) const;
    int primitivesDrawn() const { return m_primitives; } // rectangles, lines and labels of the last draw

protected:
    void applyDefaultAntialiasingHint(QCPPainter* painter) const override;
    void draw(QCPPainter* painter) override;
    QRect clipRect() const override;

private:
    QRectF rowRect(int row, double px0, double px1) const;
    void drawLines(QCPPainter* painter);

    QPointer<QCPAxisRect> m_rect;
    Style m_style;
    int m_rows;
    std::vector<Band> m_bands;
    std::vector<BandLod::Input> m_lod;  // per band, same order
    std::vector<double> m_maxX1;        // running max of x1 within each row
    std::vector<size_t> m_rowBegin;     // bands of row r: [m_rowBegin[r], m_rowBegin[r + 1])
    int m_primitives = 0;
    QColor m_text = Qt::black;
    QFont m_font;
};

} // namespace memscope
