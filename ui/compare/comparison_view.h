#pragma once

#include "compare/comparison.h"

#include <QString>
#include <QStringList>
#include <QWidget>

#include <memory>

class QCustomPlot;
class QLabel;
class QTableView;

namespace memscope {

class ComparisonTableModel;

/*
 * A comparison tab: two runs on the normalised axis of iterations and phases (core/compare),
 * as small multiples sharing x: A's category areas, B's, and B − A per category with the
 * total; the peak of each run marked; under them the delta table. Panning or zooming one
 * plot moves the others.
 */
class ComparisonView : public QWidget {
    Q_OBJECT
public:
    explicit ComparisonView(std::shared_ptr<const Comparison> comparison, QWidget* parent = nullptr);

    const Comparison& comparison() const { return *m_comparison; }
    ComparisonTableModel* model() const { return m_model; }
    QCustomPlot* plot(int which) const { return m_plots[which]; } // 0: A, 1: B, 2: B − A
    QString title() const;

    // Writes comparison.png, comparison.csv (the delta table), comparison_curves.csv and
    // comparison.json into `directory`, creating it; returns the paths. Throws
    // std::runtime_error naming the file that could not be written.
    QStringList exportTo(const QString& directory);

private:
    void fillRunPlot(QCustomPlot* plot, size_t side);
    void fillDeltaPlot(QCustomPlot* plot);

    std::shared_ptr<const Comparison> m_comparison;
    ComparisonTableModel* m_model;
    QCustomPlot* m_plots[3] = {};
    QWidget* m_chart = nullptr;
    QTableView* m_table = nullptr;
};

} // namespace memscope
