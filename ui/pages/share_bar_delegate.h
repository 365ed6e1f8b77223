#pragma once

#include <QStyledItemDelegate>

namespace memscope {

// Paints a cell's share (Qt::UserRole, 0..1) as a bar behind its text, in the colour given
// by Qt::UserRole + 1 (or the palette highlight).
class ShareBarDelegate : public QStyledItemDelegate {
    Q_OBJECT
public:
    using QStyledItemDelegate::QStyledItemDelegate;
    void paint(QPainter* painter, const QStyleOptionViewItem& option, const QModelIndex& index) const override;
};

} // namespace memscope
