#pragma once

#include "attribute/category.h"

#include <QColor>
#include <QFont>
#include <QPalette>

class QCustomPlot;
class QCPAxisRect;
class QCPLegend;

namespace memscope {

// Plot colours and fonts derived from the application palette, so the charts follow the
// system's light or dark theme. Category colours stay the same in both.
struct PlotTheme {
    bool dark = false;
    QColor background;
    QColor foreground;
    QColor muted; // secondary text
    QColor grid;
    QColor subGrid;
    QColor requested; // requested total line
    QColor reserved; // reserved line
    QColor peak; // global peak marker
    QColor accent; // selection, cursor
    QColor labelBackground;
    QFont font;
    QFont smallFont;
    QFont boldFont;

    static PlotTheme fromPalette(const QPalette& palette, const QFont& font);
    static PlotTheme current();
    static PlotTheme light(); // exports: always the light theme

    void applyTo(QCustomPlot* plot) const;
    void applyTo(QCPAxisRect* rect) const;
    void applyTo(QCPLegend* legend) const;
    QColor band(Phase phase) const;
};

QColor categoryQColor(Category c);
// The k-th private pool (CUDA graph / MemPool) of a device: purples no category uses.
QColor poolQColor(size_t k, bool dark);

} // namespace memscope
