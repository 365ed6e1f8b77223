#include "ui/models/call_site_model.h"

#include "ui/document/document.h"
#include "ui/style/plot_theme.h"
#include "ui/style/text_format.h"

#include "snapshot/frame_classifier.h"

namespace memscope {

CallSiteModel::CallSiteModel(QObject* parent) : QAbstractTableModel(parent) { }

void CallSiteModel::setReport(const Document* document, const PointReport* report)
{
    beginResetModel();
    m_document = document;
    m_report = report;
    m_top.clear();
    m_stack.clear();
    m_ops.clear();
    m_modules.clear();
    if (report)
        for (const CallSite& s : report->callSites) {
            m_ops.push_back(QString::fromStdString(document->frames()->opText(s.stack)));
            m_modules.push_back(moduleCellText(document->frames()->moduleText(s.stack)));
            const std::string top = document->frames()->frameText(document->frames()->topUserFrame(s.stack));
            const QString summary = callSiteText(*document->frames(), s.stack, 6);
            m_top.push_back(top.empty() ? (s.stack.valid() ? tr("(library only)") : tr("(no stack recorded)"))
                                        : QString::fromStdString(top));
            m_stack.push_back(summary);
        }
    endResetModel();
}

int CallSiteModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() || !m_report ? 0 : static_cast<int>(m_report->callSites.size());
}

int CallSiteModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant CallSiteModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation == Qt::Horizontal && role == Qt::ToolTipRole) {
        if (section == Op)
            return tr("The operation that allocated: the innermost library frame below your code, else the autograd "
                      "node and ATen operator of the native frames");
        if (section == Module)
            return tr("The nn.Module path from the stack, outside in (each level: a module's forward at the line "
                      "where it called the next). Backward allocations recorded with native stacks show their "
                      "autograd node, \"(backward) > MmBackward0\"; recomputation starts with \"(recompute)\"");
        if (section == StackColumn)
            return tr("The allocating frame, then your frames that called it, innermost first");
        return {};
    }
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case Bytes: return tr("Bytes");
    case Share: return tr("Share");
    case Count: return tr("Allocations");
    case CategoryColumn: return tr("Category");
    case TopFrame: return tr("Top user frame");
    case Op: return tr("Op");
    case Module: return tr("Module");
    case StackColumn: return tr("Stack (innermost first)"); // the full wording is its tooltip
    default: return {};
    }
}

QVariant CallSiteModel::data(const QModelIndex& index, int role) const
{
    if (!m_report || !index.isValid())
        return {};
    const size_t row = static_cast<size_t>(index.row());
    const CallSite& s = m_report->callSites[row];
    const double share = m_report->requested > 0 ? static_cast<double>(s.bytes) / static_cast<double>(m_report->requested) : 0.0;
    if (role == StackRole)
        return s.stack.value;
    if (role == Qt::TextAlignmentRole)
        return index.column() <= Count ? QVariant(Qt::AlignRight | Qt::AlignVCenter) : QVariant(Qt::AlignLeft | Qt::AlignVCenter);
    if (role == Qt::DecorationRole && index.column() == CategoryColumn)
        return categoryQColor(s.category);
    if (role == Qt::ToolTipRole && (index.column() == StackColumn || index.column() == TopFrame))
        return QString::fromStdString(m_document->frames()->stackSummary(s.stack, 16));
    if (role == Qt::ToolTipRole && index.column() == Op)
        return m_ops[row];
    if (role == Qt::ToolTipRole && index.column() == Module)
        return moduleToolTip(m_document->frames()->moduleText(s.stack));
    if (role == SortRole) {
        switch (index.column()) {
        case Bytes: return static_cast<qlonglong>(s.bytes);
        case Share: return share;
        case Count: return static_cast<qlonglong>(s.count);
        case CategoryColumn: return static_cast<int>(s.category);
        case TopFrame: return m_top[row];
        case Op: return m_ops[row];
        case Module: return QString::fromStdString(m_document->frames()->moduleText(s.stack));
        case StackColumn: return m_stack[row];
        default: return {};
        }
    }
    if (role != Qt::DisplayRole)
        return {};
    switch (index.column()) {
    case Bytes: return bytesText(s.bytes);
    case Share: return percentText(share);
    case Count: return countText(s.count);
    case CategoryColumn: return m_document->attributed() ? categoryText(s.category) : tr("Not attributed");
    case TopFrame: return m_top[row];
    case Op: return m_ops[row];
    case Module: return m_modules[row];
    case StackColumn: return m_stack[row];
    default: return {};
    }
}

} // namespace memscope
