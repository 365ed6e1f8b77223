#include "ui/live/memory_gap_bar.h"

#include "ui/style/text_format.h"

#include <QPainter>
#include <QPainterPath>

#include <algorithm>

namespace memscope {

MemoryGapBar::MemoryGapBar(QWidget* parent) : QWidget(parent) { setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Expanding); }

void MemoryGapBar::setValues(int64_t reservedBytes, std::optional<uint64_t> deviceInUseBytes, const QString& note)
{
    m_reserved = reservedBytes;
    m_inUse = deviceInUseBytes;
    m_note = note;
    update();
}

QString MemoryGapBar::gapText() const
{
    if (!m_inUse)
        return {};
    const int64_t gap = static_cast<int64_t>(*m_inUse) - m_reserved;
    if (gap <= 0)
        return tr("NVML: %1 in use, all of it reserved by PyTorch").arg(bytesText(static_cast<int64_t>(*m_inUse)));
    return tr("%1 not visible to PyTorch's allocator: CUDA context, NCCL, cuBLAS/cuDNN workspaces, other libraries")
        .arg(bytesText(gap));
}

void MemoryGapBar::paintEvent(QPaintEvent*)
{
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    const QPalette pal = palette();
    const QRect area = rect().adjusted(8, 8, -8, -8);
    p.setPen(pal.color(QPalette::WindowText));
    QFont bold = font();
    bold.setBold(true);
    p.setFont(bold);
    p.drawText(QRect(area.left(), area.top(), area.width(), 20), Qt::AlignLeft | Qt::AlignVCenter, tr("GPU memory now"));
    p.setFont(font());

    const int textHeight = 92;
    const QRect bars(area.left(), area.top() + 26, area.width(), std::max(40, area.height() - 26 - textHeight));
    const double top = std::max<double>({1.0, static_cast<double>(m_reserved), m_inUse ? double(*m_inUse) : 0.0});
    const int barWidth = std::max(24, bars.width() / 2 - 16);
    auto heightOf = [&](double bytes) { return static_cast<int>(bars.height() * bytes / top); };

    // Reserved by the allocator.
    const QColor reservedColor(90, 120, 200);
    const int hr = heightOf(static_cast<double>(m_reserved));
    const QRect r1(bars.left() + 4, bars.bottom() - hr, barWidth, hr);
    p.fillRect(r1, reservedColor);
    p.drawText(QRect(r1.left() - 4, bars.bottom() + 2, barWidth + 8, 32), Qt::AlignHCenter | Qt::TextWordWrap,
               tr("reserved\n%1").arg(bytesText(m_reserved)));

    const QRect r2base(bars.left() + 4 + barWidth + 24, bars.top(), barWidth, bars.height());
    if (m_inUse) {
        const int hu = heightOf(static_cast<double>(*m_inUse));
        const QRect r2(r2base.left(), bars.bottom() - hu, barWidth, hu);
        const int hBelow = std::min(hu, hr);
        p.fillRect(QRect(r2.left(), bars.bottom() - hBelow, barWidth, hBelow), reservedColor.lighter(130));
        if (hu > hr) {
            const QRect gap(r2.left(), r2.top(), barWidth, hu - hr);
            p.fillRect(gap, QColor(230, 150, 60));
            p.fillRect(gap, QBrush(QColor(120, 60, 0), Qt::BDiagPattern));
        }
        p.drawText(QRect(r2.left() - 4, bars.bottom() + 2, barWidth + 8, 32), Qt::AlignHCenter | Qt::TextWordWrap,
                   tr("on GPU (NVML)\n%1").arg(bytesText(static_cast<int64_t>(*m_inUse))));
    } else {
        p.setPen(QPen(pal.color(QPalette::Mid), 1, Qt::DashLine));
        p.drawRect(QRect(r2base.left(), bars.bottom() - bars.height() / 3, barWidth, bars.height() / 3));
        p.setPen(pal.color(QPalette::WindowText));
        p.drawText(QRect(r2base.left() - 4, bars.bottom() + 2, barWidth + 8, 32), Qt::AlignHCenter | Qt::TextWordWrap,
                   tr("on GPU (NVML)\n—"));
    }
    const QRect label(area.left(), bars.bottom() + 36, area.width(), textHeight - 36);
    p.setPen(m_inUse ? QColor(150, 80, 0) : pal.color(QPalette::Mid).darker(150));
    p.drawText(label, Qt::AlignLeft | Qt::AlignTop | Qt::TextWordWrap, m_inUse ? gapText() : m_note);
}

} // namespace memscope
