#include "ui/pages/share_bar_delegate.h"

#include <QApplication>
#include <QPainter>

namespace memscope {

void ShareBarDelegate::paint(QPainter* painter, const QStyleOptionViewItem& option, const QModelIndex& index) const
{
    QStyleOptionViewItem opt = option;
    initStyleOption(&opt, index);
    const QString text = opt.text;
    opt.text.clear();
    const QStyle* style = opt.widget ? opt.widget->style() : QApplication::style();
    style->drawControl(QStyle::CE_ItemViewItem, &opt, painter, opt.widget);

    const double share = std::clamp(index.data(Qt::UserRole).toDouble(), 0.0, 1.0);
    QColor color = index.data(Qt::UserRole + 1).value<QColor>();
    if (!color.isValid())
        color = option.palette.color(QPalette::Highlight);
    color.setAlpha(140);
    const QRect r = option.rect.adjusted(3, 3, -3, -3);
    painter->save();
    painter->fillRect(QRect(r.left(), r.top(), static_cast<int>(r.width() * share), r.height()), color);
    painter->setPen(option.palette.color(QPalette::Text));
    painter->drawText(r.adjusted(4, 0, -4, 0), Qt::AlignVCenter | Qt::AlignRight, text);
    painter->restore();
}

} // namespace memscope
