#include "ui/pages/allocator_state_view.h"

#include "query/point_report.h"
#include "ui/style/plot_theme.h"
#include "ui/pages/segment_map_widget.h"
#include "ui/pages/stack_view.h"
#include "ui/plot/timeline_plotter.h"
#include "ui/style/text_format.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QScrollArea>
#include <QSplitter>
#include <QVBoxLayout>

namespace memscope {

AllocatorStateView::AllocatorStateView(QWidget* parent)
    : QWidget(parent), m_summary(new QLabel(this)), m_legend(new QLabel(this)), m_sort(new QComboBox(this)),
      m_map(new SegmentMapWidget(this)), m_stack(new StackView(this))
{
    m_summary->setTextFormat(Qt::RichText);
    m_summary->setWordWrap(true);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_legend->setTextFormat(Qt::RichText);
    m_sort->addItem(tr("Largest segments first"));
    m_sort->addItem(tr("By address"));
    m_sort->addItem(tr("Most gap bytes first"));

    auto* head = new QHBoxLayout;
    head->addWidget(m_legend, 1);
    head->addWidget(new QLabel(tr("Sort"), this));
    head->addWidget(m_sort);

    auto* scroll = new QScrollArea(this);
    scroll->setWidget(m_map);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::StyledPanel);

    auto* left = new QWidget(this);
    auto* leftLayout = new QVBoxLayout(left);
    leftLayout->setContentsMargins(6, 4, 0, 0);
    leftLayout->addWidget(m_summary);
    leftLayout->addLayout(head);
    leftLayout->addWidget(scroll, 1);

    auto* split = new QSplitter(Qt::Horizontal, this);
    split->setObjectName(QStringLiteral("allocatorSplit"));
    split->addWidget(left);
    split->addWidget(m_stack);
    split->setStretchFactor(0, 4);
    split->setStretchFactor(1, 1);
    split->setSizes({900, 320});
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(split);

    connect(m_sort, &QComboBox::currentIndexChanged, this, [this](int i) {
        m_map->setSort(i == 1   ? SegmentMapWidget::Sort::Address
                       : i == 2 ? SegmentMapWidget::Sort::Gaps
                                : SegmentMapWidget::Sort::Size);
    });
    connect(m_map, &SegmentMapWidget::allocationClicked, this, [this](AllocationId id) {
        if (!m_document)
            return;
        const DeviceModel& m = m_document->devices[m_deviceIndex];
        const Allocation& a = m.replay->allocation(id);
        m_stack->setAllocation(m_document.get(), m_deviceIndex, id,
                               tr("%1 at 0x%2").arg(bytesText(static_cast<int64_t>(a.size)), QString::number(a.addr, 16)));
        emit allocationSelected(id);
    });
}

const AllocatorState& AllocatorStateView::state() const { return m_map->state(); }

void AllocatorStateView::setDocument(std::shared_ptr<const Document> document, size_t deviceIndex)
{
    m_document = std::move(document);
    m_deviceIndex = deviceIndex;
    m_event = peakEvent(*m_document->devices[m_deviceIndex].replay);
    m_stack->clear(tr("Click a block to see the stack that allocated it."));
    refresh();
}

void AllocatorStateView::updateDocument(std::shared_ptr<const Document> document)
{
    m_document = std::move(document);
    refresh();
}

void AllocatorStateView::setEvent(int64_t event)
{
    m_event = event;
    refresh();
}

QString AllocatorStateView::summaryText() const { return m_summary->text(); }

void AllocatorStateView::refresh()
{
    if (!m_document)
        return;
    const DeviceModel& m = m_document->devices[m_deviceIndex];
    AllocatorState st = computeAllocatorState(*m.replay, m.segments(), m_event);
    const bool peak = m_event == peakEvent(*m.replay);
    QString html = tr("<b>At %1</b> (event %2)%3<br>")
                       .arg(secondsText(m.x(std::max<int64_t>(m_event, 0), XAxisMode::Time)), countText(m_event),
                            peak ? tr(" — global peak") : QString());
    html += tr("Reserved <b>%1</b> in %2 segments · requested <b>%3</b> by %4 live allocations")
                .arg(bytesText(static_cast<int64_t>(st.reserved)), countText(static_cast<int64_t>(st.segments.size())),
                     bytesText(static_cast<int64_t>(st.requested)), countText(st.activeCount - st.unplacedCount));
    html += tr("<br>Free (cached blocks): <b>%1</b> (%2 of reserved) in %3 pieces, largest %4 · "
               "fragmentation <b>%5</b> · block rounding %6")
                .arg(bytesText(static_cast<int64_t>(st.free.bytes)),
                     percentText(st.reserved ? static_cast<double>(st.free.bytes) / static_cast<double>(st.reserved) : 0.0),
                     countText(st.free.count), bytesText(static_cast<int64_t>(st.free.largest)), percentText(st.fragmentation()),
                     bytesText(static_cast<int64_t>(st.inUse - st.requested)));
    if (!m.pools().empty()) {
        // Free space inside private pools is not cache the allocator can give to anyone else.
        uint64_t poolReserved = 0, poolFree = 0;
        int64_t poolSegments = 0;
        for (const SegmentState& seg : st.segments)
            if (!seg.segment->pool.isDefault()) {
                poolReserved += seg.segment->size;
                poolFree += seg.free.bytes;
                ++poolSegments;
            }
        html += tr("<br>Private pools (CUDA graph / MemPool): <b>%1</b> reserved in %2 segments, <b>%3</b> of the free "
                   "space above is theirs alone (only the pool's own allocations, e.g. a graph's replays, can use it)")
                    .arg(bytesText(static_cast<int64_t>(poolReserved)), countText(poolSegments),
                         bytesText(static_cast<int64_t>(poolFree)));
    }
    if (st.unplacedCount)
        html += tr("<br><i>%1 live allocations (%2) lie in no segment the trace knows of.</i>")
                    .arg(countText(st.unplacedCount), bytesText(static_cast<int64_t>(st.unplacedBytes)));
    m_summary->setText(html);

    QString legend;
    for (Category c : kAllCategories)
        if (m.categoryPresent[static_cast<size_t>(c)])
            legend += colorSwatchHtml(categoryQColor(c)) + QLatin1Char(' ') +
                      (m_document->attributed() ? categoryText(c) : tr("Live allocation")) + QStringLiteral("&nbsp;&nbsp; ");
    if (!m_document->attributed())
        legend += colorSwatchHtml(categoryQColor(Category::Other)) + QLatin1Char(' ') + tr("Live allocation (categorising…)") +
                  QStringLiteral("&nbsp;&nbsp; ");
    legend += tr("<span style=\"color:#999\">&#9638;</span> Gap");
    const bool dark = palette().color(QPalette::Window).lightness() < 128;
    for (size_t k = 0; k < m.pools().pools.size(); ++k)
        legend += QStringLiteral("&nbsp;&nbsp; ") + colorSwatchHtml(poolQColor(k, dark)) + QLatin1Char(' ') +
                  TimelinePlotter::poolLabel(m.pools().pools[k]).toHtmlEscaped();
    m_legend->setText(legend);
    m_map->setState(m_document.get(), &m, std::move(st));
}

} // namespace memscope
