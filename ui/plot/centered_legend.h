#pragma once

class QCustomPlot;
class QCPLayoutGrid;

namespace memscope {

// Puts the plot's legend in one horizontal row of `grid`, at `row`, centred and only as
// wide as its items (a bare legend cell would spread them over the whole width).
void placeCenteredLegend(QCustomPlot* plot, QCPLayoutGrid* grid, int row);

} // namespace memscope
