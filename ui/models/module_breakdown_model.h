#pragma once

#include "query/module_breakdown.h"

#include <QAbstractTableModel>

namespace memscope {

// The bytes live at one point by nn.Module path (core/query's moduleBreakdown at one depth)
// as table rows, most bytes first, then a total row. ValueRole gives each column's raw value
// (the share as 0..1 and ColorRole its category's colour, for ShareBarDelegate); the module
// is shortened for the cell and whole in its tooltip.
class ModuleBreakdownModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { ModuleColumn, Bytes, Share, Count, CategoryColumn, ColumnCount };
    static constexpr int ValueRole = Qt::UserRole;
    static constexpr int ColorRole = Qt::UserRole + 1;

    explicit ModuleBreakdownModel(QObject* parent = nullptr);
    void setBreakdown(ModuleBreakdown breakdown, bool attributed);
    void clear();
    const ModuleBreakdown& breakdown() const { return m_breakdown; }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

private:
    ModuleBreakdown m_breakdown;
    bool m_attributed = false;
    std::vector<QString> m_cells;
};

} // namespace memscope
