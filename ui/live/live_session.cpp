#include "ui/live/live_session.h"

#include "ui/runner/job_runner.h"

#include "io/pickle_writer.h"
#include "live/agent_locator.h"
#include "live/nvml.h"
#include "ui/live/attach_dialog.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QStandardPaths>

#include <unistd.h>

namespace memscope {

std::shared_ptr<const Document> analyzeSnapshot(std::shared_ptr<const Snapshot> snapshot, const std::string& name)
{
    return makeDocument(analyze(AnalysisSource::recording(std::move(snapshot), name)));
}

namespace {
bool hasEvents(const Snapshot& s)
{
    for (const DeviceTrace& d : s.devices)
        if (d.events.count())
            return true;
    return false;
}
} // namespace

LiveSession::LiveSession(QObject* parent, JobRunner* runner) : QObject(parent), m_runner(runner ? runner : new JobRunner(this))
{
    m_timer.setInterval(40);
    connect(&m_timer, &QTimer::timeout, this, &LiveSession::poll);
}

LiveSession::~LiveSession()
{
    m_timer.stop();
    if (m_client)
        m_client->detach();
}

void LiveSession::attach(const LiveEndpoint& endpoint)
{
    m_recoveryPath = QString::fromStdString(newRecoveryPath(windowRecoveryDirectory().toStdString()));
    LiveClient::Options options;
    options.recoveryPath = m_recoveryPath.toStdString();
    m_client = std::make_unique<LiveClient>(options);
    try {
        m_client->connect(endpoint);
    } catch (...) {
        m_client.reset();
        QFile::remove(m_recoveryPath);
        m_recoveryPath.clear();
        throw;
    }
    m_timer.start();
    poll();
}

void LiveSession::showRecovered(std::shared_ptr<const Snapshot> snapshot, const QString& note)
{
    m_recovered = std::move(snapshot);
    m_recoveredNote = note;
    if (m_recovered && hasEvents(*m_recovered))
        startAnalysis(m_recovered);
    emit statusChanged();
}

void LiveSession::detach()
{
    if (m_client)
        m_client->detach();
    poll();
}

void LiveSession::setPaused(bool paused)
{
    m_paused = paused;
    if (!paused)
        poll();
    emit statusChanged();
}

LiveState LiveSession::state() const { return m_client ? m_client->state() : LiveState::Ended; }

QString LiveSession::stateText() const
{
    if (!m_client)
        return m_recoveredNote.isEmpty() ? tr("recovered") : tr("recovered (%1)").arg(m_recoveredNote);
    const LiveState s = m_client->state();
    QString text = QString::fromLatin1(liveStateName(s).data(), static_cast<int>(liveStateName(s).size()));
    const std::string error = m_client->error();
    if (!error.empty())
        text += QStringLiteral(": ") + QString::fromStdString(error);
    if (!m_updateError.isEmpty())
        text += tr(" · update failed: %1").arg(m_updateError);
    return text;
}

LiveStats LiveSession::stats() const { return m_client ? m_client->stats() : LiveStats{}; }

LiveHello LiveSession::hello() const { return m_client ? m_client->hello() : LiveHello{}; }

std::shared_ptr<const Snapshot> LiveSession::snapshot() const { return m_client ? m_client->snapshot() : m_recovered; }

void LiveSession::sampleNvml()
{
    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    if (now - m_lastNvmlMs < 500)
        return;
    m_lastNvmlMs = now;
    Nvml& nvml = Nvml::instance();
    if (!nvml.available()) {
        m_nvmlNote = QString::fromStdString(nvml.error());
        m_nvmlUsed.reset();
        return;
    }
    const int64_t pid = hello().pid;
    m_nvmlUsed = pid > 0 ? nvml.processUsedBytes(static_cast<unsigned>(pid)) : std::nullopt;
    m_nvmlNote = m_nvmlUsed ? QString() : tr("NVML does not see process %1 on any GPU").arg(pid);
}

void LiveSession::poll()
{
    if (!m_client)
        return;
    sampleNvml();
    const uint64_t revision = m_client->revision();
    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    if (revision != m_analyzedRevision && m_unshownSinceMs == 0)
        m_unshownSinceMs = now;
    if (!m_paused && !m_analyzing && revision != m_analyzedRevision && now - m_lastStartMs >= 100) {
        auto snap = m_client->snapshot();
        m_analyzedRevision = revision;
        if (hasEvents(*snap)) {
            m_lastStartMs = now;
            startAnalysis(std::move(snap));
        }
    }
    emit statusChanged();
    if (m_client->finished() && revision == m_analyzedRevision && !m_analyzing && !m_paused)
        m_timer.setInterval(500); // nothing more will arrive; keep NVML and the state fresh
}

void LiveSession::startAnalysis(std::shared_ptr<const Snapshot> snapshot)
{
    m_analyzing = true;
    const qint64 arrival = m_unshownSinceMs ? m_unshownSinceMs : QDateTime::currentMSecsSinceEpoch();
    m_unshownSinceMs = 0;
    const std::string name = snapshot->path;
    auto result = std::make_shared<std::shared_ptr<const Document>>();
    JobCallbacks callbacks;
    callbacks.receiver = this;
    callbacks.finished = [this, result, arrival] {
        m_analyzing = false;
        m_updateError.clear();
        if (*result && !m_paused) {
            m_document = *result;
            m_documentArrivalMs = arrival;
            ++m_delivered;
            emit documentUpdated();
        }
        poll();
    };
    callbacks.failed = [this](const QString& message) {
        m_analyzing = false;
        m_updateError = message;
        emit updateFailed(message);
        poll();
    };
    callbacks.cancelled = [this] { m_analyzing = false; };
    m_runner->start(
        tr("live update"),
        [snapshot = std::move(snapshot), name, result, analyzer = m_analyzer](JobContext&) {
        *result = analyzer ? analyzer(snapshot, name) : analyzeSnapshot(snapshot, name);
        },
        std::move(callbacks));
}

bool LiveSession::save(const QString& path, QString* error)
{
    auto snap = snapshot();
    if (!snap) {
        if (error)
            *error = tr("nothing recorded yet");
        return false;
    }
    try {
        writePickleSnapshotFile(*snap, path.toStdString());
    } catch (const std::exception& e) {
        if (error)
            *error = QString::fromUtf8(e.what());
        return false;
    }
    m_saved = true;
    if (m_client && m_client->finished())
        discardRecovery();
    return true;
}

void LiveSession::discardRecovery()
{
    if (!m_recoveryPath.isEmpty() && (!m_client || m_client->finished()))
        QFile::remove(m_recoveryPath);
}

} // namespace memscope
