#include "ui/pages/flame_view.h"

#include "ui/models/flame_model.h"
#include "ui/style/text_format.h"

#include <QHelpEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>

namespace memscope {

FlameView::FlameView(FlameModel* model, QWidget* parent) : QWidget(parent), m_model(model)
{
    setMouseTracking(true);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
    connect(m_model, &QAbstractItemModel::modelReset, this, [this] {
        m_zoom = 0;
        m_hover = -1;
        m_marked = -1;
        relayout();
    });
}

int FlameView::rowHeight() const { return fontMetrics().height() + 5; }

QSize FlameView::sizeHint() const { return {600, m_rows * rowHeight() + 1}; }
QSize FlameView::minimumSizeHint() const { return {200, m_rows * rowHeight() + 1}; }

void FlameView::setZoomNode(int node)
{
    const StackTree* t = m_model->tree();
    if (!t || node < 0 || static_cast<size_t>(node) >= t->nodes.size())
        node = 0;
    if (node == m_zoom)
        return;
    m_zoom = node;
    m_hover = -1;
    relayout();
    emit zoomChanged(node);
}

void FlameView::setMarkedNode(int node)
{
    m_marked = node;
    update();
}

void FlameView::relayout()
{
    m_rects.clear();
    m_rows = 1;
    const StackTree* t = m_model->tree();
    if (t && !t->nodes.empty() && t->node(m_zoom).weight > 0) {
        const int h = rowHeight();
        const double scale = static_cast<double>(width() - 1) / t->node(m_zoom).weight;
        const int baseDepth = t->node(m_zoom).depth;
        struct Pending {
            int node;
            double x;
        };
        std::vector<Pending> stack{{m_zoom, 0.0}};
        while (!stack.empty()) {
            const Pending p = stack.back();
            stack.pop_back();
            const StackTreeNode& n = t->node(p.node);
            const double w = n.weight * scale;
            if (w < 1.0 && p.node != m_zoom)
                continue;
            const int row = n.depth - baseDepth;
            m_rows = std::max(m_rows, row + 1);
            m_rects.push_back({QRectF(p.x, row * h, w, h - 1), p.node});
            double x = p.x;
            const size_t first = stack.size();
            for (int32_t c : n.children) {
                stack.push_back({c, x});
                x += t->node(c).weight * scale;
            }
            std::reverse(stack.begin() + static_cast<std::ptrdiff_t>(first), stack.end());
        }
    }
    updateGeometry();
    setMinimumHeight(m_rows * rowHeight() + 1);
    update();
}

void FlameView::resizeEvent(QResizeEvent* event)
{
    QWidget::resizeEvent(event);
    relayout();
}

QColor FlameView::colorOf(int node) const
{
    const StackTree* t = m_model->tree();
    const StackTreeNode& n = t->node(node);
    const size_t hash = std::hash<QString>{}(m_model->nodeText(node));
    const int a = static_cast<int>(hash % 40), b = static_cast<int>((hash >> 8) % 40);
    if (node == 0)
        return QColor(150, 150, 160);
    if (!n.frame.valid())
        return QColor(185 + a / 2, 185 + a / 2, 195 + a / 2);
    if (m_model->frames()->isLibrary(n.frame))
        return QColor(115 + a, 165 + b, 225);
    return QColor(240, 130 + 2 * a, 55 + b);
}

void FlameView::paintEvent(QPaintEvent*)
{
    QPainter p(this);
    p.fillRect(rect(), palette().base());
    const StackTree* t = m_model->tree();
    if (!t || m_rects.empty()) {
        p.setPen(palette().color(QPalette::PlaceholderText));
        p.drawText(rect(), Qt::AlignCenter, t ? tr("Nothing is active here") : tr("No flame graph yet"));
        return;
    }
    const QFontMetrics fm = fontMetrics();
    for (const Item& it : m_rects) {
        QColor fill = colorOf(it.node);
        if (it.node == m_hover)
            fill = fill.lighter(125);
        p.fillRect(it.rect, fill);
        if (it.node == m_hover || it.node == m_marked) {
            p.setPen(QPen(it.node == m_marked ? QColor(20, 20, 20) : fill.darker(160), it.node == m_marked ? 2 : 1));
            p.drawRect(it.rect.adjusted(0.5, 0.5, -0.5, -0.5));
        }
        if (it.rect.width() < 4 * fm.averageCharWidth())
            continue;
        QString text = it.node == 0 ? tr("all (%1)").arg(m_model->weightText(t->root().weight)) : m_model->nodeText(it.node);
        if (it.node == m_zoom && it.node != 0)
            text = tr("%1 (%2) · click to go up").arg(text, m_model->weightText(t->node(it.node).weight));
        p.setPen(QColor(20, 20, 20));
        const QRectF inner = it.rect.adjusted(3, 0, -3, 0);
        p.drawText(inner, Qt::AlignVCenter | Qt::AlignLeft, fm.elidedText(text, Qt::ElideRight, static_cast<int>(inner.width())));
    }
}

int FlameView::nodeAt(const QPoint& pos) const
{
    for (const Item& it : m_rects)
        if (it.rect.contains(pos))
            return it.node;
    return -1;
}

QRectF FlameView::nodeRect(int node) const
{
    for (const Item& it : m_rects)
        if (it.node == node)
            return it.rect;
    return {};
}

void FlameView::mouseMoveEvent(QMouseEvent* event)
{
    const int n = nodeAt(event->position().toPoint());
    if (n != m_hover) {
        m_hover = n;
        update();
    }
    setCursor(n >= 0 ? Qt::PointingHandCursor : Qt::ArrowCursor);
}

void FlameView::leaveEvent(QEvent*)
{
    m_hover = -1;
    update();
}

void FlameView::mouseReleaseEvent(QMouseEvent* event)
{
    if (event->button() != Qt::LeftButton)
        return;
    const int n = nodeAt(event->position().toPoint());
    if (n < 0)
        return;
    const StackTree* t = m_model->tree();
    const int target = n == m_zoom && n != 0 ? t->node(n).parent : n;
    setZoomNode(target);
    emit nodeClicked(target);
}

bool FlameView::event(QEvent* event)
{
    if (event->type() == QEvent::ToolTip) {
        auto* help = static_cast<QHelpEvent*>(event);
        const int n = nodeAt(help->pos());
        if (n >= 0)
            QToolTip::showText(help->globalPos(), m_model->indexOfNode(n).data(Qt::ToolTipRole).toString(), this);
        else
            QToolTip::hideText();
        return true;
    }
    return QWidget::event(event);
}

} // namespace memscope
