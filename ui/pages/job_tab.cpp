#include "ui/pages/job_tab.h"

#include "ui/plot/rank_multiples_view.h"
#include "ui/models/rank_table_model.h"
#include "ui/style/text_format.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

namespace memscope {

JobTab::JobTab(std::shared_ptr<const RankSet> set, QString title, QWidget* parent)
    : QWidget(parent), m_set(std::move(set)), m_title(std::move(title)), m_info(new QLabel(this)), m_align(new QComboBox(this)),
      m_table(new QTableView(this)), m_model(new RankTableModel(this)), m_proxy(new QSortFilterProxyModel(this)),
      m_multiples(new RankMultiplesView(this))
{
    m_model->setRankSet(m_set);
    m_proxy->setSourceModel(m_model);
    m_proxy->setSortRole(RankTableModel::SortRole);
    m_table->setModel(m_proxy);
    m_table->setSortingEnabled(true);
    m_table->sortByColumn(RankTableModel::Rank, Qt::AscendingOrder);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->verticalHeader()->hide();
    m_table->horizontalHeader()->setStretchLastSection(true);
    // Each column as wide as its header and cells ("Communication" was cut at 1000 px).
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->setToolTip(tr("Double-click a rank to open its snapshot in full"));
    m_multiples->setRankSet(m_set);

    m_align->addItem(tr("Align by wall clock"));
    m_align->addItem(tr("Align by iteration"));
    m_align->setToolTip(tr("Small multiples' x axis: seconds from the job's first event, or iterations (step k at x = k)"));
    connect(m_align, &QComboBox::currentIndexChanged, this, [this](int i) {
        m_multiples->setAlignment(i == 1 ? RankMultiplesView::Alignment::Iteration : RankMultiplesView::Alignment::WallClock);
    });

    updateInfo();

    auto* bar = new QHBoxLayout;
    bar->addWidget(m_info, 1);
    bar->addWidget(m_align);
    auto* split = new QSplitter(Qt::Vertical, this);
    split->addWidget(m_table);
    split->addWidget(m_multiples);
    split->setStretchFactor(0, 1);
    split->setStretchFactor(1, 2);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(bar);
    layout->addWidget(split, 1);

    connect(m_table, &QTableView::activated, this,
            [this](const QModelIndex& i) { activate(m_proxy->data(i, RankTableModel::RankIndexRole).toInt()); });
    connect(m_multiples, &RankMultiplesView::rankActivated, this, [this](int index) {
        selectRank(index);
        activate(index);
    });
    if (m_set->size())
        selectRank(static_cast<int>(m_set->focusRank()));
}

void JobTab::updateInfo()
{
    int failed = 0, ooms = 0, live = 0, down = 0;
    for (const RankEntry& e : m_set->ranks()) {
        failed += e.ok() || !e.live.empty() ? 0 : 1;
        ooms += e.ok() && e.summary.oom ? 1 : 0;
        live += e.live.empty() ? 0 : 1;
        down += e.live.rfind("dead", 0) == 0 || e.live.rfind("failed", 0) == 0 || e.live.rfind("lagging", 0) == 0 ? 1 : 0;
    }
    QString text = tr("%1 ranks · mean peak %2").arg(m_set->size()).arg(bytesText(static_cast<int64_t>(m_set->meanPeak())));
    if (ooms)
        text += tr(" · <b>%1 rank(s) out of memory</b>").arg(ooms);
    if (failed)
        text += tr(" · <i>%1 rank(s) could not be read</i>").arg(failed);
    if (down)
        text += tr(" · <b>%1 rank(s) dead or lagging</b>").arg(down);
    if (m_set->size() > static_cast<size_t>(RankMultiplesView::kMaxPlots))
        text += tr(" · timelines of the %1 highest").arg(RankMultiplesView::kMaxPlots);
    m_info->setText(text);
    m_table->setColumnHidden(RankTableModel::Live, live == 0);
}

void JobTab::setRankSet(std::shared_ptr<const RankSet> set)
{
    const int selected = selectedRank();
    const int rank = selected >= 0 && static_cast<size_t>(selected) < m_set->size()
                         ? m_set->ranks()[static_cast<size_t>(selected)].summary.rank
                         : -1;
    m_set = std::move(set);
    m_model->setRankSet(m_set);
    m_multiples->setRankSet(m_set);
    updateInfo();
    if (const auto i = rank >= 0 ? m_set->findRank(rank) : std::nullopt)
        selectRank(static_cast<int>(*i));
    else if (m_set->size())
        selectRank(static_cast<int>(m_set->focusRank()));
}

int JobTab::selectedRank() const
{
    const QModelIndexList rows = m_table->selectionModel()->selectedRows();
    return rows.isEmpty() ? -1 : m_proxy->data(rows.front(), RankTableModel::RankIndexRole).toInt();
}

void JobTab::selectRank(int index)
{
    const QModelIndex source = m_model->index(index, 0);
    if (!source.isValid())
        return;
    const QModelIndex row = m_proxy->mapFromSource(source);
    m_table->selectRow(row.row());
    m_table->scrollTo(row);
}

void JobTab::activate(int index)
{
    if (index < 0 || static_cast<size_t>(index) >= m_set->size())
        return;
    const RankEntry& e = m_set->ranks()[static_cast<size_t>(index)];
    if (!e.canLoad()) {
        emit statusMessage(
            tr("Rank %1: only its summary is here; copy its snapshot next to it to open it in full").arg(e.summary.rank));
        return;
    }
    emit openRank(QString::fromStdString(e.source.path));
}

} // namespace memscope
