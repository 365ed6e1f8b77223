#include "ui/style/plot_theme.h"

#include <QApplication>
#include <qcustomplot.h>

namespace memscope {

QColor categoryQColor(Category c) { return QColor::fromRgb(static_cast<QRgb>(categoryColor(c))); }

PlotTheme PlotTheme::fromPalette(const QPalette& palette, const QFont& font)
{
    PlotTheme t;
    t.background = palette.color(QPalette::Base);
    t.foreground = palette.color(QPalette::Text);
    t.dark = t.background.lightness() < 128;
    t.muted = t.dark ? QColor(170, 170, 170) : QColor(90, 90, 90);
    t.grid = t.dark ? QColor(255, 255, 255, 40) : QColor(0, 0, 0, 30);
    t.subGrid = t.dark ? QColor(255, 255, 255, 18) : QColor(0, 0, 0, 12);
    t.requested = t.dark ? QColor(240, 240, 240) : QColor(30, 30, 30);
    t.reserved = t.dark ? QColor(255, 120, 120) : QColor(200, 40, 40);
    t.peak = t.dark ? QColor(255, 90, 90) : QColor(200, 0, 0);
    t.accent = palette.color(QPalette::Highlight);
    t.labelBackground = t.background;
    t.labelBackground.setAlpha(225);
    t.font = font;
    t.smallFont = font;
    t.smallFont.setPointSizeF(std::max(7.0, font.pointSizeF() * 0.85));
    t.boldFont = font;
    t.boldFont.setBold(true);
    return t;
}

PlotTheme PlotTheme::current() { return fromPalette(QApplication::palette(), QApplication::font()); }

PlotTheme PlotTheme::light()
{
    QPalette p;
    p.setColor(QPalette::Base, Qt::white);
    p.setColor(QPalette::Text, QColor(20, 20, 20));
    p.setColor(QPalette::Highlight, QColor(0, 90, 200));
    QFont f = QApplication::font();
    f.setPointSizeF(10);
    return fromPalette(p, f);
}

void PlotTheme::applyTo(QCPAxisRect* rect) const
{
    for (QCPAxis* axis : rect->axes()) {
        axis->setBasePen(QPen(muted, 1));
        axis->setTickPen(QPen(muted, 1));
        axis->setSubTickPen(QPen(muted, 1));
        axis->setTickLabelColor(foreground);
        axis->setLabelColor(foreground);
        axis->setTickLabelFont(font);
        axis->setLabelFont(font);
        axis->grid()->setPen(QPen(grid, 1, Qt::SolidLine));
        axis->grid()->setSubGridPen(QPen(subGrid, 1, Qt::DotLine));
        axis->grid()->setZeroLinePen(Qt::NoPen);
    }
    rect->setBackground(QBrush(background));
}

void PlotTheme::applyTo(QCPLegend* legend) const
{
    legend->setBrush(QBrush(Qt::transparent));
    legend->setBorderPen(Qt::NoPen);
    legend->setTextColor(foreground);
    legend->setFont(font);
}

void PlotTheme::applyTo(QCustomPlot* plot) const
{
    plot->setBackground(QBrush(background));
    for (QCPAxisRect* rect : plot->axisRects())
        applyTo(rect);
    applyTo(plot->legend);
}

QColor PlotTheme::band(Phase phase) const
{
    switch (phase) {
    case Phase::Forward: return dark ? QColor(70, 130, 180) : QColor(140, 185, 225);
    case Phase::Backward: return dark ? QColor(170, 110, 60) : QColor(240, 190, 140);
    case Phase::OptimizerStep: return dark ? QColor(120, 150, 80) : QColor(175, 215, 140);
    case Phase::ZeroGrad: return dark ? QColor(120, 120, 120) : QColor(200, 200, 200);
    case Phase::Other: return dark ? QColor(80, 80, 80) : QColor(225, 225, 225);
    }
    return QColor(200, 200, 200);
}

QColor poolQColor(size_t k, bool dark)
{
    return QColor::fromHsv((285 + static_cast<int>(k % 9) * 40) % 360, 170, dark ? 230 : 150);
}

} // namespace memscope
