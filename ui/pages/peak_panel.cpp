#include "ui/pages/peak_panel.h"

#include "ui/models/call_site_model.h"
#include "ui/models/active_allocation_model.h"
#include "ui/style/plot_theme.h"
#include "ui/pages/share_bar_delegate.h"
#include "ui/pages/stack_view.h"
#include "ui/style/text_format.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <QTableWidget>
#include <QVBoxLayout>

namespace memscope {

namespace {

QTableView* makeTable(QWidget* parent, QSortFilterProxyModel* proxy)
{
    auto* t = new QTableView(parent);
    t->setModel(proxy);
    t->setSortingEnabled(true);
    t->setSelectionBehavior(QAbstractItemView::SelectRows);
    t->setSelectionMode(QAbstractItemView::SingleSelection);
    t->setAlternatingRowColors(true);
    t->verticalHeader()->setVisible(false);
    t->verticalHeader()->setDefaultSectionSize(t->fontMetrics().height() + 6);
    t->horizontalHeader()->setStretchLastSection(true);
    t->horizontalHeader()->setHighlightSections(false);
    t->setWordWrap(false);
    t->setTextElideMode(Qt::ElideRight);
    proxy->setSortRole(Qt::UserRole);
    return t;
}

} // namespace

PeakPanel::PeakPanel(QWidget* parent)
    : QWidget(parent), m_header(new QLabel(this)), m_peakButton(new QPushButton(tr("Go to global peak"), this)),
      m_breakdown(new QTableWidget(this)), m_tabs(new QTabWidget(this)), m_liveModel(new ActiveAllocationModel(this)),
      m_siteModel(new CallSiteModel(this)), m_liveProxy(new QSortFilterProxyModel(this)),
      m_siteProxy(new QSortFilterProxyModel(this)), m_stack(new StackView(this))
{
    m_header->setTextFormat(Qt::RichText);
    m_header->setWordWrap(true);
    m_header->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_liveProxy->setSourceModel(m_liveModel);
    m_siteProxy->setSourceModel(m_siteModel);
    m_live = makeTable(this, m_liveProxy);
    m_sites = makeTable(this, m_siteProxy);

    m_breakdown->setColumnCount(4);
    m_breakdown->setHorizontalHeaderLabels({tr("Category"), tr("Bytes"), tr("Share"), tr("Allocations")});
    m_breakdown->verticalHeader()->setVisible(false);
    m_breakdown->verticalHeader()->setDefaultSectionSize(m_breakdown->fontMetrics().height() + 6);
    m_breakdown->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_breakdown->setSelectionMode(QAbstractItemView::NoSelection);
    m_breakdown->setItemDelegateForColumn(2, new ShareBarDelegate(m_breakdown));
    m_breakdown->horizontalHeader()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    m_breakdown->horizontalHeader()->setSectionResizeMode(1, QHeaderView::ResizeToContents);
    m_breakdown->horizontalHeader()->setSectionResizeMode(2, QHeaderView::Stretch);
    m_breakdown->horizontalHeader()->setSectionResizeMode(3, QHeaderView::ResizeToContents);
    m_breakdown->setShowGrid(false);

    m_tabs->addTab(m_live, tr("Live allocations"));
    m_tabs->addTab(m_sites, tr("Call sites"));

    auto* headRow = new QHBoxLayout;
    headRow->addWidget(m_header, 1);
    headRow->addWidget(m_peakButton, 0, Qt::AlignTop);

    auto* left = new QWidget(this);
    auto* leftLayout = new QVBoxLayout(left);
    leftLayout->setContentsMargins(6, 4, 0, 0);
    leftLayout->addLayout(headRow);
    auto* inner = new QSplitter(Qt::Horizontal, left);
    inner->setObjectName(QStringLiteral("peakTablesSplit"));
    inner->addWidget(m_breakdown);
    inner->addWidget(m_tabs);
    inner->setStretchFactor(0, 2);
    inner->setStretchFactor(1, 5);
    inner->setSizes({380, 900});
    leftLayout->addWidget(inner, 1);

    auto* split = new QSplitter(Qt::Horizontal, this);
    split->setObjectName(QStringLiteral("peakSplit"));
    split->addWidget(left);
    split->addWidget(m_stack);
    split->setStretchFactor(0, 4);
    split->setStretchFactor(1, 1);
    split->setSizes({1100, 340});
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(split);

    connect(m_peakButton, &QPushButton::clicked, this, &PeakPanel::goToPeakRequested);
    connect(m_live->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex& current) { showLiveRow(current); });
    connect(m_sites->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex& current) { showSiteRow(current); });
}

PeakPanel::~PeakPanel() = default;

void PeakPanel::setDocument(std::shared_ptr<const Document> document, size_t deviceIndex)
{
    m_document = std::move(document);
    m_deviceIndex = deviceIndex;
    m_report = {};
    setEvent(peakEvent(*m_document->devices[deviceIndex].replay));
}

void PeakPanel::updateDocument(std::shared_ptr<const Document> document)
{
    // A grown document (live): a panel on the global peak follows it to the new one.
    const auto peakOf = [this](const Document& d) {
        return m_deviceIndex < d.devices.size() ? peakEvent(*d.devices[m_deviceIndex].replay) : int64_t{-2};
    };
    const bool atPeak = m_document && m_event == peakOf(*m_document);
    m_document = std::move(document);
    m_grown = true;
    setEvent(atPeak && peakOf(*m_document) != -2 ? peakOf(*m_document) : m_event);
    m_grown = false;
}

void PeakPanel::setEvent(int64_t event)
{
    if (!m_document)
        return;
    m_event = event;
    m_liveModel->setReport(nullptr, nullptr, nullptr);
    m_siteModel->setReport(nullptr, nullptr);
    if (!m_document->attributed()) {
        refreshPending(event);
        return;
    }
    const auto& made = m_document->peakReports;
    if (m_deviceIndex < made.size() && made[m_deviceIndex] && made[m_deviceIndex]->event == event)
        m_report = *made[m_deviceIndex]; // built off the GUI thread
    else
        m_report = buildPointReport(*m_document->attribution(), m_deviceIndex, event);
    refresh();
}

void PeakPanel::refreshPending(int64_t event)
{
    const DeviceModel& m = m_document->devices[m_deviceIndex];
    m_report = {};
    const bool peak = event == peakEvent(*m.replay);
    m_header->setText(tr("<span style=\"font-size:large\"><b>%1 %2</b></span> requested · %3 reserved<br>at %4 (event %5)"
                         "<br><i>Categorising…</i>")
                          .arg(peak ? tr("Global peak:") : tr("Selected time:"), bytesText(m.requestedAfter(event)),
                               bytesText(m.reservedAfter(event)), secondsText(m.x(std::max<int64_t>(event, 0), XAxisMode::Time)),
                               countText(event)));
    m_peakButton->setEnabled(!peak);
    m_breakdown->setRowCount(2);
    auto put = [this](int row, int col, const QString& text, Qt::Alignment align) {
        auto* item = new QTableWidgetItem(text);
        item->setTextAlignment(align | Qt::AlignVCenter);
        m_breakdown->setItem(row, col, item);
        return item;
    };
    put(0, 0, tr("Categorising…"), Qt::AlignLeft);
    for (int c = 1; c < 4; ++c)
        put(0, c, QString(), Qt::AlignRight);
    QFont bold = font();
    bold.setBold(true);
    put(1, 0, tr("Total requested"), Qt::AlignLeft)->setFont(bold);
    put(1, 1, bytesText(m.requestedAfter(event)), Qt::AlignRight)->setFont(bold);
    put(1, 2, QString(), Qt::AlignRight);
    put(1, 3, QString(), Qt::AlignRight);
    m_tabs->setTabText(0, tr("Live allocations (categorising…)"));
    m_tabs->setTabText(1, tr("Call sites (categorising…)"));
    m_stack->clear();
}

QString PeakPanel::headerText() const { return m_header->text(); }

void PeakPanel::refresh()
{
    const DeviceModel& m = m_document->devices[m_deviceIndex];
    const PointReport& r = m_report;
    QString where = tr("at %1 (event %2)").arg(secondsText(static_cast<double>(r.relativeUs) / 1e6), countText(r.event));
    if (m_document->attributed() && r.phase != Phase::Other)
        where += QStringLiteral(" · ") + phaseText(r.phase);
    if (r.iteration >= 0)
        where += tr(" · iteration %1 of %2").arg(r.iteration + 1).arg(m.attribution->iterations.size());
    m_header->setText(tr("<span style=\"font-size:large\"><b>%1 %2</b></span> requested · %3 reserved<br>%4%5")
                          .arg(r.globalPeak ? tr("Global peak:") : tr("Selected time:"), bytesText(r.requested),
                               bytesText(r.reserved), where,
                               m_document->attributed() ? QString()
                                                        : tr("<br><i>No category attribution is available for this "
                                                             "snapshot: all bytes are shown as one category.</i>")));
    m_peakButton->setEnabled(!r.globalPeak);

    std::vector<Category> rows;
    for (Category c : kAllCategories)
        if (m.categoryPresent[static_cast<size_t>(c)] || r.byCategory[static_cast<size_t>(c)] != 0)
            rows.push_back(c);
    std::stable_sort(rows.begin(), rows.end(), [&](Category a, Category b) {
        return r.byCategory[static_cast<size_t>(a)] > r.byCategory[static_cast<size_t>(b)];
    });
    m_breakdown->setRowCount(static_cast<int>(rows.size()) + 1);
    auto put = [this](int row, int col, const QString& text, Qt::Alignment align) {
        auto* item = new QTableWidgetItem(text);
        item->setTextAlignment(align | Qt::AlignVCenter);
        m_breakdown->setItem(row, col, item);
        return item;
    };
    for (size_t i = 0; i < rows.size(); ++i) {
        const Category c = rows[i];
        const size_t k = static_cast<size_t>(c);
        const int row = static_cast<int>(i);
        const double share = r.requested > 0 ? static_cast<double>(r.byCategory[k]) / static_cast<double>(r.requested) : 0;
        QTableWidgetItem* name = put(row, 0, m_document->attributed() ? categoryText(c) : tr("Not attributed"), Qt::AlignLeft);
        name->setData(Qt::DecorationRole, categoryQColor(c));
        name->setData(Qt::UserRole, static_cast<int>(c));
        put(row, 1, bytesText(r.byCategory[k]), Qt::AlignRight)->setData(Qt::UserRole, static_cast<qlonglong>(r.byCategory[k]));
        QTableWidgetItem* s = put(row, 2, percentText(share), Qt::AlignRight);
        s->setData(Qt::UserRole, share);
        s->setData(Qt::UserRole + 1, categoryQColor(c));
        put(row, 3, countText(r.countByCategory[k]), Qt::AlignRight);
    }
    const int totalRow = static_cast<int>(rows.size());
    QFont bold = font();
    bold.setBold(true);
    put(totalRow, 0, tr("Total requested"), Qt::AlignLeft)->setFont(bold);
    put(totalRow, 1, bytesText(r.requested), Qt::AlignRight)->setFont(bold);
    put(totalRow, 2, QString(), Qt::AlignRight);
    put(totalRow, 3, countText(static_cast<int64_t>(r.live.size())), Qt::AlignRight)->setFont(bold);

    m_liveModel->setReport(m_document.get(), &m, &m_report);
    m_siteModel->setReport(m_document.get(), &m_report);
    m_live->sortByColumn(ActiveAllocationModel::Size, Qt::DescendingOrder);
    m_sites->sortByColumn(CallSiteModel::Bytes, Qt::DescendingOrder);
    if (!m_grown) { // a grown document (live, every few seconds) keeps the widths: measuring cost the GUI 8-42 ms
        m_live->resizeColumnsToContents();
        m_sites->resizeColumnsToContents();
        m_live->setColumnWidth(ActiveAllocationModel::TopFrame,
                               std::min(m_live->columnWidth(ActiveAllocationModel::TopFrame), 360));
        m_sites->setColumnWidth(CallSiteModel::TopFrame, std::min(m_sites->columnWidth(CallSiteModel::TopFrame), 300));
    }
    m_tabs->setTabText(0, tr("Live allocations (%1)").arg(countText(static_cast<int64_t>(r.live.size()))));
    m_tabs->setTabText(1, tr("Call sites (%1)").arg(countText(static_cast<int64_t>(r.callSites.size()))));
    m_stack->clear();
}

void PeakPanel::showLiveRow(const QModelIndex& proxyIndex)
{
    if (!proxyIndex.isValid() || !m_document)
        return;
    const QModelIndex src = m_liveProxy->mapToSource(proxyIndex);
    const ActiveAllocation& l = m_report.live[static_cast<size_t>(src.row())];
    m_stack->setAllocation(m_document.get(), m_deviceIndex, l.id,
                           tr("<b>%1</b> %2 · allocation #%3")
                               .arg(bytesText(l.size), m_document->attributed() ? categoryText(l.category) : QString())
                               .arg(l.id.value));
    emit allocationSelected(l.id);
}

void PeakPanel::showSiteRow(const QModelIndex& proxyIndex)
{
    if (!proxyIndex.isValid() || !m_document)
        return;
    const QModelIndex src = m_siteProxy->mapToSource(proxyIndex);
    const CallSite& s = m_report.callSites[static_cast<size_t>(src.row())];
    m_stack->setStack(m_document.get(), s.stack,
                      tr("<b>%1</b> in %2 live allocations from this stack").arg(bytesText(s.bytes), countText(s.count)));
}

} // namespace memscope
