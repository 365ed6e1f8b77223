#include "ui/live/live_overview.h"

#include "analysis/incremental_analysis.h"
#include "ui/style/text_format.h"

#include <QPainter>
#include <QPainterPath>

#include <algorithm>

namespace memscope {

LiveOverview::LiveOverview(QWidget* parent) : QWidget(parent)
{
    setMinimumHeight(60);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
    setToolTip(tr("The whole run so far: requested bytes (band: min to max per column) and reserved bytes (line)"));
}

void LiveOverview::setView(std::shared_ptr<const LiveView> view, int device)
{
    m_view = std::move(view);
    m_device = device;
    update();
}

void LiveOverview::paintEvent(QPaintEvent*)
{
    QPainter p(this);
    const QRect r = rect().adjusted(0, 14, -1, -1);
    p.fillRect(rect(), palette().base());
    m_columns = 0;
    const DeviceReplayView* d = m_view ? m_view->device(m_device) : nullptr;
    if (!d || d->eventCount <= 0 || r.width() < 2 || r.height() < 4) {
        p.setPen(palette().color(QPalette::PlaceholderText));
        p.drawText(rect(), Qt::AlignCenter, tr("no events yet"));
        return;
    }
    const int64_t n = d->eventCount;
    const double top = static_cast<double>(std::max<int64_t>(d->peakReserved.bytes, d->peakRequested.bytes));
    const double scale = top > 0 ? (r.height() - 1) / top : 0;
    auto y = [&](int64_t bytes) { return r.bottom() - static_cast<double>(bytes) * scale; };
    const int w = r.width();
    QPainterPath band;
    QPolygonF reservedLine;
    QColor fill = palette().color(QPalette::Highlight);
    fill.setAlpha(120);
    p.setPen(Qt::NoPen);
    p.setBrush(fill);
    for (int x = 0; x < w; ++x) {
        const int64_t first = n * x / w;
        const int64_t last = std::max(first, n * (x + 1) / w - 1);
        if (first >= n)
            break;
        const auto q = d->requested.query(first, std::min(last, n - 1));
        const auto rs = d->reserved.query(first, std::min(last, n - 1));
        const double y0 = y(q.maxValue + d->requestedAtStart);
        p.drawRect(QRectF(r.left() + x, y0, 1.0, std::max(1.0, r.bottom() - y0)));
        reservedLine << QPointF(r.left() + x + 0.5, y(rs.maxValue + d->reservedAtStart));
        ++m_columns;
    }
    p.setPen(QPen(palette().color(QPalette::Text), 1.2));
    p.setBrush(Qt::NoBrush);
    p.drawPolyline(reservedLine);
    p.setPen(palette().color(QPalette::Text));
    p.drawText(rect().adjusted(4, 0, -4, 0), Qt::AlignLeft | Qt::AlignTop,
               tr("whole run: %1 events · peak %2 requested, %3 reserved")
                   .arg(countText(n), bytesText(d->peakRequested.bytes), bytesText(d->peakReserved.bytes)));
}

} // namespace memscope
