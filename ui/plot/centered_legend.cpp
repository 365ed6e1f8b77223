#include "ui/plot/centered_legend.h"

#include <qcustomplot.h>

namespace memscope {

void placeCenteredLegend(QCustomPlot* plot, QCPLayoutGrid* grid, int row)
{
    auto* line = new QCPLayoutGrid;
    grid->addElement(row, 0, line);
    line->addElement(0, 0, new QCPLayoutElement(plot));
    line->addElement(0, 1, plot->legend);
    line->addElement(0, 2, new QCPLayoutElement(plot));
    line->setColumnStretchFactor(0, 1);
    line->setColumnStretchFactor(1, 0.0001);
    line->setColumnStretchFactor(2, 1);
    line->setMargins(QMargins(0, 0, 0, 0));
    plot->legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
}

} // namespace memscope
