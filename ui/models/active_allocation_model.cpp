#include "ui/models/active_allocation_model.h"

#include "ui/document/document.h"
#include "ui/style/plot_theme.h"
#include "ui/style/text_format.h"

#include "snapshot/frame_classifier.h"

namespace memscope {

ActiveAllocationModel::ActiveAllocationModel(QObject* parent) : QAbstractTableModel(parent) { }

void ActiveAllocationModel::setReport(const Document* document, const DeviceModel* model, const PointReport* report)
{
    beginResetModel();
    m_document = document;
    m_model = model;
    m_report = report;
    m_topFrames.clear();
    m_ops.clear();
    m_modules.clear();
    if (report) {
        m_topFrames.reserve(report->live.size());
        const FrameClassifier& frames = *document->frames();
        for (const ActiveAllocation& l : report->live) {
            std::string s = frames.frameText(frames.topUserFrame(l.stack));
            if (s.empty())
                s = frames.stackSummary(l.stack, 1);
            m_topFrames.push_back(s.empty() ? tr("(no stack recorded)") : QString::fromStdString(s));
            m_ops.push_back(QString::fromStdString(frames.opText(l.stack)));
            m_modules.push_back(moduleCellText(frames.moduleText(l.stack)));
        }
    }
    endResetModel();
}

int ActiveAllocationModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() || !m_report ? 0 : static_cast<int>(m_report->live.size());
}

int ActiveAllocationModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant ActiveAllocationModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation == Qt::Horizontal && role == Qt::ToolTipRole) {
        if (section == Op)
            return tr("The operation that allocated: the innermost library frame below your code (for example "
                      "sdpa_attention.py:158), else the autograd node and ATen operator of the native frames");
        if (section == Module)
            return tr("The nn.Module path from the stack, outside in: each level is a module's forward at the line "
                      "where it called the next one (the last: where it allocated). Backward allocations have no "
                      "Python frames: with native stacks (stacks=\"all\") they show their autograd node, "
                      "\"(backward) > MmBackward0\"; activation checkpointing's recomputation starts with "
                      "\"(recompute)\"");
        return {};
    }
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case Size: return tr("Size");
    case CategoryColumn: return tr("Category");
    case PhaseColumn: return tr("Allocated in");
    case AllocatedAt: return tr("Allocated at");
    case Lifetime: return tr("Lifetime");
    case TopFrame: return tr("Top user frame");
    case Op: return tr("Op");
    case Module: return tr("Module");
    case Address: return tr("Address");
    default: return {};
    }
}

QVariant ActiveAllocationModel::data(const QModelIndex& index, int role) const
{
    if (!m_report || !index.isValid())
        return {};
    const ActiveAllocation& l = m_report->live[static_cast<size_t>(index.row())];
    const double t0 = 0;
    auto seconds = [&](int64_t e) { return m_model->x(e, XAxisMode::Time) - t0; };
    const bool before = l.allocEvent < 0;
    const bool alive = l.freeEvent < 0;
    const double life = (alive ? m_model->x(m_model->eventCount() - 1, XAxisMode::Time) : seconds(l.freeEvent)) -
                        (before ? 0.0 : seconds(l.allocEvent));
    if (role == AllocationIdRole)
        return l.id.value;
    if (role == Qt::TextAlignmentRole)
        return index.column() == Size || index.column() == Lifetime || index.column() == AllocatedAt
                   ? QVariant(Qt::AlignRight | Qt::AlignVCenter)
                   : QVariant(Qt::AlignLeft | Qt::AlignVCenter);
    if (role == Qt::DecorationRole && index.column() == CategoryColumn)
        return categoryQColor(l.category);
    if (role == Qt::ToolTipRole && index.column() == TopFrame)
        return QString::fromStdString(m_document->frames()->stackSummary(l.stack, 12));
    if (role == Qt::ToolTipRole && index.column() == Op)
        return m_ops[static_cast<size_t>(index.row())];
    if (role == Qt::ToolTipRole && index.column() == Module)
        return moduleToolTip(m_document->frames()->moduleText(l.stack));
    if (role == SortRole) {
        switch (index.column()) {
        case Size: return static_cast<qlonglong>(l.size);
        case CategoryColumn: return static_cast<int>(l.category);
        case PhaseColumn: return static_cast<int>(l.phase);
        case AllocatedAt: return static_cast<qlonglong>(l.allocEvent);
        case Lifetime: return life;
        case TopFrame: return m_topFrames[static_cast<size_t>(index.row())];
        case Op: return m_ops[static_cast<size_t>(index.row())];
        case Module: return QString::fromStdString(m_document->frames()->moduleText(l.stack));
        case Address: return static_cast<qulonglong>(l.addr);
        default: return {};
        }
    }
    if (role != Qt::DisplayRole)
        return {};
    switch (index.column()) {
    case Size: return bytesText(l.size);
    case CategoryColumn: return m_document->attributed() ? categoryText(l.category) : tr("Not attributed");
    case PhaseColumn: return before ? tr("before recording") : phaseText(l.phase);
    case AllocatedAt: return before ? tr("—") : secondsText(seconds(l.allocEvent));
    case Lifetime:
        return (before ? QStringLiteral("≥ ") : QString()) + secondsText(life) + (alive ? tr(" (still live)") : QString());
    case TopFrame: return m_topFrames[static_cast<size_t>(index.row())];
    case Op: return m_ops[static_cast<size_t>(index.row())];
    case Module: return m_modules[static_cast<size_t>(index.row())];
    case Address: return QStringLiteral("0x") + QString::number(l.addr, 16);
    default: return {};
    }
}

} // namespace memscope
