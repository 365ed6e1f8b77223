#include "ui/models/plan_table_model.h"

#include "ui/style/text_format.h"

namespace memscope {

PlanTableModel::PlanTableModel(QObject* parent) : QAbstractTableModel(parent) { }

void PlanTableModel::setRows(std::shared_ptr<const std::vector<PlanRow>> rows, bool recordedBatches)
{
    beginResetModel();
    m_rows = std::move(rows);
    m_recordedBatches = recordedBatches;
    endResetModel();
}

const PlanRow* PlanTableModel::row(int r) const
{
    if (!m_rows || r < 0 || static_cast<size_t>(r) >= m_rows->size())
        return nullptr;
    return &(*m_rows)[static_cast<size_t>(r)];
}

int PlanTableModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() || !m_rows ? 0 : static_cast<int>(m_rows->size());
}

int PlanTableModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QString PlanTableModel::changesText(const PlanRow& r)
{
    std::string t = r.changes.describe();
    if (!r.settings.empty())
        t += (t.empty() ? "" : " ") + std::string("--set ") + r.settings;
    return t.empty() ? tr("(as recorded)") : QString::fromStdString(t);
}

QVariant PlanTableModel::data(const QModelIndex& index, int role) const
{
    const PlanRow* r = index.isValid() ? row(index.row()) : nullptr;
    if (!r)
        return {};
    const int col = index.column();
    if (role == Qt::DisplayRole) {
        switch (col) {
        case Changes: return changesText(*r);
        case ReservedPeak: return bytesText(r->reservedPeak);
        case Fits: return r->fits ? (r->tight ? tr("tight") : tr("fits")) : tr("OOM");
        case Cost: return QString::fromStdString(r->cost);
        case MaxBatch:
            if (!r->fits)
                return QStringLiteral("–");
            return m_recordedBatches ? tr("%1× (%2× safe)").arg(r->maxBatch).arg(r->safeBatch)
                                     : tr("%1 (%2 safe)").arg(r->maxBatch).arg(r->safeBatch);
        default: return {};
        }
    }
    if (role == SortRole) {
        switch (col) {
        case Changes: return changesText(*r);
        case ReservedPeak: return QVariant::fromValue<qlonglong>(r->reservedPeak);
        case Fits: return r->fits;
        case Cost: return r->computeCost;
        case MaxBatch: return QVariant::fromValue<qlonglong>(r->maxBatch);
        default: return {};
        }
    }
    if (role == Qt::TextAlignmentRole && (col == ReservedPeak || col == MaxBatch))
        return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
    if (role == Qt::ToolTipRole && col == Changes)
        return tr("Click to apply these changes to the controls and the chart");
    if (role == Qt::ToolTipRole && col == Fits && r->tight)
        return tr("Fits, but within %1% of the capacity: the what-if's reserved bytes are within that "
                  "on most measured runs, so the real run may not fit")
            .arg(qRound(kReservedMargin * 100));
    if (role == Qt::ToolTipRole && col == MaxBatch && r->fits)
        return tr("The largest batch that fits; the safe one leaves %1% of the capacity, the what-if's measured error%2")
            .arg(qRound(kReservedMargin * 100))
            .arg(m_recordedBatches ? tr(". In recorded batches: give the recorded batch to count samples") : QString());
    if (role == Qt::ToolTipRole && col == Cost)
        return QString::fromStdString(r->cost);
    return {};
}

QVariant PlanTableModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case Changes: return tr("Changes");
    case ReservedPeak: return tr("Reserved peak");
    case Fits: return tr("Fits");
    case Cost: return tr("Compute cost");
    case MaxBatch: return tr("Largest batch");
    default: return {};
    }
}

} // namespace memscope
