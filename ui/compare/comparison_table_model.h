#pragma once

#include "compare/comparison.h"

#include <QAbstractTableModel>
#include <QString>

#include <memory>
#include <optional>
#include <vector>

namespace memscope {

/*
 * The comparison tab's table of deltas, one row per figure: the global peak, each category at
 * the peak, each phase's peak, then the call sites whose bytes at the peak changed most.
 * Columns: what, op, module, A, B, B − A, change. Op and module name a call site's
 * operation and nn.Module path (empty on the other rows), so the sites of one user line
 * (every activation of a transformers model comes from the loop's `model(x)`) read apart.
 * The byte columns show formatted text and give the bytes themselves under BytesRole (empty
 * where a run has no such figure).
 */
class ComparisonTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { What, Op, Module, A, B, Delta, Change, ColumnCount };
    static constexpr int BytesRole = Qt::UserRole + 1;
    static constexpr size_t kCallSiteRows = 25;

    explicit ComparisonTableModel(QObject* parent = nullptr);

    void setComparison(std::shared_ptr<const Comparison> comparison);
    const Comparison* comparison() const { return m_comparison.get(); }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    struct Row {
        QString what;
        std::optional<qint64> a, b;
        QString change;
        QString tooltip;
        QString op = {};
        QString module = {}; // shortened for the cell (moduleCellText)
        QString moduleTip = {};
    };
    std::shared_ptr<const Comparison> m_comparison;
    std::vector<Row> m_rows;
};

} // namespace memscope
