#include "ui/models/module_breakdown_model.h"

#include "ui/style/plot_theme.h"
#include "ui/style/text_format.h"

#include <QFont>

namespace memscope {

ModuleBreakdownModel::ModuleBreakdownModel(QObject* parent) : QAbstractTableModel(parent) { }

void ModuleBreakdownModel::setBreakdown(ModuleBreakdown breakdown, bool attributed)
{
    beginResetModel();
    m_breakdown = std::move(breakdown);
    m_attributed = attributed;
    m_cells.clear();
    m_cells.reserve(m_breakdown.rows.size());
    for (const ModuleShare& m : m_breakdown.rows)
        m_cells.push_back(m.inModule ? moduleCellText(m.module) : QString::fromStdString(m.module));
    endResetModel();
}

void ModuleBreakdownModel::clear()
{
    beginResetModel();
    m_breakdown = {};
    m_cells.clear();
    endResetModel();
}

int ModuleBreakdownModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() || m_breakdown.rows.empty() ? 0 : static_cast<int>(m_breakdown.rows.size()) + 1;
}

int ModuleBreakdownModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant ModuleBreakdownModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal)
        return {};
    if (role == Qt::ToolTipRole && section == ModuleColumn)
        return tr("The first levels of each live allocation's nn.Module path, outside in: a level is a module's "
                  "forward at the line where it called the next one. \"(no module)\" rows are allocations made "
                  "outside any forward (parameters, optimizer state, a backward recorded without frames), by "
                  "category; \"(backward)\" the autograd nodes of native stacks; \"(recompute)\" activation "
                  "checkpointing's recomputation.");
    if (role != Qt::DisplayRole)
        return {};
    switch (section) {
    case ModuleColumn: return tr("Module");
    case Bytes: return tr("Bytes");
    case Share: return tr("Share");
    case Count: return tr("Allocations");
    case CategoryColumn: return tr("Mostly");
    default: return {};
    }
}

QVariant ModuleBreakdownModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const size_t row = static_cast<size_t>(index.row());
    const bool total = row == m_breakdown.rows.size();
    const int64_t bytes = total ? m_breakdown.bytes : m_breakdown.rows[row].bytes;
    const int64_t count = total ? m_breakdown.count : m_breakdown.rows[row].count;
    const double share = m_breakdown.bytes > 0 ? static_cast<double>(bytes) / static_cast<double>(m_breakdown.bytes) : 0.0;
    if (role == Qt::TextAlignmentRole)
        return index.column() == Bytes || index.column() == Share || index.column() == Count
                   ? QVariant(Qt::AlignRight | Qt::AlignVCenter)
                   : QVariant(Qt::AlignLeft | Qt::AlignVCenter);
    if (role == Qt::FontRole && total) {
        QFont bold;
        bold.setBold(true);
        return bold;
    }
    if (role == ValueRole) {
        switch (index.column()) {
        case ModuleColumn: return total ? QString() : QString::fromStdString(m_breakdown.rows[row].module);
        case Bytes: return static_cast<qlonglong>(bytes);
        case Share: return share; // ShareBarDelegate's bar
        case Count: return static_cast<qlonglong>(count);
        case CategoryColumn: return total ? -1 : static_cast<int>(m_breakdown.rows[row].category);
        default: return {};
        }
    }
    if (role == ColorRole && index.column() == Share)
        return total ? QVariant() : QVariant(categoryQColor(m_breakdown.rows[row].category));
    if (total) {
        if (role != Qt::DisplayRole)
            return {};
        switch (index.column()) {
        case ModuleColumn: return tr("Total live");
        case Bytes: return bytesText(bytes);
        case Share: return percentText(share);
        case Count: return countText(count);
        default: return QString();
        }
    }
    const ModuleShare& m = m_breakdown.rows[row];
    if (role == Qt::DecorationRole && index.column() == CategoryColumn && m_attributed)
        return categoryQColor(m.category);
    if (role == Qt::ToolTipRole && index.column() == ModuleColumn)
        return m.inModule ? moduleToolTip(m.module) : QString::fromStdString(m.module);
    if (role != Qt::DisplayRole)
        return {};
    switch (index.column()) {
    case ModuleColumn: return m_cells[row];
    case Bytes: return bytesText(m.bytes);
    case Share: return percentText(share);
    case Count: return countText(m.count);
    case CategoryColumn: return m_attributed ? categoryText(m.category) : tr("Not attributed");
    default: return {};
    }
}

} // namespace memscope
