#include "ui/live/live_job_window.h"

#include "ui/runner/job_runner.h"

#include "analysis/analysis.h"
#include "io/pickle_writer.h"
#include "job/rank_summary.h"
#include "ui/live/attach_dialog.h"
#include "ui/live/live_tab.h"
#include "ui/pages/job_tab.h"

#include <QDir>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QLabel>
#include <QMessageBox>
#include <QToolButton>
#include <QVBoxLayout>

namespace memscope {

namespace {

bool hasEvents(const Snapshot& s)
{
    for (const DeviceTrace& d : s.devices)
        if (d.events.count())
            return true;
    return false;
}

std::string liveText(const RankLiveStatus& s)
{
    std::string t(rankLiveStateName(s.state));
    if (!s.detail.empty() && s.state != RankLiveState::Streaming && s.state != RankLiveState::Ended)
        t += ": " + s.detail;
    if (s.stats.agentDropped)
        t += " (" + std::to_string(s.stats.agentDropped) + " events dropped by the agent)";
    return t;
}

} // namespace

LiveJobWindow::LiveJobWindow(const QString& job, const QString& directory, int64_t lagMs, QWidget* parent, JobRunner* runner)
    : QWidget(parent), m_tab(nullptr), m_status(new QLabel(this)), m_detach(new QToolButton(this)), m_save(new QToolButton(this)),
      m_runner(runner ? runner : new JobRunner(this)), m_set(RankSet::fromEntries({}))
{
    JobLiveSession::Options o;
    o.job = job.toStdString();
    if (!directory.isEmpty())
        o.directory = directory.toStdString();
    o.lagMs = lagMs;
    m_session = std::make_unique<JobLiveSession>(o);
    setWindowTitle(tr("live job %1").arg(job));
    m_tab = new JobTab(m_set, tr("job %1").arg(job), this);
    m_detach->setText(tr("Detach"));
    m_detach->setToolTip(tr("Close every rank's connection; what arrived stays"));
    m_save->setText(tr("Save all…"));
    m_save->setToolTip(tr("Write each rank's recording as rank<R>.pickle into a folder"));
    connect(m_detach, &QToolButton::clicked, this, [this] {
        m_session->detach();
        tick();
    });
    connect(m_save, &QToolButton::clicked, this, [this] {
        const QString folder = QFileDialog::getExistingDirectory(this, tr("Save every rank's recording into"));
        QString error;
        if (!folder.isEmpty() && !saveAll(folder, &error))
            QMessageBox::warning(this, tr("Save all"), error);
    });
    // A rank's row opens that rank in its own live window.
    connect(m_tab, &JobTab::openRank, this, [this](const QString& socket) { attachLive(this, socket, {}, m_runner); });
    auto* bar = new QHBoxLayout;
    bar->addWidget(m_status, 1);
    bar->addWidget(m_detach);
    bar->addWidget(m_save);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(bar);
    layout->addWidget(m_tab, 1);
    connect(&m_timer, &QTimer::timeout, this, &LiveJobWindow::tick);
    m_timer.start(250);
    tick();
}

LiveJobWindow::~LiveJobWindow()
{
    m_timer.stop();
    m_session->detach();
    if (m_summarizing && m_runner)
        m_runner->cancel(m_summarizing);
}

void LiveJobWindow::tick()
{
    m_session->poll();
    const auto status = m_session->status();
    m_entries.resize(m_session->size());
    m_summarizedRevision.resize(m_session->size(), ~uint64_t(0));
    // States change without new events (a rank dies, lags): show them at once.
    bool stateChanged = false;
    for (size_t i = 0; i < status.size(); ++i) {
        RankEntry& e = m_entries[i];
        const std::string text = liveText(status[i]);
        if (e.summary.rank < 0 || e.live != text) {
            e.live = text;
            e.summary.rank = status[i].rank;
            e.source.rank = status[i].rank;
            e.source.path = status[i].socketPath;
            if (e.summary.events == 0 && e.error.empty())
                e.error = "no events yet";
            stateChanged = true;
        }
    }
    if (stateChanged)
        publish();
    startSummaries();
    QString text = tr("job %1 · %2 of %3 ranks attached").arg(QString::fromStdString(m_session->job())).arg(m_session->size());
    text = text.arg(m_session->worldSize() > 0 ? QString::number(m_session->worldSize()) : tr("?"));
    uint64_t events = 0;
    int streaming = 0;
    for (const auto& s : status) {
        events += s.stats.events;
        streaming += s.state == RankLiveState::Streaming || s.state == RankLiveState::Lagging ? 1 : 0;
    }
    text += tr(" · %1 events · %2 streaming").arg(events).arg(streaming);
    m_status->setText(text);
}

void LiveJobWindow::startSummaries()
{
    if (m_summarizing)
        return;
    std::vector<std::pair<size_t, std::shared_ptr<const Snapshot>>> work;
    for (size_t i = 0; i < m_session->size(); ++i) {
        const uint64_t rev = m_session->client(i).revision();
        if (rev == m_summarizedRevision[i])
            continue;
        auto snap = m_session->client(i).snapshot();
        m_summarizedRevision[i] = rev;
        if (hasEvents(*snap))
            work.emplace_back(i, std::move(snap));
    }
    if (work.empty())
        return;
    std::vector<int> ranks;
    for (const auto& w : work)
        ranks.push_back(m_session->rank(w.first));
    using Done = std::vector<std::pair<size_t, RankSummary>>;
    using Failed = std::vector<std::pair<size_t, std::string>>;
    auto results = std::make_shared<std::pair<Done, Failed>>();
    auto deliver = [this, results] {
        m_summarizing = 0;
        for (const auto& [i, summary] : results->first) {
            m_entries[i].summary = summary;
            m_entries[i].error.clear();
        }
        for (const auto& [i, why] : results->second)
            m_entries[i].error = why; // shown in the rank's row
        publish();
    };
    JobCallbacks callbacks;
    callbacks.receiver = this;
    callbacks.finished = deliver;
    callbacks.cancelled = [this] { m_summarizing = 0; };
    callbacks.failed = [this](const QString& message) {
        m_summarizing = 0;
        m_status->setText(message);
    };
    m_summarizing = m_runner->start(
        tr("live job %1").arg(QString::fromStdString(m_session->job())),
        [work = std::move(work), ranks, results](JobContext& job) {
        for (size_t k = 0; k < work.size() && !job.cancelled(); ++k) {
            try {
                AnalysisOptions o;
                o.until = AnalysisStage::Attributed;
                const auto a = analyze(AnalysisSource::recording(work[k].second, "rank " + std::to_string(ranks[k])), o);
                results->first.emplace_back(work[k].first, summarizeRank(*a, a->focusDevice(), ranks[k]));
            } catch (const std::exception& e) {
                results->second.emplace_back(work[k].first, e.what());
            }
        }
        },
        std::move(callbacks));
}

void LiveJobWindow::publish()
{
    m_set = RankSet::fromEntries(m_entries);
    m_tab->setRankSet(m_set);
    ++m_updates;
    emit updated();
}

QString LiveJobWindow::statusText() const { return m_status->text(); }

bool LiveJobWindow::saveAll(const QString& folder, QString* error)
{
    QDir().mkpath(folder);
    for (size_t i = 0; i < m_session->size(); ++i) {
        const QString path = QDir(folder).filePath(QStringLiteral("rank%1.pickle").arg(m_session->rank(i)));
        try {
            writePickleSnapshotFile(*m_session->client(i).snapshot(), path.toStdString());
        } catch (const std::exception& e) {
            if (error)
                *error = path + QStringLiteral(": ") + QString::fromUtf8(e.what());
            return false;
        }
    }
    return true;
}

LiveJobWindow* attachLiveJob(QWidget* parent, const QString& job, JobRunner* runner)
{
    std::vector<AgentInfo> agents;
    try {
        agents = listJobAgents(job.toStdString());
    } catch (const std::exception& e) {
        QMessageBox::warning(parent, QObject::tr("Attach"), QString::fromUtf8(e.what()));
        return nullptr;
    }
    if (agents.empty()) {
        QMessageBox::warning(parent, QObject::tr("Attach"),
                             QObject::tr("No rank of job %1 runs an agent here (looked in %2)")
                                 .arg(job, QString::fromStdString(agentDirectory())));
        return nullptr;
    }
    auto* window = new LiveJobWindow(job, {}, 5000, nullptr, runner);
    showLiveTab(window, window->windowTitle());
    return window;
}

} // namespace memscope
