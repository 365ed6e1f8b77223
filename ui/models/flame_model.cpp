#include "ui/models/flame_model.h"

#include "ui/style/text_format.h"

namespace memscope {

FlameModel::FlameModel(QObject* parent) : QAbstractItemModel(parent) { }

void FlameModel::setTree(std::shared_ptr<const StackTree> tree, std::shared_ptr<const FrameClassifier> frames)
{
    beginResetModel();
    m_tree = frames ? std::move(tree) : nullptr;
    m_frames = std::move(frames);
    m_row.assign(m_tree ? m_tree->nodes.size() : 0, 0);
    if (m_tree)
        for (const StackTreeNode& n : m_tree->nodes)
            for (size_t k = 0; k < n.children.size(); ++k)
                m_row[static_cast<size_t>(n.children[k])] = static_cast<int>(k);
    endResetModel();
}

QModelIndex FlameModel::indexOfNode(int32_t node, int column) const
{
    if (!m_tree || node < 0 || static_cast<size_t>(node) >= m_tree->nodes.size())
        return {};
    return createIndex(m_row[static_cast<size_t>(node)], column, static_cast<quintptr>(node));
}

QModelIndex FlameModel::index(int row, int column, const QModelIndex& parent) const
{
    if (!m_tree || row < 0 || column < 0 || column >= ColumnCount)
        return {};
    if (!parent.isValid())
        return row == 0 ? createIndex(0, column, quintptr{0}) : QModelIndex();
    if (parent.column() != 0)
        return {};
    const StackTreeNode& p = m_tree->node(static_cast<int32_t>(parent.internalId()));
    if (static_cast<size_t>(row) >= p.children.size())
        return {};
    return createIndex(row, column, static_cast<quintptr>(p.children[static_cast<size_t>(row)]));
}

QModelIndex FlameModel::parent(const QModelIndex& child) const
{
    if (!m_tree || !child.isValid())
        return {};
    const int32_t p = m_tree->node(static_cast<int32_t>(child.internalId())).parent;
    return p < 0 ? QModelIndex() : indexOfNode(p);
}

int FlameModel::rowCount(const QModelIndex& parent) const
{
    if (!m_tree)
        return 0;
    if (!parent.isValid())
        return 1;
    if (parent.column() != 0)
        return 0;
    return static_cast<int>(m_tree->node(static_cast<int32_t>(parent.internalId())).children.size());
}

int FlameModel::columnCount(const QModelIndex&) const { return ColumnCount; }

QString FlameModel::nodeText(int32_t node) const
{
    if (!m_tree || !m_frames)
        return {};
    return QString::fromStdString(stackTreeNodeText(*m_tree, node, *m_frames));
}

QString FlameModel::weightText(double weight) const
{
    if (!m_tree || m_tree->unit == StackTreeUnit::Bytes)
        return bytesText(static_cast<int64_t>(weight));
    return bytesText(static_cast<int64_t>(weight + 0.5)) +
           (m_tree->unit == StackTreeUnit::ByteSeconds ? tr("·s") : tr("·events"));
}

QVariant FlameModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case FrameColumn: return tr("Frame");
    case Weight: return m_tree && m_tree->weight == StackTreeWeight::ByteSeconds ? tr("Bytes × lifetime") : tr("Bytes");
    case Share: return tr("Share");
    case Count: return tr("Allocations");
    case Location: return tr("Location");
    default: return {};
    }
}

QVariant FlameModel::data(const QModelIndex& index, int role) const
{
    if (!m_tree || !index.isValid())
        return {};
    const int32_t node = static_cast<int32_t>(index.internalId());
    const StackTreeNode& n = m_tree->node(node);
    const double total = m_tree->root().weight;
    const double share = total > 0 ? n.weight / total : 0.0;
    if (role == NodeRole)
        return node;
    if (role == Qt::TextAlignmentRole)
        return index.column() == Weight || index.column() == Share || index.column() == Count
                   ? QVariant(Qt::AlignRight | Qt::AlignVCenter)
                   : QVariant(Qt::AlignLeft | Qt::AlignVCenter);
    if (role == Qt::ToolTipRole) {
        QString tip = nodeText(node).toHtmlEscaped();
        if (n.frame.valid())
            tip += QStringLiteral("<br>") + QString::fromStdString(m_frames->frameLocation(n.frame)).toHtmlEscaped();
        return tip +
               QStringLiteral("<br>%1 (%2) in %3 allocations").arg(weightText(n.weight), percentText(share), countText(n.count));
    }
    if (role == SortRole) {
        switch (index.column()) {
        case FrameColumn: return nodeText(node);
        case Weight: return n.weight;
        case Share: return share;
        case Count: return static_cast<qlonglong>(n.count);
        case Location: return n.frame.valid() ? QString::fromStdString(m_frames->frameLocation(n.frame)) : QString();
        default: return {};
        }
    }
    if (role != Qt::DisplayRole)
        return {};
    switch (index.column()) {
    case FrameColumn: return node == 0 ? tr("all") : nodeText(node);
    case Weight: return weightText(n.weight);
    case Share: return percentText(share);
    case Count: return countText(n.count);
    case Location: return n.frame.valid() ? QString::fromStdString(m_frames->frameLocation(n.frame)) : QString();
    default: return {};
    }
}

} // namespace memscope
