#include "ui/pages/segment_map_widget.h"

#include "ui/document/document.h"
#include "ui/plot/timeline_plotter.h"
#include "ui/style/plot_theme.h"
#include "ui/style/text_format.h"

#include <QHelpEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>

#include <algorithm>
#include <numeric>

namespace memscope {

SegmentMapWidget::SegmentMapWidget(QWidget* parent) : QWidget(parent)
{
    setMouseTracking(true);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
}

int SegmentMapWidget::poolIndex(const SegmentLife& segment) const
{
    if (!m_model || segment.pool.isDefault())
        return -1;
    const auto& pools = m_model->pools().pools;
    for (size_t k = 0; k < pools.size(); ++k)
        if (pools[k].id == segment.pool)
            return static_cast<int>(k);
    return -1;
}

int SegmentMapWidget::rowHeight() const { return fontMetrics().height() + 8; }

int SegmentMapWidget::labelWidth() const
{
    return fontMetrics().horizontalAdvance(QStringLiteral("1023.99 MiB  small  0x7f00000000000")) + 12;
}

QSize SegmentMapWidget::sizeHint() const
{
    return QSize(600, std::max<int>(rowHeight(), static_cast<int>(m_state.segments.size()) * rowHeight() + 4));
}

void SegmentMapWidget::setState(const Document* document, const DeviceModel* model, AllocatorState state)
{
    m_document = document;
    m_model = model;
    m_state = std::move(state);
    reorder();
    setMinimumHeight(sizeHint().height());
    updateGeometry();
    update();
}

void SegmentMapWidget::setSort(Sort sort)
{
    m_sort = sort;
    reorder();
    update();
}

void SegmentMapWidget::reorder()
{
    m_order.resize(m_state.segments.size());
    std::iota(m_order.begin(), m_order.end(), size_t{0});
    const auto& s = m_state.segments;
    std::stable_sort(m_order.begin(), m_order.end(), [&](size_t a, size_t b) {
        switch (m_sort) {
        case Sort::Size: return s[a].segment->size > s[b].segment->size;
        case Sort::Gaps: return s[a].free.bytes > s[b].free.bytes;
        case Sort::Address: break;
        }
        return s[a].segment->addr < s[b].segment->addr;
    });
}

QRect SegmentMapWidget::barRect(int row) const
{
    const int h = rowHeight();
    return QRect(labelWidth(), row * h + 3, std::max(10, width() - labelWidth() - 8), h - 6);
}

void SegmentMapWidget::paintEvent(QPaintEvent* event)
{
    QPainter p(this);
    const PlotTheme theme = PlotTheme::fromPalette(palette(), font());
    p.fillRect(event->rect(), theme.background);
    if (m_state.segments.empty()) {
        p.setPen(theme.muted);
        p.drawText(rect(), Qt::AlignCenter, tr("No segments are reserved at this time."));
        return;
    }
    const int h = rowHeight();
    const int firstRow = std::max(0, event->rect().top() / h);
    const int lastRow = std::min<int>(static_cast<int>(m_order.size()) - 1, event->rect().bottom() / h);
    const QColor gapColor = theme.dark ? QColor(70, 70, 70) : QColor(232, 232, 232);
    const QColor hatch = theme.dark ? QColor(110, 110, 110) : QColor(185, 185, 185);
    const QFontMetrics fm = fontMetrics();
    for (int row = firstRow; row <= lastRow; ++row) {
        const SegmentState& seg = m_state.segments[m_order[static_cast<size_t>(row)]];
        const QRect bar = barRect(row);
        // Label: size, pool, address.
        const QString size = bytesText(static_cast<int64_t>(seg.segment->size));
        p.setPen(theme.foreground);
        p.drawText(QRect(6, row * h, labelWidth(), h), Qt::AlignVCenter | Qt::AlignLeft, size);
        p.setPen(theme.muted);
        const int sizeW = fm.horizontalAdvance(QStringLiteral("1023.99 MiB  "));
        const int pool = poolIndex(*seg.segment);
        const QColor poolColor = pool >= 0 ? poolQColor(static_cast<size_t>(pool), theme.dark) : QColor();
        if (pool >= 0)
            p.setPen(poolColor);
        p.drawText(QRect(6 + sizeW, row * h, labelWidth() - sizeW, h), Qt::AlignVCenter | Qt::AlignLeft,
                   QStringLiteral("%1  0x%2")
                       .arg(pool >= 0 ? tr("pool %1").arg(m_model->pools().pools[static_cast<size_t>(pool)].number)
                            : seg.segment->expandable ? tr("exp.")
                            : seg.segment->largePool  ? tr("large")
                                                      : tr("small"))
                       .arg(QString::number(seg.segment->addr, 16)));
        p.fillRect(bar, gapColor);
        // A private pool's free space is the pool's alone: hatched in its colour, not as cache.
        p.fillRect(bar, QBrush(pool >= 0 ? poolColor : hatch, pool >= 0 ? Qt::FDiagPattern : Qt::BDiagPattern));
        const double scale = static_cast<double>(bar.width()) / static_cast<double>(seg.segment->size);
        double lastRight = -1;
        for (const SegmentState::Piece& piece : seg.blocks) {
            const double x0 = bar.left() + static_cast<double>(piece.offset) * scale;
            const double x1 = bar.left() + static_cast<double>(piece.offset + piece.size) * scale;
            const QRectF r(QPointF(x0, bar.top()), QPointF(std::max(x1, x0 + 1.0), bar.bottom() + 1));
            const Category c = m_model->attribution ? m_model->attribution->category(piece.id) : Category::Other;
            p.fillRect(r, categoryQColor(c));
            if (x0 - lastRight < 0.5 && r.width() >= 3) {
                p.setPen(QPen(categoryQColor(c).darker(160), 1));
                p.drawLine(QPointF(x0, bar.top()), QPointF(x0, bar.bottom()));
            }
            lastRight = x1;
        }
        p.setPen(pool >= 0 ? QPen(poolColor, 2) : QPen(theme.muted, 1));
        p.setBrush(Qt::NoBrush);
        p.drawRect(bar.adjusted(0, 0, -1, -1));
    }
}

AllocationId SegmentMapWidget::hit(const QPoint& pos, int* rowOut, uint64_t* gap) const
{
    const int row = pos.y() / rowHeight();
    if (rowOut)
        *rowOut = row;
    if (row < 0 || row >= static_cast<int>(m_order.size()))
        return {};
    const QRect bar = barRect(row);
    if (!bar.adjusted(0, -2, 0, 2).contains(pos))
        return {};
    const SegmentState& seg = m_state.segments[m_order[static_cast<size_t>(row)]];
    const double offset = (pos.x() - bar.left()) * static_cast<double>(seg.segment->size) / bar.width();
    const double slack = static_cast<double>(seg.segment->size) / bar.width(); // one pixel
    const SegmentState::Piece* best = nullptr;
    for (const SegmentState::Piece& piece : seg.blocks)
        if (offset >= static_cast<double>(piece.offset) - slack / 2 &&
            offset < static_cast<double>(piece.offset + piece.size) + slack / 2)
            if (!best || piece.size > best->size)
                best = &piece;
    if (best)
        return best->id;
    if (gap) {
        uint64_t start = 0, end = seg.segment->size;
        for (const SegmentState::Piece& piece : seg.blocks) {
            if (static_cast<double>(piece.offset + piece.size) <= offset)
                start = std::max(start, piece.offset + piece.size);
            else if (static_cast<double>(piece.offset) > offset) {
                end = piece.offset;
                break;
            }
        }
        *gap = end > start ? end - start : 0;
    }
    return {};
}

bool SegmentMapWidget::event(QEvent* event)
{
    if (event->type() == QEvent::ToolTip && m_model) {
        auto* help = static_cast<QHelpEvent*>(event);
        int row = -1;
        uint64_t gap = 0;
        const AllocationId id = hit(help->pos(), &row, &gap);
        if (row < 0 || row >= static_cast<int>(m_order.size())) {
            QToolTip::hideText();
            return true;
        }
        const SegmentState& seg = m_state.segments[m_order[static_cast<size_t>(row)]];
        QString text = tr("<b>Segment</b> 0x%1 · %2 · %3 requested in %4 blocks · %5 free in %6 pieces (largest %7)")
                           .arg(QString::number(seg.segment->addr, 16), bytesText(static_cast<int64_t>(seg.segment->size)),
                                bytesText(static_cast<int64_t>(seg.requested)),
                                countText(static_cast<int64_t>(seg.blocks.size())),
                                bytesText(static_cast<int64_t>(seg.free.bytes)), countText(seg.free.count),
                                bytesText(static_cast<int64_t>(seg.free.largest)));
        if (const int pool = poolIndex(*seg.segment); pool >= 0) {
            const PoolUsage& u = m_model->pools().pools[static_cast<size_t>(pool)];
            text += tr("<br>%1 <b>%2</b> %3: its free space is the pool's alone, not cache the allocator can hand out")
                        .arg(colorSwatchHtml(
                                 poolQColor(static_cast<size_t>(pool), palette().color(QPalette::Window).lightness() < 128)),
                             TimelinePlotter::poolLabel(u).toHtmlEscaped(), QString::fromStdString(u.idText()));
        }
        if (id.valid()) {
            const Allocation& a = m_model->replay->allocation(id);
            const Category c = m_model->attribution ? m_model->attribution->category(id) : Category::Other;
            text += tr("<br>%1 <b>%2</b> %3 at +0x%4<br>%5")
                        .arg(colorSwatchHtml(categoryQColor(c)), bytesText(static_cast<int64_t>(a.size)),
                             m_document && m_document->attributed() ? categoryText(c) : QString(),
                             QString::number(a.addr - seg.segment->addr, 16),
                             stackSummaryText(m_document ? m_document->frames().get() : nullptr, a.stack, 2).toHtmlEscaped());
        } else if (gap) {
            text += tr("<br>Gap: %1 reserved, not requested by any live allocation").arg(bytesText(static_cast<int64_t>(gap)));
        }
        QToolTip::showText(help->globalPos(), text, this);
        return true;
    }
    return QWidget::event(event);
}

void SegmentMapWidget::mousePressEvent(QMouseEvent* event)
{
    const AllocationId id = hit(event->pos());
    if (id.valid())
        emit allocationClicked(id);
    QWidget::mousePressEvent(event);
}

} // namespace memscope
