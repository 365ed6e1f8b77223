#include "ui/pages/stack_view.h"

#include "ui/document/document.h"

#include <QHeaderView>
#include <QLabel>
#include <QApplication>
#include <QEvent>
#include <QResizeEvent>
#include <QTreeWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <set>

namespace memscope {

namespace {

QString libraryName(std::string_view file, std::string_view name)
{
    for (std::string_view marker : {"site-packages/", "dist-packages/"}) {
        const size_t at = file.find(marker);
        if (at != std::string_view::npos) {
            std::string_view rest = file.substr(at + marker.size());
            const size_t slash = rest.find('/');
            std::string_view pkg = slash == std::string_view::npos ? rest : rest.substr(0, slash);
            if (pkg.size() > 3 && pkg.substr(pkg.size() - 3) == ".py")
                pkg.remove_suffix(3);
            return QString::fromUtf8(pkg.data(), static_cast<qsizetype>(pkg.size()));
        }
    }
    if (file.find("/lib/python3") != std::string_view::npos || file.substr(0, 7) == "<frozen")
        return QStringLiteral("Python");
    if (file.find("/torch/") != std::string_view::npos)
        return QStringLiteral("torch");
    (void)name;
    return QStringLiteral("C++ runtime");
}

} // namespace

StackView::StackView(QWidget* parent) : QWidget(parent), m_title(new QLabel(this)), m_tree(new QTreeWidget(this))
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(4);
    m_title->setWordWrap(true);
    m_title->setTextInteractionFlags(Qt::TextSelectableByMouse);
    // Wraps to the pane's width instead of asking for its one-line width (which the pane
    // does not have at 1000 px: the line ran out of it).
    m_title->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    m_title->setMinimumWidth(1);
    layout->addWidget(m_title);
    layout->addWidget(m_tree, 1);
    m_tree->setColumnCount(2);
    m_tree->setHeaderLabels({tr("Function"), tr("Location")});
    m_tree->setRootIsDecorated(true);
    m_tree->setUniformRowHeights(true);
    m_tree->setAlternatingRowColors(true);
    m_tree->header()->setStretchLastSection(true);
    m_tree->header()->setSectionResizeMode(0, QHeaderView::Interactive);
    m_tree->setColumnWidth(0, 200);
    // Frames and locations keep both ends ("c10::cuda::…::malloc", "modeling_…py:412"); the
    // full text is each item's tooltip, and the columns can be dragged wider.
    m_tree->setTextElideMode(Qt::ElideMiddle);
    m_tree->header()->setMinimumSectionSize(40);
    m_tree->viewport()->installEventFilter(this); // its width changes with the scroll bar too
    connect(m_tree->header(), &QHeaderView::sectionResized, this, [this](int section, int, int) {
        if (section == 0 && !m_fitting && QApplication::mouseButtons() != Qt::NoButton) // dragged
            m_userSized = true;
    });
    clear();
}

QString StackView::title() const { return m_title->text(); }

bool StackView::eventFilter(QObject* watched, QEvent* event)
{
    if (watched == m_tree->viewport() && event->type() == QEvent::Resize)
        fitColumns();
    return QWidget::eventFilter(watched, event);
}

void StackView::resizeEvent(QResizeEvent* event)
{
    QWidget::resizeEvent(event);
    fitColumns();
}

void StackView::fitColumns()
{
    // Until the user drags the divider: the function three fifths of the width, the file and
    // line the rest, so neither is cut off in a narrow pane (it was 200 px of a 235 px pane).
    if (m_userSized)
        return;
    m_fitting = true;
    m_tree->setColumnWidth(0, std::max(40, m_tree->viewport()->width() * 3 / 5));
    m_fitting = false;
}

void StackView::clear(const QString& message)
{
    m_tree->clear();
    m_user = m_library = 0;
    m_title->setText(message.isEmpty() ? tr("Select an allocation or a call site to see its stack.") : message);
}

void StackView::setAllocation(const Document* document, size_t deviceIndex, AllocationId id, const QString& title)
{
    if (!document || deviceIndex >= document->devices.size() || !id.valid()) {
        setStack(document, StackId{}, title);
        return;
    }
    const DeviceModel& m = document->devices[deviceIndex];
    const Allocation& a = m.replay->allocation(id);
    setStack(document, a.stack, title, m.events, a.allocEvent.valid() ? a.allocEvent.value : -1);
}

void StackView::setStack(const Document* document, StackId stack, const QString& title, const EventTable* events,
                         int64_t eventRow)
{
    m_tree->clear();
    m_user = m_library = 0;
    m_title->setText(title);
    const Snapshot* snap = document ? &document->snapshot() : nullptr;
    const bool hasRow = snap && events && eventRow >= 0 && static_cast<size_t>(eventRow) < events->count();
    auto text = [&](StringId id) {
        const std::string_view v = snap && id.valid() ? snap->str(id) : std::string_view{};
        return QString::fromUtf8(v.data(), static_cast<qsizetype>(v.size()));
    };
    if (hasRow) {
        const QString context = text(events->compileContext[static_cast<size_t>(eventRow)]);
        if (!context.isEmpty() && context != QLatin1String("N/A")) {
            auto* compiled = new QTreeWidgetItem(m_tree, {tr("compiled: %1").arg(context.simplified()), QString()});
            compiled->setToolTip(0, tr("torch.compile context of this allocation (compile_context):\n%1").arg(context));
            compiled->setFirstColumnSpanned(true);
            QFont italic = compiled->font(0);
            italic.setItalic(true);
            compiled->setFont(0, italic);
        }
    }
    if (!document || !stack.valid()) {
        auto* none = new QTreeWidgetItem(m_tree, {tr("No stack was recorded for this allocation."), QString()});
        none->setToolTip(0, tr("With stacks=\"python\", allocations made on autograd's backward thread carry no "
                               "frames; blocks that existed before recording have only the frames of the dump."));
        none->setFirstColumnSpanned(true);
        addForwardFrames(document, events, eventRow);
        return;
    }
    if (!document->frames()) { // before the Attributed stage: no frame is told user or library yet
        auto* wait = new QTreeWidgetItem(m_tree, {tr("Categorising…"), QString()});
        wait->setFirstColumnSpanned(true);
        return;
    }
    const Snapshot& s = document->snapshot();
    const FrameClassifier& fc = *document->frames();
    auto* user = new QTreeWidgetItem(m_tree);
    auto* library = new QTreeWidgetItem(m_tree);
    std::vector<QString> libraries;
    std::set<QString> seen;
    bool fxShown = false; // torch.compile frames are torch's: show them unfolded
    for (FrameId f : s.stacks.frames(stack)) {
        const Frame& frame = s.frames.frame(f);
        const std::string_view file = s.str(frame.filename);
        const std::string_view name = s.str(frame.name);
        const bool lib = fc.isLibrary(f);
        auto* item = new QTreeWidgetItem(lib ? library : user);
        item->setText(0, QString::fromUtf8(name.data(), static_cast<qsizetype>(name.size())));
        QString location = QString::fromStdString(fc.frameLocation(f));
        if (location == QStringLiteral("??"))
            location.clear();
        const qsizetype slash = location.lastIndexOf(QLatin1Char('/'));
        item->setText(1, slash >= 0 ? location.mid(slash + 1) : location);
        item->setToolTip(0, item->text(0));
        item->setToolTip(1, location);
        // torch.compile frames name the FX node the generated code came from.
        const QString op = text(frame.fxNodeOp), node = text(frame.fxNodeName), target = text(frame.fxNodeTarget);
        if (!node.isEmpty() || !target.isEmpty()) {
            QString fx = tr("FX node %1").arg(node.isEmpty() ? tr("(unnamed)") : node);
            if (!op.isEmpty())
                fx += QStringLiteral(" · ") + op;
            if (!target.isEmpty())
                fx += QStringLiteral(" → ") + target;
            auto* child = new QTreeWidgetItem(item, {fx, QString()});
            child->setFirstColumnSpanned(true);
            child->setToolTip(0, fx);
            item->setExpanded(true);
            fxShown = true;
        }
        if (const QString trace = text(frame.fxOriginalTrace).trimmed(); !trace.isEmpty()) {
            // The user's source line the node was traced from: the last "File …" line and the
            // code under it.
            const QStringList lines = trace.split(QLatin1Char('\n'), Qt::SkipEmptyParts);
            QString shown = lines.isEmpty() ? trace : lines.last().trimmed();
            for (qsizetype i = lines.size() - 1; i >= 0; --i)
                if (lines[i].trimmed().startsWith(QLatin1String("File "))) {
                    shown = lines[i].trimmed();
                    if (i + 1 < lines.size())
                        shown += QStringLiteral(": ") + lines[i + 1].trimmed();
                    break;
                }
            auto* child = new QTreeWidgetItem(item, {tr("traced from %1").arg(shown), QString()});
            child->setFirstColumnSpanned(true);
            child->setToolTip(0, trace);
            item->setExpanded(true);
            fxShown = true;
        }
        if (lib) {
            ++m_library;
            const QString pkg = libraryName(file, name);
            if (seen.insert(pkg).second)
                libraries.push_back(pkg);
        } else {
            ++m_user;
            QFont bold = item->font(0);
            bold.setBold(true);
            item->setFont(0, bold);
        }
    }
    user->setText(0, m_user ? tr("Your code (%1 frames, innermost first)").arg(m_user)
                            : tr("No frames of your own code in this stack"));
    user->setFirstColumnSpanned(true);
    user->setToolTip(0, user->text(0));
    QStringList libs;
    for (const QString& l : libraries)
        libs << l;
    library->setText(0, tr("Library frames (%1): %2").arg(m_library).arg(libs.join(QStringLiteral(", "))));
    library->setFirstColumnSpanned(true);
    library->setToolTip(0, library->text(0));
    user->setExpanded(true);
    library->setExpanded(fxShown);
    if (m_library == 0)
        delete library;
    addForwardFrames(document, events, eventRow);
}

void StackView::addForwardFrames(const Document* document, const EventTable* events, int64_t eventRow)
{
    if (!document || !events || eventRow < 0 || events->forwardFrames.empty())
        return;
    const StackId forward = events->forwardFramesOf(static_cast<size_t>(eventRow));
    if (!forward.valid())
        return;
    const Snapshot& s = document->snapshot();
    const auto frames = s.stacks.frames(forward);
    auto* group = new QTreeWidgetItem(m_tree,
                                      {tr("Forward this belongs to (%1 frames, forward_frames)").arg(frames.size()), QString()});
    group->setFirstColumnSpanned(true);
    for (FrameId f : frames) {
        const Frame& frame = s.frames.frame(f);
        const std::string_view name = s.str(frame.name);
        const std::string_view file = s.str(frame.filename);
        QString location = QString::fromUtf8(file.data(), static_cast<qsizetype>(file.size()));
        if (!location.isEmpty() && frame.line > 0)
            location += QStringLiteral(":%1").arg(frame.line);
        auto* item = new QTreeWidgetItem(group, {QString::fromUtf8(name.data(), static_cast<qsizetype>(name.size())), location});
        item->setToolTip(0, item->text(0));
        if (location.isEmpty())
            item->setFirstColumnSpanned(true);
    }
    group->setExpanded(true);
}

} // namespace memscope
