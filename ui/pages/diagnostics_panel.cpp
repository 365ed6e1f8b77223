#include "ui/pages/diagnostics_panel.h"

#include "snapshot/frame_classifier.h"
#include "replay/replay.h"
#include "io/summary_writer.h"
#include "ui/style/text_format.h"

#include <QHBoxLayout>
#include <QLocale>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QSplitter>
#include <QStyle>
#include <QTextBrowser>
#include <QTreeWidget>
#include <QVBoxLayout>

namespace memscope {

namespace {

enum Column { ColSeverity, ColKind, ColMessage, ColBytes, ColPerIteration, ColCount };
enum EvidenceColumn { EvSite, EvBytes, EvCount, EvColCount };
constexpr int kStackRole = Qt::UserRole + 1;
constexpr int kAllocationRole = Qt::UserRole + 2;

QIcon severityIcon(const QWidget* w, Severity s)
{
    switch (s) {
    case Severity::Error: return w->style()->standardIcon(QStyle::SP_MessageBoxCritical);
    case Severity::Warning: return w->style()->standardIcon(QStyle::SP_MessageBoxWarning);
    case Severity::Info: return w->style()->standardIcon(QStyle::SP_MessageBoxInformation);
    }
    return {};
}

QString esc(const std::string& s) { return QString::fromStdString(s).toHtmlEscaped(); }

} // namespace

DiagnosticsPanel::DiagnosticsPanel(QWidget* parent) : QWidget(parent)
{
    m_summary = new QLabel(tr("No snapshot"), this);
    m_list = new QTreeWidget(this);
    m_list->setObjectName(QStringLiteral("diagnosticsList"));
    m_list->setRootIsDecorated(false);
    m_list->setUniformRowHeights(true);
    m_list->setColumnCount(ColCount);
    m_list->setHeaderLabels({tr("Severity"), tr("Finding"), tr("Message"), tr("Bytes"), tr("Per iteration")});
    m_list->header()->setSectionResizeMode(ColMessage, QHeaderView::Stretch);
    m_list->header()->setStretchLastSection(false);

    m_detail = new QTextBrowser(this);
    m_detail->setObjectName(QStringLiteral("diagnosticDetail"));
    m_detail->setOpenLinks(false);

    m_evidence = new QTreeWidget(this);
    m_evidence->setObjectName(QStringLiteral("diagnosticEvidence"));
    m_evidence->setColumnCount(EvColCount);
    m_evidence->setHeaderLabels({tr("Evidence: call site / allocation"), tr("Bytes"), tr("Blocks")});
    m_evidence->header()->setSectionResizeMode(EvSite, QHeaderView::Stretch);
    m_evidence->header()->setStretchLastSection(false);

    m_showMoment = new QPushButton(tr("Show moment"), this);
    m_showMoment->setToolTip(tr("Select the event this finding is about in the timelines"));
    m_showMoment->setEnabled(false);

    auto* right = new QWidget(this);
    auto* rightLayout = new QVBoxLayout(right);
    rightLayout->setContentsMargins(0, 0, 0, 0);
    auto* detailSplit = new QSplitter(Qt::Vertical, right);
    detailSplit->setObjectName(QStringLiteral("diagnosticsDetailSplit"));
    detailSplit->addWidget(m_detail);
    detailSplit->addWidget(m_evidence);
    rightLayout->addWidget(detailSplit);
    auto* buttons = new QHBoxLayout;
    buttons->addStretch();
    buttons->addWidget(m_showMoment);
    rightLayout->addLayout(buttons);

    auto* split = new QSplitter(Qt::Horizontal, this);
    split->setObjectName(QStringLiteral("diagnosticsSplit"));
    split->addWidget(m_list);
    split->addWidget(right);
    split->setStretchFactor(0, 1);
    split->setStretchFactor(1, 1);
    split->setSizes({700, 700});
    detailSplit->setSizes({400, 300});

    auto* layout = new QVBoxLayout(this);
    layout->addWidget(m_summary);
    layout->addWidget(split, 1);

    connect(m_list, &QTreeWidget::currentItemChanged, this, [this](QTreeWidgetItem* item) {
        const int row = item ? m_list->indexOfTopLevelItem(item) : -1;
        showFinding(finding(row));
        emit findingSelected(row);
    });
    connect(m_evidence, &QTreeWidget::itemActivated, this, [this](QTreeWidgetItem* item) {
        if (!item)
            return;
        const QVariant a = item->data(EvSite, kAllocationRole);
        if (a.isValid()) {
            emit allocationActivated(AllocationId{a.toInt()});
            return;
        }
        const QVariant s = item->data(EvSite, kStackRole);
        if (s.isValid())
            emit stackActivated(StackId{s.toInt()});
    });
    connect(m_showMoment, &QPushButton::clicked, this, [this] {
        if (const Diagnostic* d = currentFinding(); d && d->event >= 0)
            emit eventActivated(d->event);
    });
}

void DiagnosticsPanel::setDiagnostics(std::shared_ptr<const Diagnostics> diagnostics, std::shared_ptr<const Replay> replay,
                                      const FrameClassifier* frames, std::optional<size_t> deviceIndex)
{
    m_diagnostics = std::move(diagnostics);
    m_replay = std::move(replay);
    m_frames = frames;
    m_device = deviceIndex;
    rebuild();
}

void DiagnosticsPanel::setDeviceIndex(std::optional<size_t> deviceIndex)
{
    m_device = deviceIndex;
    rebuild();
}

void DiagnosticsPanel::clear(const QString& message)
{
    m_diagnostics.reset();
    m_replay.reset();
    m_frames = nullptr;
    rebuild();
    if (!message.isEmpty())
        m_summary->setText(message);
}

int DiagnosticsPanel::findingCount() const { return static_cast<int>(m_shown.size()); }

const Diagnostic* DiagnosticsPanel::finding(int row) const
{
    return row >= 0 && row < findingCount() ? m_shown[static_cast<size_t>(row)] : nullptr;
}

const Diagnostic* DiagnosticsPanel::currentFinding() const
{
    QTreeWidgetItem* item = m_list->currentItem();
    return item ? finding(m_list->indexOfTopLevelItem(item)) : nullptr;
}

void DiagnosticsPanel::selectFinding(int row)
{
    if (QTreeWidgetItem* item = m_list->topLevelItem(row))
        m_list->setCurrentItem(item);
}

void DiagnosticsPanel::rebuild()
{
    m_list->clear();
    m_shown.clear();
    if (m_diagnostics)
        for (const Diagnostic& d : m_diagnostics->items)
            if (!m_device || d.deviceIndex == *m_device)
                m_shown.push_back(&d);
    int errors = 0, warnings = 0;
    for (const Diagnostic* d : m_shown) {
        auto* item = new QTreeWidgetItem(m_list);
        item->setIcon(ColSeverity, severityIcon(this, d->severity));
        item->setText(ColSeverity,
                      QString::fromLatin1(severityName(d->severity).data(), static_cast<int>(severityName(d->severity).size())));
        item->setText(ColKind, QString::fromLatin1(diagnosticKindLabel(d->kind).data(),
                                                   static_cast<int>(diagnosticKindLabel(d->kind).size())));
        item->setText(ColMessage, QString::fromStdString(d->message));
        item->setToolTip(ColMessage, QString::fromStdString(d->message));
        item->setText(ColBytes, bytesText(d->bytes));
        item->setTextAlignment(ColBytes, Qt::AlignRight | Qt::AlignVCenter);
        if (d->kind == DiagnosticKind::Growth) {
            item->setText(ColPerIteration, bytesText(d->bytesPerIteration));
            item->setTextAlignment(ColPerIteration, Qt::AlignRight | Qt::AlignVCenter);
        }
        errors += d->severity == Severity::Error;
        warnings += d->severity == Severity::Warning;
    }
    if (!m_diagnostics)
        m_summary->setText(tr("No snapshot"));
    else if (m_shown.empty())
        m_summary->setText(tr("No findings."));
    else
        m_summary->setText(tr("%n finding(s): ", nullptr, findingCount()) +
                           tr("%1 error(s), %2 warning(s)").arg(errors).arg(warnings));
    for (int c = 0; c < ColCount; ++c)
        if (c != ColMessage)
            m_list->resizeColumnToContents(c);
    if (!m_shown.empty())
        m_list->setCurrentItem(m_list->topLevelItem(0));
    else
        showFinding(nullptr);
}

QString DiagnosticsPanel::siteText(StackId stack) const
{
    if (!m_frames || !stack.valid())
        return tr("(no frames recorded)");
    const QString text = callSiteText(*m_frames, stack);
    return text.isEmpty() ? tr("(library frames only)") : text;
}

void DiagnosticsPanel::showFinding(const Diagnostic* d)
{
    m_evidence->clear();
    m_showMoment->setEnabled(d && d->event >= 0);
    if (!d) {
        m_detail->clear();
        return;
    }
    QString html = QStringLiteral("<p><b>%1</b></p>").arg(esc(d->message));
    if (!d->detail.empty())
        html += QStringLiteral("<p>%1</p>").arg(esc(d->detail));
    if (!d->figures.empty()) {
        html += QStringLiteral("<table cellspacing='0' cellpadding='2'>");
        for (const DiagnosticFigure& f : d->figures)
            html += QStringLiteral("<tr><td>%1</td><td align='right'>%2</td></tr>")
                        .arg(esc(f.label), f.isBytes ? bytesText(f.value) : countText(f.value));
        html += QStringLiteral("</table>");
    }
    if (!d->fix.empty())
        html += QStringLiteral("<p><b>%1</b> %2</p>").arg(tr("Fix:"), esc(d->fix));
    m_detail->setHtml(html);

    const DeviceReplay* replay = m_replay && d->deviceIndex < m_replay->devices.size() ? &m_replay->devices[d->deviceIndex]
                                                                                       : nullptr;
    for (const EvidenceSite& s : d->sites) {
        auto* site = new QTreeWidgetItem(m_evidence);
        const QString text = siteText(s.stack);
        site->setText(EvSite, text);
        site->setToolTip(EvSite, text);
        site->setText(EvBytes, bytesText(s.bytes));
        site->setText(EvCount, countText(s.count));
        site->setTextAlignment(EvBytes, Qt::AlignRight | Qt::AlignVCenter);
        site->setTextAlignment(EvCount, Qt::AlignRight | Qt::AlignVCenter);
        if (s.stack.valid())
            site->setData(EvSite, kStackRole, s.stack.value);
        if (!replay)
            continue;
        int shown = 0;
        for (AllocationId id : d->allocations) {
            const Allocation& a = replay->allocation(id);
            if (a.stack != s.stack)
                continue;
            if (++shown > 50)
                break;
            auto* child = new QTreeWidgetItem(site);
            child->setText(EvSite, tr("#%1 at 0x%2, alloc event %3")
                                       .arg(id.value)
                                       .arg(a.addr, 0, 16)
                                       .arg(a.allocEvent.valid() ? QString::number(a.allocEvent.value) : tr("before trace")));
            child->setText(EvBytes, bytesText(static_cast<int64_t>(a.size)));
            child->setTextAlignment(EvBytes, Qt::AlignRight | Qt::AlignVCenter);
            child->setData(EvSite, kAllocationRole, id.value);
            if (a.stack.valid())
                child->setData(EvSite, kStackRole, a.stack.value);
        }
    }
    if (m_evidence->topLevelItemCount() == 1)
        m_evidence->expandAll();
    m_evidence->resizeColumnToContents(EvBytes);
    m_evidence->resizeColumnToContents(EvCount);
}

} // namespace memscope
