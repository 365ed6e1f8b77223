#include "ui/live/live_window.h"

#include "ui/plot/category_timeline_view.h"
#include "live/live_client.h"
#include "ui/live/live_session.h"
#include "ui/live/memory_gap_bar.h"
#include "ui/style/text_format.h"

#include <QCloseEvent>
#include <QComboBox>
#include <QDateTime>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QMessageBox>
#include <QSplitter>
#include <QToolButton>
#include <QVBoxLayout>

namespace memscope {

LiveWindow::LiveWindow(QWidget* parent) : QWidget(parent, Qt::Window), m_session(new LiveSession(this))
{
    setAttribute(Qt::WA_DeleteOnClose);
    setWindowTitle(tr("memscope — live"));
    resize(1400, 820);

    m_title = new QLabel(this);
    m_title->setTextInteractionFlags(Qt::TextSelectableByMouse);
    QFont big = m_title->font();
    big.setPointSizeF(big.pointSizeF() * 1.15);
    big.setBold(true);
    m_title->setFont(big);
    m_status = new QLabel(this);
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_status->setWordWrap(true);
    m_numbers = new QLabel(this);
    m_numbers->setTextFormat(Qt::RichText);

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
    m_device = new QComboBox(this);
    m_device->setToolTip(tr("Device"));
    m_device->hide();

    auto* bar = new QHBoxLayout;
    bar->addWidget(m_pause);
    bar->addWidget(m_follow);
    bar->addWidget(m_detach);
    bar->addWidget(m_save);
    bar->addWidget(m_device);
    bar->addSpacing(12);
    bar->addWidget(m_numbers, 1);

    m_timeline = new CategoryTimelineView(this);
    m_gap = new MemoryGapBar(this);
    auto* split = new QSplitter(Qt::Horizontal, this);
    split->addWidget(m_timeline);
    split->addWidget(m_gap);
    split->setStretchFactor(0, 1);
    split->setStretchFactor(1, 0);

    auto* layout = new QVBoxLayout(this);
    layout->addWidget(m_title);
    layout->addWidget(m_status);
    layout->addLayout(bar);
    layout->addWidget(split, 1);

    connect(m_pause, &QToolButton::toggled, this, &LiveWindow::setPaused);
    connect(m_follow, &QToolButton::toggled, this, [this](bool on) {
        if (on)
            m_timeline->resetZoom();
    });
    connect(m_detach, &QToolButton::clicked, m_session, &LiveSession::detach);
    connect(m_save, &QToolButton::clicked, this, &LiveWindow::saveRecording);
    connect(m_device, qOverload<int>(&QComboBox::currentIndexChanged), this, &LiveWindow::onDocument);
    connect(m_session, &LiveSession::documentUpdated, this, &LiveWindow::onDocument);
    connect(m_session, &LiveSession::statusChanged, this, &LiveWindow::onStatus);
    // The user zooming or panning stops following; Follow brings it back.
    connect(m_timeline, &CategoryTimelineView::xRangeChanged, this, [this](double, double upper) {
        if (!m_follow->isChecked() || !m_session->document())
            return;
        const auto* model = m_timeline->model();
        if (model && upper < model->xMax(m_timeline->xAxisMode()) * 0.999)
            m_follow->setChecked(false);
    });
    onStatus();
}

LiveWindow::~LiveWindow() = default;

void LiveWindow::attach(const LiveEndpoint& endpoint)
{
    m_session->attach(endpoint);
    m_rateT0 = QDateTime::currentMSecsSinceEpoch();
    onStatus();
}

void LiveWindow::showRecovered(const QString& recoveryFile)
{
    std::string note;
    auto snap = readLiveStreamFile(recoveryFile.toStdString(), &note);
    m_session->showRecovered(std::move(snap), QString::fromStdString(note));
    m_detach->setEnabled(false);
    setWindowTitle(tr("memscope — recovered %1").arg(QFileInfo(recoveryFile).fileName()));
}

bool LiveWindow::following() const { return m_follow->isChecked(); }

void LiveWindow::setFollowing(bool follow) { m_follow->setChecked(follow); }

void LiveWindow::setPaused(bool paused)
{
    if (m_pause->isChecked() != paused)
        m_pause->setChecked(paused);
    m_session->setPaused(paused);
    m_pause->setText(paused ? tr("Resume") : tr("Pause"));
}

size_t LiveWindow::deviceIndex() const
{
    const auto doc = m_session->document();
    if (!doc || doc->devices.empty())
        return 0;
    const int i = m_device->currentIndex();
    if (i >= 0 && static_cast<size_t>(i) < doc->devices.size())
        return static_cast<size_t>(i);
    for (size_t d = 0; d < doc->devices.size(); ++d)
        if (doc->devices[d].eventCount() > 0)
            return d;
    return 0;
}

void LiveWindow::onDocument()
{
    const auto doc = m_session->document();
    if (!doc)
        return;
    if (static_cast<size_t>(m_device->count()) != doc->devices.size()) {
        QSignalBlocker block(m_device);
        m_device->clear();
        for (const DeviceModel& d : doc->devices)
            m_device->addItem(tr("cuda:%1").arg(d.device));
        m_device->setVisible(doc->devices.size() > 1);
        m_device->setCurrentIndex(static_cast<int>(deviceIndex()));
    }
    const bool follow = m_follow->isChecked();
    const auto range = m_timeline->xRange();
    const bool hadModel = m_timeline->model() != nullptr;
    {
        QSignalBlocker block(m_timeline);
        m_timeline->setDocument(doc, deviceIndex());
        if (follow || !hadModel)
            m_timeline->resetZoom();
        else
            m_timeline->setXRange(range.first, range.second);
    }
    onStatus();
}

QString LiveWindow::statusText() const { return m_status->text() + QLatin1Char('\n') + m_numbers->text(); }

void LiveWindow::onStatus()
{
    const LiveHello h = m_session->hello();
    const LiveStats st = m_session->stats();
    if (h.pid)
        m_title->setText(tr("pid %1 — %2").arg(h.pid).arg(QString::fromStdString(h.commandLine)));
    else if (m_title->text().isEmpty())
        m_title->setText(tr("waiting for the agent…"));
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

    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    if (now - m_rateT0 >= 1000) {
        m_rate = m_rateT0 ? double(st.events - m_rateEvents) * 1000.0 / double(now - m_rateT0) : 0;
        m_rateT0 = now;
        m_rateEvents = st.events;
    }
    QStringList nums;
    const auto snap = m_session->document();
    uint64_t events = st.events;
    if (!m_session->stats().messages && snap)
        for (const DeviceModel& d : snap->devices)
            events += static_cast<uint64_t>(d.eventCount());
    nums << tr("<b>%1</b> events").arg(countText(static_cast<int64_t>(events)));
    if (m_session->state() == LiveState::Streaming)
        nums << tr("%1/s").arg(countText(static_cast<int64_t>(m_rate)));
    nums
        << (st.agentDropped
                ? tr("<span style='color:#c0392b'><b>%1 dropped</b></span>").arg(countText(static_cast<int64_t>(st.agentDropped)))
                : tr("0 dropped"));
    if (snap && !snap->devices.empty()) {
        const DeviceModel& d = snap->devices[std::min(deviceIndex(), snap->devices.size() - 1)];
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

bool LiveWindow::saveTo(const QString& path, QString* error) { return m_session->save(path, error); }

void LiveWindow::saveRecording()
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

void LiveWindow::closeEvent(QCloseEvent* event)
{
    if (m_ask && !m_session->saved() && m_session->snapshot()) {
        const auto answer = QMessageBox::question(this, tr("Close live recording"), tr("Save the recording before closing?"),
                                                  QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel);
        if (answer == QMessageBox::Cancel) {
            event->ignore();
            return;
        }
        if (answer == QMessageBox::Save) {
            saveRecording();
            if (!m_session->saved()) {
                event->ignore();
                return;
            }
        }
    }
    m_session->detach();
    m_session->discardRecovery(); // saved, or the user chose to discard it
    event->accept();
}

} // namespace memscope
