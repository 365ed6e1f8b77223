#pragma once

#include <QColor>
#include <QPointer>
#include <QString>
#include <qcustomplot.h>

#include <vector>

namespace memscope {

// Shaded x ranges drawn inside one axis rect, in rows (lanes) or as full-height bands or
// boundary lines. Only what is visible is drawn and labels appear where they fit, so
// thousands of ranges cost nothing when zoomed in and stay legible when zoomed out.
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
        QString tooltip;
        int64_t firstEvent = -1;
        int64_t lastEvent = -1;
    };

    BandLayer(QCustomPlot* plot, QCPAxisRect* rect, Style style, int rows = 1);

    void setBands(std::vector<Band> bands);
    const std::vector<Band>& bands() const { return m_bands; }
    void setTextColor(const QColor& c) { m_text = c; }
    void setFont(const QFont& f) { m_font = f; }
    // The band under a pixel, or nullptr.
    const Band* bandAt(const QPointF& pos) const;

protected:
    void applyDefaultAntialiasingHint(QCPPainter* painter) const override;
    void draw(QCPPainter* painter) override;
    QRect clipRect() const override;

private:
    QRectF rowRect(int row, double px0, double px1) const;

    QPointer<QCPAxisRect> m_rect;
    Style m_style;
    int m_rows;
    std::vector<Band> m_bands;
    QColor m_text = Qt::black;
    QFont m_font;
};

} // namespace memscope
