#pragma once

#include "query/stack_tree.h"

#include <QAbstractItemModel>

#include <memory>

namespace memscope {

// The flame graph's stack tree (query/stack_tree.h) as a Qt tree: one row a node, children
// under their caller, heaviest first; the root ("all") is the single top-level row. Columns:
// the frame's text, its weight (bytes, or byte-seconds over a range), its share of the root,
// its allocations and its location. SortRole gives the raw value; NodeRole the tree's node index.
class FlameModel : public QAbstractItemModel {
    Q_OBJECT
public:
    enum Column { FrameColumn, Weight, Share, Count, Location, ColumnCount };
    static constexpr int SortRole = Qt::UserRole;
    static constexpr int NodeRole = Qt::UserRole + 1;

    explicit FlameModel(QObject* parent = nullptr);
    // A null tree empties the model; `frames` must outlive the model's use of the tree.
    void setTree(std::shared_ptr<const StackTree> tree, std::shared_ptr<const FrameClassifier> frames);
    const StackTree* tree() const { return m_tree.get(); }
    const FrameClassifier* frames() const { return m_frames.get(); }
    QModelIndex indexOfNode(int32_t node, int column = 0) const;
    // A node's text as the views show it (frame_classifier's, or the synthetic label).
    QString nodeText(int32_t node) const;
    // "1.25 GiB", or "3.40 GiB·s" / "…·events" over a range.
    QString weightText(double weight) const;

    QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
    QModelIndex parent(const QModelIndex& child) const override;
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

private:
    std::shared_ptr<const StackTree> m_tree;
    std::shared_ptr<const FrameClassifier> m_frames;
    std::vector<int> m_row; // each node's row under its parent
};

} // namespace memscope
