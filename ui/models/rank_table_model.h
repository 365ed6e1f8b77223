#pragma once

#include "job/rank_set.h"

#include <QAbstractTableModel>

#include <memory>

namespace memscope {

// The ranks of a job (core/job's RankSet) as table rows: rank, device, requested peak, its
// phase and time, reserved peak, communication bytes at the peak, OOM, % above the mean, and a
// live job's rank state (streaming, lagging, dead, ended; RankEntry::live).
// SortRole gives each column's raw sort value; RankIndexRole the index into ranks().
class RankTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Rank, Device, Peak, PeakPhase, PeakTime, Reserved, Communication, Oom, AboveMean, Live, ColumnCount };
    static constexpr int SortRole = Qt::UserRole;
    static constexpr int RankIndexRole = Qt::UserRole + 1;

    explicit RankTableModel(QObject* parent = nullptr);
    void setRankSet(std::shared_ptr<const RankSet> set);
    const RankSet* rankSet() const { return m_set.get(); }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

private:
    std::shared_ptr<const RankSet> m_set;
};

} // namespace memscope
