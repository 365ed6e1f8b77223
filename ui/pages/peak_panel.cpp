#include "ui/pages/peak_panel.h"

#include "ui/models/call_site_model.h"
#include "ui/models/active_allocation_model.h"
#include "ui/models/module_breakdown_model.h"
#include "ui/style/plot_theme.h"
#include "ui/pages/share_bar_delegate.h"
#include "ui/pages/stack_view.h"
#include "ui/style/text_format.h"
#include "query/range_report.h"

#include "snapshot/stack_labels.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QScrollBar>
#include <QSignalBlocker>
#include <QSortFilterProxyModel>
#include <QSpinBox>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <QTableWidget>
#include <QVBoxLayout>

#include <numeric>

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
    t->setTextElideMode(Qt::ElideMiddle); // a module path's both ends say most
    proxy->setSortRole(Qt::UserRole);
    return t;
}

// Puts the given logical sections first, in that order; the others keep theirs after them.
void setVisualOrder(QHeaderView* header, std::initializer_list<int> first)
{
    int to = 0;
    for (int logical : first)
        header->moveSection(header->visualIndex(logical), to++);
}

} // namespace

PeakPanel::PeakPanel(QWidget* parent)
    : QWidget(parent), m_header(new QLabel(this)), m_peakButton(new QPushButton(tr("Go to global peak"), this)),
      m_breakdown(new QTableWidget(this)), m_tabs(new QTabWidget(this)), m_liveModel(new ActiveAllocationModel(this)),
      m_siteModel(new CallSiteModel(this)), m_liveProxy(new QSortFilterProxyModel(this)),
      m_siteProxy(new QSortFilterProxyModel(this)), m_stack(new StackView(this))
{
    m_moduleModel = new ModuleBreakdownModel(this);
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

    // Modules: the live bytes by nn.Module path, cut at a depth the user picks.
    auto* modulesPage = new QWidget(this);
    m_modules = new QTableView(modulesPage);
    m_modules->setModel(m_moduleModel);
    m_modules->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_modules->setSelectionMode(QAbstractItemView::SingleSelection);
    m_modules->setAlternatingRowColors(true);
    m_modules->verticalHeader()->setVisible(false);
    m_modules->verticalHeader()->setDefaultSectionSize(m_modules->fontMetrics().height() + 6);
    m_modules->horizontalHeader()->setHighlightSections(false);
    m_modules->horizontalHeader()->setSectionResizeMode(ModuleBreakdownModel::ModuleColumn, QHeaderView::Stretch);
    m_modules->setItemDelegateForColumn(ModuleBreakdownModel::Share, new ShareBarDelegate(m_modules));
    m_modules->setWordWrap(false);
    m_modules->setTextElideMode(Qt::ElideMiddle); // a path's both ends say most
    m_depth = new QSpinBox(modulesPage);
    m_depth->setRange(1, 1);
    m_depth->setToolTip(tr("How many levels of the module path to group by: 1 is the top-level blocks"));
    m_moduleNote = new QLabel(modulesPage);
    m_moduleNote->setWordWrap(false);
    auto* depthLabel = new QLabel(tr("Depth"), modulesPage);
    depthLabel->setBuddy(m_depth);
    auto* depthRow = new QHBoxLayout;
    depthRow->setContentsMargins(4, 2, 4, 0);
    depthRow->addWidget(depthLabel);
    depthRow->addWidget(m_depth);
    depthRow->addSpacing(8);
    depthRow->addWidget(m_moduleNote, 1);
    auto* modulesLayout = new QVBoxLayout(modulesPage);
    modulesLayout->setContentsMargins(0, 0, 0, 0);
    modulesLayout->setSpacing(2);
    modulesLayout->addLayout(depthRow);
    modulesLayout->addWidget(m_modules, 1);
    m_tabs->addTab(modulesPage, tr("Modules"));
    connect(m_depth, &QSpinBox::valueChanged, this, [this] {
        m_depthChosen = true;
        refreshModules();
    });

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
    connect(m_modules->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex& current) { showModuleRow(current); });
}

PeakPanel::~PeakPanel() = default;

void PeakPanel::setDocument(std::shared_ptr<const Document> document, size_t deviceIndex)
{
    m_document = std::move(document);
    m_deviceIndex = deviceIndex;
    m_report = {};
    setEvent(peakEvent(*m_document->devices[deviceIndex].replay));
}

void PeakPanel::updateDocument(std::shared_ptr<const Document> document, bool keepColumnWidths)
{
    // A grown document (live): a panel on the global peak follows it to the new one.
    const auto peakOf = [this](const Document& d) {
        return m_deviceIndex < d.devices.size() ? peakEvent(*d.devices[m_deviceIndex].replay) : int64_t{-2};
    };
    const bool atPeak = m_document && m_event == peakOf(*m_document);
    m_document = std::move(document);
    m_grown = keepColumnWidths;
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
    m_moduleModel->clear();
    if (!m_document->attributed()) {
        refreshPending(event);
        return;
    }
    if (hasRange()) {
        RangeReport range = buildRangeReport(*m_document->attribution(), m_deviceIndex, m_rangeFirst, m_rangeLast);
        m_report = std::move(range.active);
        m_rangeByteSeconds = range.byteSeconds;
        m_rangeTimed = range.timed;
    } else {
        const auto& made = m_document->peakReports;
        if (m_deviceIndex < made.size() && made[m_deviceIndex] && made[m_deviceIndex]->event == event)
            m_report = *made[m_deviceIndex]; // built off the GUI thread
        else
            m_report = buildPointReport(*m_document->attribution(), m_deviceIndex, event);
    }
    applyStackFilter();
    refresh();
    showRangeText();
}

void PeakPanel::setRange(int64_t firstEvent, int64_t lastEvent)
{
    m_rangeFirst = std::max<int64_t>(0, std::min(firstEvent, lastEvent));
    m_rangeLast = std::max(firstEvent, lastEvent);
    setEvent(m_event);
}

void PeakPanel::clearRange()
{
    if (!hasRange())
        return;
    m_rangeFirst = m_rangeLast = -1;
    setEvent(m_event);
}

void PeakPanel::setStackFilter(std::vector<uint8_t> stackMask, const QString& label)
{
    m_stackMask = std::move(stackMask);
    m_filterLabel = m_stackMask.empty() ? QString() : label;
    setEvent(m_event);
}

// Keeps the allocations and call sites under the filter's frame; the totals stay the point's.
void PeakPanel::applyStackFilter()
{
    m_unfilteredCount = static_cast<int64_t>(m_report.live.size());
    if (m_stackMask.empty())
        return;
    const size_t none = m_stackMask.size() - 1;
    auto kept = [&](StackId s) {
        const size_t k = s.valid() ? static_cast<size_t>(s.value) : none;
        return k < m_stackMask.size() && m_stackMask[k] != 0;
    };
    std::erase_if(m_report.live, [&](const ActiveAllocation& a) { return !kept(a.stack); });
    std::erase_if(m_report.callSites, [&](const CallSite& c) { return !kept(c.stack); });
}

// The header, total row and tab titles of a range or a filter (refresh() writes a point's).
void PeakPanel::showRangeText()
{
    const PointReport& r = m_report;
    QString filter;
    if (!m_stackMask.empty()) {
        int64_t bytes = 0;
        for (const ActiveAllocation& a : r.live)
            bytes += a.size;
        filter = tr("<br>Filter: <b>%1</b> · %2 in %3 of %4 allocations")
                     .arg(m_filterLabel.toHtmlEscaped(), bytesText(bytes), countText(static_cast<int64_t>(r.live.size())),
                          countText(m_unfilteredCount));
    }
    const QString filtered = m_stackMask.empty() ? QString() : tr(", filtered");
    if (!hasRange()) {
        if (!filter.isEmpty())
            m_header->setText(m_header->text() + filter);
        m_tabs->setTabText(0, tr("Live allocations (%1%2)").arg(countText(static_cast<int64_t>(r.live.size())), filtered));
        m_tabs->setTabText(1, tr("Call sites (%1%2)").arg(countText(static_cast<int64_t>(r.callSites.size())), filtered));
        return;
    }
    const DeviceModel& m = m_document->devices[m_deviceIndex];
    const QString weight = bytesText(static_cast<int64_t>(m_rangeByteSeconds + 0.5)) + (m_rangeTimed ? tr("·s") : tr("·events"));
    m_header->setText(
        tr("<span style=\"font-size:large\"><b>Active during the range: %1</b></span> in %2 allocations, "
           "each counted once (not all at the same time) · bytes × lifetime %3"
           "<br>%4 – %5 (events %6 – %7) · range peak %8 at event %9%10")
            .arg(bytesText(r.requested), countText(m_unfilteredCount), weight, secondsText(m.x(m_rangeFirst, XAxisMode::Time)),
                 secondsText(m.x(std::min<int64_t>(m_rangeLast, m.eventCount() - 1), XAxisMode::Time)), countText(m_rangeFirst),
                 countText(m_rangeLast), bytesText(r.event >= 0 ? m.requestedAfter(r.event) : 0), countText(r.event))
            .arg(filter));
    m_peakButton->setEnabled(true);
    if (QTableWidgetItem* total = m_breakdown->item(m_breakdown->rowCount() - 1, 0))
        total->setText(tr("Total active in range"));
    m_tabs->setTabText(0, tr("Active in range (%1%2)").arg(countText(static_cast<int64_t>(r.live.size())), filtered));
    m_tabs->setTabText(1, tr("Call sites in range (%1%2)").arg(countText(static_cast<int64_t>(r.callSites.size())), filtered));
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
    m_tabs->setTabText(2, tr("Modules (categorising…)"));
    m_moduleNote->clear();
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
    // What made the bytes first: the op and the module right after the size and category (the
    // user's frame is the training loop's one line for every activation of a model). Set after
    // each reset of the models.
    setVisualOrder(m_live->horizontalHeader(),
                   {ActiveAllocationModel::Size, ActiveAllocationModel::CategoryColumn, ActiveAllocationModel::Op,
                    ActiveAllocationModel::Module, ActiveAllocationModel::TopFrame, ActiveAllocationModel::PhaseColumn});
    setVisualOrder(m_sites->horizontalHeader(), {CallSiteModel::Bytes, CallSiteModel::Share, CallSiteModel::CategoryColumn,
                                                 CallSiteModel::Op, CallSiteModel::Module, CallSiteModel::Count});
    m_live->sortByColumn(ActiveAllocationModel::Size, Qt::DescendingOrder);
    m_sites->sortByColumn(CallSiteModel::Bytes, Qt::DescendingOrder);
    if (!m_grown) { // a grown document (live, every few seconds) keeps the widths: measuring cost the GUI 8-42 ms
        m_live->resizeColumnsToContents();
        m_sites->resizeColumnsToContents();
        m_live->setColumnWidth(ActiveAllocationModel::TopFrame,
                               std::min(m_live->columnWidth(ActiveAllocationModel::TopFrame), 360));
        m_sites->setColumnWidth(CallSiteModel::TopFrame, std::min(m_sites->columnWidth(CallSiteModel::TopFrame), 300));
        // The stack column keeps its header's and text's width (up to 520 px; a scroll bar where
        // the pane is narrower), not the 20 px a stretched last column had left at 1000 px.
        m_sites->horizontalHeader()->setStretchLastSection(false);
        m_sites->setColumnWidth(CallSiteModel::StackColumn, std::min(m_sites->columnWidth(CallSiteModel::StackColumn), 520));
        for (QTableView* t : {m_live, m_sites}) {
            const int op = t == m_live ? int(ActiveAllocationModel::Op) : int(CallSiteModel::Op);
            const int module = t == m_live ? int(ActiveAllocationModel::Module) : int(CallSiteModel::Module);
            // Op up to 170 px and the module up to 290, narrowed (to 100 and 160 at least) where that
            // keeps both inside the view; cells elide in the middle. (The tab widget's width: a
            // table in a hidden tab has not been laid out.)
            const int room = m_tabs->width() - 8 - t->verticalScrollBar()->sizeHint().width() -
                             t->horizontalHeader()->sectionPosition(op);
            int opWidth = std::min(t->columnWidth(op), 170);
            int moduleWidth = std::min(t->columnWidth(module), 290);
            if (opWidth + moduleWidth > room) {
                moduleWidth = std::max(std::min(moduleWidth, 160), room - opWidth);
                opWidth = std::max(std::min(opWidth, 100), room - moduleWidth);
            }
            t->setColumnWidth(op, opWidth);
            t->setColumnWidth(module, moduleWidth);
        }
    }
    refreshModules();
    m_tabs->setTabText(0, tr("Live allocations (%1)").arg(countText(static_cast<int64_t>(r.live.size()))));
    m_tabs->setTabText(1, tr("Call sites (%1)").arg(countText(static_cast<int64_t>(r.callSites.size()))));
    m_stack->clear();
}

void PeakPanel::refreshModules()
{
    if (!m_document || !m_document->attributed() || !m_document->frames()) {
        m_moduleModel->clear();
        return;
    }
    const size_t maxDepth = moduleBreakdown(m_report, *m_document->frames(), 1).maxDepth;
    {
        const QSignalBlocker block(m_depth);
        const int wanted = m_depthChosen ? m_depth->value() : 3;
        m_depth->setRange(1, std::max<int>(1, static_cast<int>(maxDepth)));
        m_depth->setValue(std::clamp(wanted, 1, std::max<int>(1, static_cast<int>(maxDepth))));
    }
    ModuleBreakdown b = moduleBreakdown(m_report, *m_document->frames(), static_cast<size_t>(m_depth->value()));
    const int64_t inModules = std::accumulate(b.rows.begin(), b.rows.end(), int64_t{0},
                                              [](int64_t sum, const ModuleShare& m) { return sum + (m.inModule ? m.bytes : 0); });
    m_moduleNote->setText(
        maxDepth == 0
            ? tr("No live allocation's stack shows a module's forward")
            : tr("%1 in modules, up to %2 levels deep").arg(bytesText(inModules)).arg(static_cast<qulonglong>(maxDepth)));
    const size_t rows = b.rows.size();
    m_moduleModel->setBreakdown(std::move(b), m_document->attributed());
    m_modules->resizeColumnsToContents();
    m_modules->horizontalHeader()->setSectionResizeMode(ModuleBreakdownModel::ModuleColumn, QHeaderView::Stretch);
    m_tabs->setTabText(2, tr("Modules (%1)").arg(countText(static_cast<int64_t>(rows))));
}

void PeakPanel::showModuleRow(const QModelIndex& index)
{
    // The stack of the largest live allocation under the module, as an example of it.
    if (!index.isValid() || !m_document || static_cast<size_t>(index.row()) >= m_moduleModel->breakdown().rows.size())
        return;
    const ModuleShare& m = m_moduleModel->breakdown().rows[static_cast<size_t>(index.row())];
    const FrameClassifier& frames = *m_document->frames();
    const size_t depth = m_moduleModel->breakdown().depth;
    for (const ActiveAllocation& l : m_report.live) { // largest first
        const ModulePath& p = frames.modulePath(l.stack);
        const bool in = m.inModule ? p.depth() > 0 && p.prefix(depth) == m.module
                                   : p.depth() == 0 && m.module.ends_with(std::string(categoryLabel(l.category)));
        if (!in)
            continue;
        m_stack->setAllocation(m_document.get(), m_deviceIndex, l.id,
                               tr("<b>%1</b> in %2 live allocations under this module; the largest, %3:")
                                   .arg(bytesText(m.bytes), countText(m.count), bytesText(l.size)));
        emit allocationSelected(l.id);
        return;
    }
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
