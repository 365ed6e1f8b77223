#include "ui/live/live_session.h"

#include "io/pickle_writer.h"
#include "live/agent_locator.h"
#include "live/nvml.h"
#include "ui/live/attach_dialog.h"
#include "ui/runner/job_runner.h"

#include <QDateTime>
#include <QElapsedTimer>
#include <QFile>

#include <algorithm>
#include <stdexcept>

#ifdef __linux__
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace memscope {

std::shared_ptr<const Document> analyzeSnapshot(std::shared_ptr<const Snapshot> snapshot, const std::string& name)
{
    return makeDocument(analyze(AnalysisSource::recording(std::move(snapshot), name)));
}

std::shared_ptr<const Document> makeLiveDocument(std::shared_ptr<const Analysis> analysis)
{
    // Not yet shared: filled in before anyone reads it.
    auto doc = std::const_pointer_cast<Document>(makeDocument(std::move(analysis)));
    if (doc->attributed())
        for (size_t i = 0; i < doc->devices.size(); ++i)
            doc->peakReports.push_back(std::make_shared<const PointReport>(
                buildPointReport(*doc->attribution(), i, peakEvent(*doc->devices[i].replay))));
    return doc;
}

namespace {
bool hasEvents(const Snapshot& s)
{
    for (const DeviceTrace& d : s.devices)
        if (d.events.count())
            return true;
    return false;
}

int64_t eventsOf(const Analysis& a)
{
    int64_t n = 0;
    for (const DeviceTrace& d : a.snapshot->devices)
        n += static_cast<int64_t>(d.events.count());
    return n;
}

qint64 nowMs() { return QDateTime::currentMSecsSinceEpoch(); }

// The background runner's one thread yields to the ingest, the reader and the GUI (Linux, per
// thread; the thread serves nothing else, so it is never raised again).
void lowerThisThread()
{
#ifdef __linux__
    ::setpriority(PRIO_PROCESS, static_cast<id_t>(::syscall(SYS_gettid)), 10);
#endif
}

} // namespace

LiveSession::LiveSession(QObject* parent, JobRunner* runner, int64_t detailEvents)
    : QObject(parent), m_runner(runner ? runner : new JobRunner(this)),
      // A child of the window's runner when there is one: closing the tab during a full
      // analysis (seconds at 10M events) must not wait for it; its results go nowhere then.
      m_background(new JobRunner(runner ? static_cast<QObject*>(runner) : this, 1)),
      m_detailEvents(std::max<int64_t>(0, detailEvents))
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
    auto client = std::make_shared<LiveClient>(options);
    try {
        client->connect(endpoint);
    } catch (...) {
        QFile::remove(m_recoveryPath);
        m_recoveryPath.clear();
        throw;
    }
    IncrementalAnalysis::Options o;
    o.name = m_recoveryPath.toStdString();
    o.detailEvents = m_detailEvents;
    m_model = std::make_shared<IncrementalAnalysis>(o);
    m_client = std::move(client);
    m_timer.start();
    poll();
}

void LiveSession::showRecovered(std::shared_ptr<const Snapshot> snapshot, const QString& note)
{
    m_recovered = std::move(snapshot);
    m_recoveredNote = note;
    if (m_recovered && hasEvents(*m_recovered))
        startRecoveredAnalysis();
    emit statusChanged();
}

void LiveSession::detach()
{
    if (m_client)
        m_client->detach();
    ingestNow();
    poll();
}

void LiveSession::ingestNow()
{
    // The client's lock orders this after (or before) an ingest the runner has in flight, so
    // the model holds every event received whichever runs first; that job then publishes it.
    if (m_client && m_model)
        m_client->withRecording([this](LiveRecording& r) { m_model->ingest(r); });
}

void LiveSession::setPaused(bool paused)
{
    m_paused = paused;
    if (!paused) {
        if (m_view)
            emit viewUpdated();
        poll();
    }
    emit statusChanged();
}

LiveState LiveSession::state() const { return m_client ? m_client->state() : LiveState::Ended; }

QString LiveSession::stateText() const
{
    QString text;
    if (!m_client) {
        text = m_recoveredNote.isEmpty() ? tr("recovered") : tr("recovered (%1)").arg(m_recoveredNote);
    } else {
        const LiveState s = m_client->state();
        text = QString::fromLatin1(liveStateName(s).data(), static_cast<int>(liveStateName(s).size()));
        const std::string error = m_client->error();
        if (!error.empty())
            text += QStringLiteral(": ") + QString::fromStdString(error);
    }
    if (!m_updateError.isEmpty())
        text += tr(" · update failed: %1").arg(m_updateError);
    return text;
}

LiveStats LiveSession::stats() const { return m_client ? m_client->stats() : LiveStats{}; }

LiveHello LiveSession::hello() const { return m_client ? m_client->hello() : LiveHello{}; }

std::shared_ptr<const Snapshot> LiveSession::snapshot() const
{
    if (!m_model)
        return m_recovered;
    if (auto s = m_model->mirroredSnapshot())
        return s;
    // The bounded mode let the detail go: the stream on disk holds every event.
    return m_recoveryPath.isEmpty() ? nullptr : readLiveStreamFile(m_recoveryPath.toStdString());
}

void LiveSession::sampleNvml()
{
    const qint64 now = nowMs();
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

void LiveSession::fail(const QString& message)
{
    m_updateError = message;
    emit updateFailed(message);
    emit statusChanged();
}

void LiveSession::poll()
{
    if (!m_client)
        return;
    sampleNvml();
    const uint64_t revision = m_client->revision();
    const qint64 now = nowMs();
    if (revision != m_ingestedRevision && m_unshownSinceMs == 0)
        m_unshownSinceMs = now;
    if (!m_ingesting && revision != m_ingestedRevision)
        startIngest();
    const bool finished = m_client->finished();
    const bool caughtUp = finished && !m_ingesting && revision == m_ingestedRevision;
    if (!m_analyzing && m_view && m_view->events > 0 && m_view->events != m_analyzedEvents && !m_paused) {
        const bool due = now - m_analysisEndMs >= std::max<qint64>(1000, 3 * m_analysisCostMs);
        // At the end, at once (a failed one retried a quarter second later, not in a loop).
        if ((m_detailEvents == 0 && due) || (caughtUp && now - m_analysisEndMs >= 250))
            startFullAnalysis();
    }
    emit statusChanged();
    if (caughtUp && !m_analyzing && m_view && m_view->events == m_analyzedEvents)
        m_timer.setInterval(500); // nothing more will arrive; keep NVML and the state fresh
}

void LiveSession::startIngest()
{
    m_ingesting = true;
    const uint64_t revision = m_client->revision();
    const qint64 arrival = m_unshownSinceMs ? m_unshownSinceMs : nowMs();
    m_unshownSinceMs = 0;
    auto out = std::make_shared<std::shared_ptr<const LiveView>>();
    JobCallbacks callbacks;
    callbacks.receiver = this;
    callbacks.finished = [this, out, arrival, revision] {
        m_ingesting = false;
        m_ingestedRevision = revision;
        releaseLater(std::move(m_view));
        m_view = *out;
        if (m_view && !m_view->error.empty() && QString::fromStdString(m_view->error) != m_updateError)
            fail(QString::fromStdString(m_view->error));
        if (!m_paused) {
            m_viewArrivalMs = arrival;
            ++m_views;
            emit viewUpdated();
        }
        poll();
    };
    callbacks.failed = [this](const QString& message) {
        m_ingesting = false;
        fail(message);
    };
    callbacks.cancelled = [this] { m_ingesting = false; };
    m_runner->start(
        tr("live update"),
        [client = m_client, model = m_model, out](JobContext&) {
        QElapsedTimer t;
        t.start();
        client->withRecording([&](LiveRecording& r) { model->ingest(r); });
        *out = model->publish(client.get(), static_cast<double>(t.nsecsElapsed()) / 1e6);
        },
        std::move(callbacks));
}

void LiveSession::startFullAnalysis()
{
    m_analyzing = true;
    const qint64 start = nowMs();
    struct Result {
        std::shared_ptr<const Document> document;
        int64_t events = 0;
    };
    auto out = std::make_shared<Result>();
    JobCallbacks callbacks;
    callbacks.receiver = this;
    callbacks.finished = [this, out, start] {
        m_analyzing = false;
        m_analysisEndMs = nowMs();
        m_analysisCostMs = m_analysisEndMs - start;
        m_analyzedEvents = out->events;
        m_updateError.clear();
        if (out->document && !m_paused) {
            releaseLater(std::move(m_document));
            m_document = out->document;
            ++m_delivered;
            emit documentUpdated();
        }
        poll();
    };
    callbacks.failed = [this, start](const QString& message) {
        m_analyzing = false;
        m_analysisEndMs = nowMs();
        m_analysisCostMs = m_analysisEndMs - start;
        fail(message); // tried again when due, the events analysed stay the last that succeeded
    };
    callbacks.cancelled = [this] { m_analyzing = false; };
    const bool bounded = m_detailEvents > 0;
    const std::string stream = m_recoveryPath.toStdString();
    m_background->start(
        tr("live update"),
        [model = m_model, out, bounded, stream, maker = m_maker](JobContext&) {
        lowerThisThread();
        std::shared_ptr<const Analysis> a;
        if (bounded) // the detail was let go: the stream on disk holds every event
            a = analyze(AnalysisSource::file(stream));
        else
            a = model->runFullAnalysis();
        if (!a)
            throw std::runtime_error("the recording could not be analysed");
        out->events = eventsOf(*a);
        out->document = maker ? maker(a) : makeLiveDocument(a);
        },
        std::move(callbacks));
}

void LiveSession::startRecoveredAnalysis()
{
    m_analyzing = true;
    auto out = std::make_shared<std::shared_ptr<const Document>>();
    JobCallbacks callbacks;
    callbacks.receiver = this;
    callbacks.finished = [this, out] {
        m_analyzing = false;
        m_document = *out;
        ++m_delivered;
        emit documentUpdated();
    };
    callbacks.failed = [this](const QString& message) {
        m_analyzing = false;
        fail(message);
    };
    callbacks.cancelled = [this] { m_analyzing = false; };
    m_runner->start(
        tr("live update"),
        [snapshot = m_recovered, out, maker = m_maker](JobContext&) {
        auto a = analyze(AnalysisSource::recording(snapshot, snapshot->path));
        *out = maker ? maker(a) : makeDocument(a);
        },
        std::move(callbacks));
}

void LiveSession::releaseLater(std::shared_ptr<const void> old)
{
    // On the background thread, after any full analysis running: never in the way of an ingest.
    if (old)
        m_background->start(tr("live update"), [old = std::move(old)](JobContext&) mutable {
            lowerThisThread();
            old.reset();
        });
}

bool LiveSession::save(const QString& path, QString* error)
{
    try {
        ingestNow(); // what arrived since the last update is saved too
        auto snap = snapshot();
        if (!snap) {
            if (error)
                *error = tr("nothing recorded yet");
            return false;
        }
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
