#include "ui/live/live_tab.h"

#include "analysis/live_stats.h"
#include "live/live_client.h"
#include "ui/live/live_overview.h"
#include "ui/live/live_session.h"
#include "ui/live/memory_gap_bar.h"
#include "ui/pages/snapshot_tab.h"
#include "ui/plot/category_timeline_view.h"
#include "ui/style/text_format.h"

#include <QCloseEvent>
#include <QDateTime>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QMessageBox>
#include <QScrollArea>
#include <QSettings>
#include <QSplitter>
#include <QStackedWidget>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>

namespace memscope {

namespace {

std::function<void(QWidget*, const QString&)>& host()
{
    static std::function<void(QWidget*, const QString&)> h;
    return h;
}

int64_t shownEvents(const Document& doc)
{
    int64_t n = 0;
    for (const DeviceModel& d : doc.devices)
        n += d.eventCount();
    return n;
}

} // namespace

void setLiveTabHost(std::function<void(QWidget*, const QString&)> h) { host() = std::move(h); }

void showLiveTab(QWidget* tab, const QString& title)
{
    if (host()) {
        host()(tab, title);
        return;
    }
    tab->setParent(nullptr, Qt::Window);
    tab->setAttribute(Qt::WA_DeleteOnClose);
    tab->setWindowTitle(QStringLiteral("memscope — %1").arg(title));
    tab->resize(1400, 900);
    tab->show();
}

namespace {
int64_t detailSetting(int64_t asked)
{
    if (asked >= 0)
        return asked;
    if (const QByteArray env = qgetenv("MEMSCOPE_LIVE_DETAIL_EVENTS"); !env.isEmpty())
        return env.toLongLong();
    return QSettings().value(QStringLiteral("live/detailEvents"), 0).toLongLong();
}
} // namespace

LiveTab::LiveTab(QWidget* parent, JobRunner* runner, int64_t detailEvents)
    : QWidget(parent), m_session(new LiveSession(this, runner, detailSetting(detailEvents))), m_stack(new QStackedWidget(this)),
      m_waiting(new QLabel(this))
{
    m_title = new QLabel(this);
    m_title->setTextInteractionFlags(Qt::TextSelectableByMouse);
    QFont big = m_title->font();
    big.setPointSizeF(big.pointSizeF() * 1.1);
    big.setBold(true);
    m_title->setFont(big);
    m_title->setWordWrap(true); // a long command line wraps instead of widening the window
    m_status = new QLabel(this);
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_status->setWordWrap(true);
    m_numbers = new QLabel(this);
    m_numbers->setTextFormat(Qt::RichText);
    m_numbers->setWordWrap(true);

    auto button = [this](const QString& text, const QString& tip, bool checkable) {
        auto* b = new QToolButton(this);
        b->setText(text);
        b->setToolTip(tip);
        b->setCheckable(checkable);
        b->setToolButtonStyle(Qt::ToolButtonTextOnly);
        return b;
    };
    m_pause = button(tr("Pause"), tr("Freeze the view; events keep arriving"), true);
    m_follow = button(tr("Follow"), tr("Keep the newest events in view"), true);
    m_follow->setChecked(true);
    m_detach = button(tr("Detach"), tr("Close the connection; keep what arrived"), false);
    m_save = button(tr("Save recording…"), tr("Write a protocol-4 pickle snapshot (memscope and PyTorch's viewer open it)"),
                    false);
    m_gap = new MemoryGapBar(this);
    m_gap->setMaximumHeight(64);
    m_overview = new LiveOverview(this);

    auto* bar = new QHBoxLayout;
    bar->addWidget(m_pause);
    bar->addWidget(m_follow);
    bar->addWidget(m_detach);
    bar->addWidget(m_save);
    bar->addSpacing(12);
    bar->addWidget(m_numbers, 1);

    m_waiting->setText(tr("Waiting for the first allocator events…"));
    m_waiting->setWordWrap(true);
    m_waiting->setAlignment(Qt::AlignCenter);
    m_stack->addWidget(m_waiting);

    // The tab's content scrolls when the window is smaller than the header above a whole
    // snapshot tab (about 810 px): the window keeps working at 1000x700 instead of growing.
    auto* content = new QWidget;
    auto* scroll = new QScrollArea(this);
    scroll->setObjectName(QStringLiteral("liveScroll"));
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setWidgetResizable(true);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    scroll->setWidget(content);
    auto* outer = new QVBoxLayout(this);
    outer->setContentsMargins(0, 0, 0, 0);
    outer->addWidget(scroll);
    auto* layout = new QVBoxLayout(content);
    layout->setContentsMargins(6, 4, 6, 0);
    layout->setSpacing(2);
    layout->addWidget(m_title);
    layout->addWidget(m_status);
    layout->addLayout(bar);
    layout->addWidget(m_gap);
    layout->addWidget(m_overview);
    layout->addWidget(m_stack, 1);

    m_statsPath = qEnvironmentVariable("MEMSCOPE_LIVE_STATS");

    connect(m_pause, &QToolButton::toggled, this, &LiveTab::setPaused);
    connect(m_follow, &QToolButton::toggled, this, [this](bool on) {
        if (on && timeline())
            timeline()->resetZoom();
    });
    connect(m_detach, &QToolButton::clicked, m_session, &LiveSession::detach);
    connect(m_save, &QToolButton::clicked, this, &LiveTab::saveRecording);
    connect(m_session, &LiveSession::viewUpdated, this, &LiveTab::onView);
    connect(m_session, &LiveSession::documentUpdated, this, &LiveTab::onDocument);
    connect(m_session, &LiveSession::statusChanged, this, &LiveTab::onStatus);
    connect(m_session, &LiveSession::updateFailed, this, &LiveTab::onStatus);
    onStatus();
}

LiveTab::~LiveTab() = default;

CategoryTimelineView* LiveTab::timeline() const { return m_tab ? m_tab->timeline() : nullptr; }

void LiveTab::attach(const LiveEndpoint& endpoint)
{
    m_session->attach(endpoint);
    m_attachedMs = m_rateT0 = QDateTime::currentMSecsSinceEpoch();
    onStatus();
}

void LiveTab::showRecovered(const QString& recoveryFile)
{
    std::string note;
    auto snap = readLiveStreamFile(recoveryFile.toStdString(), &note);
    m_session->showRecovered(std::move(snap), QString::fromStdString(note));
    m_detach->setEnabled(false);
    m_title->setText(tr("recovered %1").arg(QFileInfo(recoveryFile).fileName()));
    emit titleChanged(title());
}

QString LiveTab::title() const
{
    const LiveHello h = m_session->hello();
    if (h.pid)
        return tr("live: pid %1").arg(h.pid);
    return m_session->recoveryPath().isEmpty() && !m_title->text().isEmpty() ? m_title->text() : tr("live");
}

bool LiveTab::following() const { return m_follow->isChecked(); }

void LiveTab::setFollowing(bool follow) { m_follow->setChecked(follow); }

void LiveTab::setPaused(bool paused)
{
    if (m_pause->isChecked() != paused)
        m_pause->setChecked(paused);
    m_session->setPaused(paused);
    m_pause->setText(paused ? tr("Resume") : tr("Pause"));
}

void LiveTab::onView()
{
    const auto view = m_session->view();
    if (!view)
        return;
    int device = view->devices.empty() ? 0 : view->devices.front().device;
    if (m_tab && m_tab->deviceIndex() < m_tab->document().devices.size())
        device = m_tab->document().devices[m_tab->deviceIndex()].device;
    else
        for (const DeviceReplayView& d : view->devices)
            if (d.eventCount > 0) {
                device = d.device;
                break;
            }
    m_overview->setView(view, device);
    if (!m_tab && view->events > 0)
        m_waiting->setText(m_session->detailEvents() > 0
                               ? tr("%1 events so far. The bounded mode keeps the newest %2 events' detail: the "
                                    "categories, phases and findings come from the stream file once the run ends.")
                                     .arg(countText(view->events), countText(m_session->detailEvents()))
                               : tr("%1 events so far; categorising…").arg(countText(view->events)));
    onStatus();
    if (!m_statsPath.isEmpty() && view->events > 0) { // the agent's hello alone publishes a view of no events
        const qint64 arrival = m_session->viewArrivalMs();
        QTimer::singleShot(0, this, [this, arrival] { writeStats(arrival); }); // after the repaint
    }
}

void LiveTab::onDocument()
{
    const auto doc = m_session->document();
    if (!doc)
        return;
    if (!m_tab) {
        m_tab = new SnapshotTab(doc, this);
        m_stack->addWidget(m_tab);
        m_stack->setCurrentWidget(m_tab);
        // The user zooming or panning stops following; Follow brings it back.
        connect(m_tab->timeline(), &CategoryTimelineView::xRangeChanged, this, [this](double, double upper) {
            const auto* model = timeline()->model();
            if (m_follow->isChecked() && model && upper < model->xMax(timeline()->xAxisMode()) * 0.999)
                m_follow->setChecked(false);
        });
    } else {
        const auto range = timeline()->xRange();
        QSignalBlocker block(timeline());
        std::shared_ptr<const Document> old = m_tab->documentPtr();
        m_tab->setGrownDocument(doc);
        m_session->releaseLater(std::move(old)); // its last reference, off the GUI thread
        if (m_follow->isChecked())
            timeline()->resetZoom();
        else
            timeline()->setXRange(range.first, range.second);
    }
    onStatus();
    emit documentShown();
}

void LiveTab::writeStats(qint64 arrivalMs)
{
    const auto view = m_session->view();
    if (!view)
        return;
    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    LiveStatsLine line = liveStatsLine(*view, (now - m_attachedMs) / 1000.0, arrivalMs > 0 ? double(now - arrivalMs) : -1.0);
    line.lagEvents = std::max<int64_t>(line.lagEvents, static_cast<int64_t>(m_session->stats().events) - view->events);
    QFile f(m_statsPath);
    if (f.open(QIODevice::Append | QIODevice::Text))
        f.write((liveStatsJson(line) + "\n").c_str());
}

QString LiveTab::statusText() const { return m_status->text() + QLatin1Char('\n') + m_numbers->text(); }

void LiveTab::onStatus()
{
    const LiveHello h = m_session->hello();
    const LiveStats st = m_session->stats();
    const QString before = m_title->text();
    if (h.pid)
        m_title->setText(tr("pid %1 — %2").arg(h.pid).arg(QString::fromStdString(h.commandLine)));
    else if (m_title->text().isEmpty())
        m_title->setText(tr("waiting for the agent…"));
    if (m_title->text() != before)
        emit titleChanged(title());
    QStringList info;
    info << tr("state: %1").arg(m_session->stateText());
    if (!h.mode.empty())
        info << tr("agent: %1").arg(QString::fromStdString(h.mode));
    if (!h.torchVersion.empty())
        info << tr("torch %1").arg(QString::fromStdString(h.torchVersion));
    if (!h.devices.empty())
        info << QString::fromStdString(h.devices.front());
    if (m_session->paused())
        info << tr("paused (events keep arriving)");
    m_status->setText(info.join(QStringLiteral(" · ")));
    m_status->setStyleSheet(m_session->updateError().isEmpty() ? QString() : QStringLiteral("color: #c0392b"));

    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    if (now - m_rateT0 >= 1000) {
        m_rate = m_rateT0 ? double(st.events - m_rateEvents) * 1000.0 / double(now - m_rateT0) : 0;
        m_rateT0 = now;
        m_rateEvents = st.events;
    }
    QStringList nums;
    const auto doc = m_session->document();
    const auto view = m_session->view();
    uint64_t events = st.events;
    if (!st.messages && doc)
        events = static_cast<uint64_t>(shownEvents(*doc));
    nums << tr("<b>%1</b> events").arg(countText(static_cast<int64_t>(events)));
    if (m_session->state() == LiveState::Streaming)
        nums << tr("%1/s").arg(countText(static_cast<int64_t>(m_rate)));
    nums
        << (st.agentDropped
                ? tr("<span style='color:#c0392b'><b>%1 dropped</b></span>").arg(countText(static_cast<int64_t>(st.agentDropped)))
                : tr("0 dropped"));
    if (view && st.messages)
        nums << tr("lag %1").arg(countText(std::max<int64_t>(0, static_cast<int64_t>(st.events) - view->events)));
    const DeviceReplayView* dv = view ? view->device(m_overview->device()) : nullptr;
    if (view && !dv && !view->devices.empty())
        dv = &view->devices.front();
    if (dv && dv->eventCount > 0) {
        nums << tr("peak <b>%1</b>").arg(bytesText(dv->peakRequested.bytes));
        const int64_t reserved = dv->reserved.values().has(static_cast<size_t>(dv->eventCount - 1))
                                     ? dv->reservedAfter(dv->eventCount - 1)
                                     : dv->peakReserved.bytes;
        nums << tr("reserved %1").arg(bytesText(reserved));
        m_gap->setValues(reserved, m_session->deviceMemoryInUse(), m_session->nvmlNote());
    } else if (doc && !doc->devices.empty()) {
        const size_t index = m_tab ? std::min(m_tab->deviceIndex(), doc->devices.size() - 1) : doc->analysis->focusDevice();
        const DeviceModel& d = doc->devices[index];
        nums << tr("peak <b>%1</b>").arg(bytesText(d.replay->peakRequested.bytes));
        nums << tr("reserved %1").arg(bytesText(d.reservedAfter(d.eventCount() - 1)));
        m_gap->setValues(d.reservedAfter(d.eventCount() - 1), m_session->deviceMemoryInUse(), m_session->nvmlNote());
    } else {
        m_gap->setValues(0, m_session->deviceMemoryInUse(), m_session->nvmlNote());
    }
    if (st.torchRequestedPeak >= 0)
        nums << tr("torch's own peak %1").arg(bytesText(st.torchRequestedPeak));
    if (st.truncated)
        nums << tr("%1 events before joining were no longer held").arg(countText(static_cast<int64_t>(st.truncated)));
    m_numbers->setText(nums.join(QStringLiteral(" · ")));
    m_detach->setEnabled(m_session->state() == LiveState::Streaming);
}

bool LiveTab::saveTo(const QString& path, QString* error) { return m_session->save(path, error); }

void LiveTab::saveRecording()
{
    const LiveHello h = m_session->hello();
    const QString suggested = QStringLiteral("live_%1.pickle").arg(h.pid ? QString::number(h.pid) : QStringLiteral("recording"));
    const QString path = QFileDialog::getSaveFileName(this, tr("Save recording"), suggested, tr("Memory snapshot (*.pickle)"));
    if (path.isEmpty())
        return;
    QString error;
    if (!saveTo(path, &error))
        QMessageBox::warning(this, tr("Save recording"), error);
}

bool LiveTab::confirmClose()
{
    if (m_closed)
        return true;
    if (m_ask && !m_session->saved() && m_session->snapshot()) {
        const auto answer = QMessageBox::question(this, tr("Close live recording"), tr("Save the recording before closing?"),
                                                  QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel);
        if (answer == QMessageBox::Cancel)
            return false;
        if (answer == QMessageBox::Save) {
            saveRecording();
            if (!m_session->saved())
                return false;
        }
    }
    m_session->detach();
    m_session->discardRecovery(); // saved, or the user chose to discard it
    m_closed = true;
    return true;
}

void LiveTab::closeEvent(QCloseEvent* event)
{
    if (confirmClose())
        event->accept();
    else
        event->ignore();
}

} // namespace memscope
