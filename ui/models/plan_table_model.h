#pragma once

#include "allocator/model_what_if.h"

#include <QAbstractTableModel>

#include <memory>
#include <vector>

namespace memscope {

// The what-if plan (ModelWhatIf::plan()) as table rows in the plan's own order (the ones that
// fit first, cheapest first): the changes, the predicted reserved peak, whether it fits the
// capacity, the compute cost and the largest batch that fits (in recorded batches, "3×", where
// the recording's batch was not named; its tooltip says so). SortRole gives each column's raw
// value.
class PlanTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Changes, ReservedPeak, Fits, Cost, MaxBatch, ColumnCount };
    static constexpr int SortRole = Qt::UserRole;

    explicit PlanTableModel(QObject* parent = nullptr);
    void setRows(std::shared_ptr<const std::vector<PlanRow>> rows, bool recordedBatches = false);
    const std::vector<PlanRow>* rows() const { return m_rows.get(); }
    const PlanRow* row(int r) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

    // "--checkpoint all --precision bf16 --set expandable_segments:True", "(as recorded)"
    static QString changesText(const PlanRow& r);

private:
    std::shared_ptr<const std::vector<PlanRow>> m_rows;
    bool m_recordedBatches = false;
};

} // namespace memscope
