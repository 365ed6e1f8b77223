#include "ui/pages/flame_panel.h"

#include "ui/models/flame_model.h"
#include "ui/pages/flame_view.h"
#include "ui/style/text_format.h"
#include "query/point_report.h"
#include "query/stack_tree.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QScrollArea>
#include <QSplitter>
#include <QStandardItemModel>
#include <QTreeView>
#include <QVBoxLayout>

namespace memscope {

FlamePanel::FlamePanel(QWidget* parent)
    : QWidget(parent), m_whenBox(new QComboBox(this)), m_framesBox(new QComboBox(this)), m_summary(new QLabel(this)),
      m_breadcrumb(new QLabel(this)), m_scroll(new QScrollArea(this)), m_model(new FlameModel(this)),
      m_view(new FlameView(m_model)), m_table(new QTreeView(this))
{
    m_whenBox->addItem(tr("At the global peak"));
    m_whenBox->addItem(tr("At the selected time"));
    m_whenBox->addItem(tr("Over the selected range (bytes × lifetime)"));
    m_whenBox->setCurrentIndex(1);
    m_whenBox->setToolTip(tr("Bytes active at the peak or at the selected time; over a range (Shift+drag in the timeline), "
                             "each allocation weighs its size × its lifetime inside the range"));
    m_framesBox->addItem(tr("All frames"));
    m_framesBox->addItem(tr("Your frames + op"));
    m_framesBox->setToolTip(tr("Every frame, or only your code's frames ending in the operation that allocated"));
    m_summary->setTextFormat(Qt::PlainText);
    m_summary->setWordWrap(true);
    m_summary->setMinimumWidth(80);
    m_breadcrumb->setTextFormat(Qt::RichText);
    m_breadcrumb->setWordWrap(true);
    m_breadcrumb->setToolTip(tr("Click a frame to zoom into it and filter the allocations to it; click here to go back"));

    m_scroll->setWidget(m_view);
    m_scroll->setWidgetResizable(true);
    m_scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    m_scroll->setAlignment(Qt::AlignTop | Qt::AlignLeft);

    m_table->setModel(m_model);
    m_table->setUniformRowHeights(true);
    m_table->setAlternatingRowColors(true);
    m_table->header()->setStretchLastSection(false);
    m_table->header()->setSectionResizeMode(FlameModel::FrameColumn, QHeaderView::Stretch);
    m_table->setColumnHidden(FlameModel::Location, true);
    m_table->setColumnHidden(FlameModel::Count, true);

    auto* top = new QHBoxLayout;
    top->setContentsMargins(6, 4, 6, 0);
    top->addWidget(m_whenBox);
    top->addWidget(m_framesBox);
    top->addWidget(m_summary, 1);

    auto* left = new QWidget(this);
    auto* leftLayout = new QVBoxLayout(left);
    leftLayout->setContentsMargins(6, 0, 0, 0);
    leftLayout->setSpacing(2);
    leftLayout->addWidget(m_breadcrumb);
    leftLayout->addWidget(m_scroll, 1);
    auto* split = new QSplitter(Qt::Horizontal, this);
    split->setObjectName(QStringLiteral("flameSplit"));
    split->addWidget(left);
    split->addWidget(m_table);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 1);
    split->setSizes({900, 330});
    split->setChildrenCollapsible(true);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    layout->addLayout(top);
    layout->addWidget(split, 1);

    connect(m_whenBox, &QComboBox::currentIndexChanged, this, [this](int i) {
        m_when = static_cast<When>(i);
        m_keepPath.clear();
        invalidate();
    });
    connect(m_framesBox, &QComboBox::currentIndexChanged, this, [this] {
        m_keepPath.clear();
        invalidate();
        emit frameFilterRequested(0);
    });
    connect(m_view, &FlameView::nodeClicked, this, [this](int node) { emit frameFilterRequested(node); });
    connect(m_view, &FlameView::zoomChanged, this, [this](int node) {
        m_keepPath = pathOf(node);
        m_view->setMarkedNode(node);
        updateBreadcrumb();
        selectInTable(node);
    });
    connect(m_breadcrumb, &QLabel::linkActivated, this, [this](const QString& link) {
        const int node = link.toInt();
        m_view->setZoomNode(node);
        emit frameFilterRequested(node);
    });
    connect(m_table, &QTreeView::activated, this, [this](const QModelIndex& index) {
        const int node = index.data(FlameModel::NodeRole).toInt();
        m_view->setZoomNode(node);
        emit frameFilterRequested(node);
    });
    updateBreadcrumb();
    if (auto* items = qobject_cast<QStandardItemModel*>(m_whenBox->model()))
        items->item(2)->setEnabled(false);
}

FlamePanel::~FlamePanel() = default;

void FlamePanel::setDocument(std::shared_ptr<const Document> document, size_t deviceIndex)
{
    m_document = std::move(document);
    m_deviceIndex = deviceIndex;
    m_event = peakEvent(*m_document->devices[deviceIndex].replay);
    m_keepPath.clear();
    clearRange();
    invalidate();
}

void FlamePanel::updateDocument(std::shared_ptr<const Document> document)
{
    m_document = std::move(document);
    invalidate();
}

void FlamePanel::setSelectedEvent(int64_t event)
{
    m_event = event;
    if (m_when == When::SelectedTime)
        invalidate();
}

void FlamePanel::setRange(int64_t firstEvent, int64_t lastEvent)
{
    m_rangeFirst = std::min(firstEvent, lastEvent);
    m_rangeLast = std::max(firstEvent, lastEvent);
    if (auto* items = qobject_cast<QStandardItemModel*>(m_whenBox->model()))
        items->item(2)->setEnabled(true);
    if (m_when == When::Range)
        invalidate();
    else
        setWhen(When::Range); // rebuilds through the selector's signal
}

void FlamePanel::clearRange()
{
    m_rangeFirst = m_rangeLast = -1;
    if (auto* items = qobject_cast<QStandardItemModel*>(m_whenBox->model()))
        items->item(2)->setEnabled(false);
    if (m_when == When::Range)
        setWhen(When::SelectedTime);
}

void FlamePanel::setWhen(When when)
{
    if (when == When::Range && m_rangeFirst < 0)
        when = When::SelectedTime;
    m_whenBox->setCurrentIndex(static_cast<int>(when)); // invalidates through the signal when it changes
    m_when = when;
}

void FlamePanel::setUserFramesOnly(bool on) { m_framesBox->setCurrentIndex(on ? 1 : 0); }

void FlamePanel::invalidate()
{
    m_dirty = true;
    if (isVisible())
        rebuild();
}

void FlamePanel::showEvent(QShowEvent* event)
{
    QWidget::showEvent(event);
    if (m_dirty)
        rebuild();
}

std::shared_ptr<const StackTree> FlamePanel::tree()
{
    if (m_dirty)
        rebuild();
    return m_tree;
}

void FlamePanel::rebuild()
{
    m_dirty = false;
    if (!m_document || !m_document->attributed() || !m_document->frames()) {
        m_tree = nullptr;
        m_model->setTree(nullptr, nullptr);
        m_summary->setText(m_document ? tr("Categorising…") : QString());
        updateBreadcrumb();
        return;
    }
    const Replay& replay = *m_document->analysis->replay;
    const DeviceReplay& d = replay.devices[m_deviceIndex];
    const StackTreeFrames frames = m_framesBox->currentIndex() == 1 ? StackTreeFrames::UserAndOp : StackTreeFrames::All;
    std::shared_ptr<const StackTree> tree;
    QString summary;
    if (m_when == When::Range && m_rangeFirst >= 0) {
        tree = stackTreeOverRange(replay, m_deviceIndex, *m_document->frames(), m_rangeFirst, m_rangeLast, frames);
        summary = tr("Events %1 – %2: %3 (bytes × lifetime in the range), %4 allocations active")
                      .arg(countText(tree->firstEvent), countText(tree->lastEvent))
                      .arg(tree->unit == StackTreeUnit::ByteSeconds
                               ? bytesText(static_cast<int64_t>(tree->root().weight + 0.5)) + tr("·s")
                               : bytesText(static_cast<int64_t>(tree->root().weight + 0.5)) + tr("·events"),
                           countText(tree->root().count));
    } else {
        const int64_t event = m_when == When::Peak ? peakEvent(d) : m_event;
        tree = stackTreeAt(replay, m_deviceIndex, *m_document->frames(), event, frames);
        summary = tr("%1 active %2 (event %3) in %4 allocations")
                      .arg(bytesText(tree->root().bytes),
                           event == peakEvent(d) ? tr("at the global peak") : tr("at the selected time"), countText(event),
                           countText(tree->root().count));
    }
    m_summary->setText(summary);
    m_summary->setToolTip(summary);
    const auto keep = m_keepPath;
    m_tree = tree;
    m_model->setTree(std::move(tree), m_document->frames());
    m_table->expandToDepth(1);
    m_table->resizeColumnToContents(FlameModel::Weight);
    m_table->resizeColumnToContents(FlameModel::Share);
    zoomToPath(keep);
    updateBreadcrumb();
}

std::vector<std::pair<int32_t, std::string>> FlamePanel::pathOf(int node) const
{
    std::vector<std::pair<int32_t, std::string>> out;
    const StackTree* t = m_model->tree();
    if (!t)
        return out;
    for (int32_t i : t->path(node))
        out.emplace_back(t->node(i).frame.value, t->node(i).label);
    return out;
}

void FlamePanel::zoomToPath(const std::vector<std::pair<int32_t, std::string>>& path)
{
    const StackTree* t = m_model->tree();
    int32_t at = 0;
    for (const auto& [frame, label] : path) {
        if (!t)
            break;
        int32_t next = -1;
        for (int32_t c : t->node(at).children)
            if (t->node(c).frame.value == frame && t->node(c).label == label) {
                next = c;
                break;
            }
        if (next < 0)
            break;
        at = next;
    }
    m_view->setZoomNode(at);
    m_view->setMarkedNode(at == 0 ? -1 : at);
    m_keepPath = pathOf(at);
    updateBreadcrumb();
}

std::vector<uint8_t> FlamePanel::stacksUnder(int node) const
{
    const StackTree* t = m_model->tree();
    if (!t || !m_document || !m_document->frames() || node <= 0)
        return {};
    return memscope::stacksUnder(*t, node, *m_document->frames());
}

QString FlamePanel::nodeText(int node) const { return m_model->nodeText(node); }

QString FlamePanel::summaryText() const { return m_summary->text(); }
QString FlamePanel::breadcrumbText() const { return m_breadcrumb->text(); }

void FlamePanel::updateBreadcrumb()
{
    const StackTree* t = m_model->tree();
    if (!t) {
        m_breadcrumb->setText(QString());
        return;
    }
    QString text = QStringLiteral("<a href=\"0\">all</a>");
    const std::vector<int32_t> path = t->path(m_view->zoomNode());
    const size_t shown = 4;
    for (size_t k = 0; k < path.size(); ++k) {
        if (path.size() > shown && k > 0 && k < path.size() - shown + 1) {
            if (k == 1)
                text += QStringLiteral(" › …");
            continue;
        }
        const QString name = m_model->nodeText(path[k]).toHtmlEscaped();
        text += QStringLiteral(" › <a href=\"%1\">%2</a>").arg(path[k]).arg(name);
    }
    if (path.empty())
        text += tr(" · click a frame to zoom in and filter the allocations to it");
    m_breadcrumb->setText(text);
}

void FlamePanel::selectInTable(int node)
{
    const QModelIndex index = m_model->indexOfNode(node);
    if (!index.isValid())
        return;
    m_table->scrollTo(index);
    m_table->setCurrentIndex(index);
}

} // namespace memscope
