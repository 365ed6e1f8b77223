#pragma once

#include "analysis/incremental_analysis.h"
#include "live/live_client.h"
#include "ui/document/document.h"

#include <QObject>
#include <QTimer>

#include <functional>
#include <memory>
#include <optional>

namespace memscope {

class JobRunner;

/*
 * The GUI's side of one live recording: a LiveClient (its own reader thread, writing the
 * on-disk stream) and the core's IncrementalAnalysis, driven by JobRunner jobs.
 *
 *   poll() every 40 ms ─ new rows ─> an ingest job: the rows taken under the client's lock,
 *        the replay continued, a LiveView published (O(new rows)) ──> viewUpdated()
 *   ─ due ─> a full-analysis job on the session's own one-thread runner at a lower priority
 *        (it and the release of replaced documents never hold up an ingest): analyze() of
 *        everything ingested, then makeDocument()
 *        ──> documentUpdated() (the same Document path as a file: categories, phases,
 *        findings), at most a quarter of the time and at least a second apart, and once
 *        more when the stream ends
 *
 * A failed ingest or analysis is kept and shown (updateFailed(), stateText()); the view keeps
 * what it had. Pausing stops applying updates, never receiving. In the bounded mode
 * (detailEvents > 0, setting live/detailEvents) only the newest events keep their detail,
 * the overview covers the whole run, and the full analysis runs on the stream file once it
 * ends. A session also holds a recording recovered from a recovery file (no connection).
 */
class LiveSession : public QObject {
    Q_OBJECT
public:
    // runner: the window's (null: one of its own). detailEvents: the bounded mode's detail
    // (0: every event, and full analyses while streaming).
    explicit LiveSession(QObject* parent = nullptr, JobRunner* runner = nullptr, int64_t detailEvents = 0);
    ~LiveSession() override;

    // Connects (throws std::runtime_error). The raw stream goes to a recovery file.
    void attach(const LiveEndpoint& endpoint);
    // Shows a recording read back from a recovery file.
    void showRecovered(std::shared_ptr<const Snapshot> snapshot, const QString& note);
    void detach();

    void setPaused(bool paused);
    bool paused() const { return m_paused; }
    // What turns a full analysis into a document on the runner's thread (default:
    // makeDocument); tests give one that fails, to see the failure shown.
    using DocumentMaker = std::function<std::shared_ptr<const Document>(std::shared_ptr<const Analysis>)>;
    void setDocumentMaker(DocumentMaker maker) { m_maker = std::move(maker); }

    LiveState state() const;
    QString stateText() const; // "streaming", "ended", "lost: …", and the last update's error
    // The last update's error (empty when it succeeded): the view keeps the one before.
    QString updateError() const { return m_updateError; }
    LiveStats stats() const;
    LiveHello hello() const;
    // The whole recording (built from the incremental model's rows: O(events)).
    std::shared_ptr<const Snapshot> snapshot() const;
    // The newest incremental view (curves, peaks, counters; every update).
    std::shared_ptr<const LiveView> view() const { return m_view; }
    // The newest full analysis's document (categories, phases, findings; slower cadence).
    std::shared_ptr<const Document> document() const { return m_document; }
    int documentsDelivered() const { return m_delivered; }
    int viewsDelivered() const { return m_views; }
    int64_t detailEvents() const { return m_detailEvents; }
    // When the newest events the current view shows were first seen (ms since the epoch).
    qint64 viewArrivalMs() const { return m_viewArrivalMs; }
    // Device memory NVML sees the process use (all GPUs); empty when NVML cannot tell.
    std::optional<uint64_t> deviceMemoryInUse() const { return m_nvmlUsed; }
    QString nvmlNote() const { return m_nvmlNote; }
    QString recoveryPath() const { return m_recoveryPath; }

    // Lets `old` go on a runner thread: the last reference to a replaced view or document of a
    // long run frees gigabytes, which must not stall the GUI thread.
    void releaseLater(std::shared_ptr<const void> old);

    // Writes the recording as a protocol-4 pickle; afterwards the recovery file goes.
    bool save(const QString& path, QString* error);
    bool saved() const { return m_saved; }
    void discardRecovery();

signals:
    void viewUpdated();
    void documentUpdated();
    void updateFailed(const QString& message);
    void statusChanged();

private:
    void poll();
    void startIngest();
    // Ingests what the client received on this thread: a save or a detach then holds it all.
    void ingestNow();
    void startFullAnalysis();
    void startRecoveredAnalysis();
    void fail(const QString& message);
    void sampleNvml();

    JobRunner* m_runner; // ingests (and a recovered recording's analysis)
    // One thread, lowered: full analyses, and the release of what they replace (a child of
    // the window's runner when there is one, so closing the tab does not wait for an analysis).
    JobRunner* m_background;
    int64_t m_detailEvents = 0;
    std::shared_ptr<LiveClient> m_client;
    std::shared_ptr<IncrementalAnalysis> m_model;
    std::shared_ptr<const Snapshot> m_recovered;
    QString m_recoveredNote;
    DocumentMaker m_maker;
    QTimer m_timer;
    std::shared_ptr<const LiveView> m_view;
    std::shared_ptr<const Document> m_document;
    QString m_updateError;
    uint64_t m_ingestedRevision = 0;
    bool m_ingesting = false;
    bool m_analyzing = false;
    bool m_finalAnalysisDone = false;
    int64_t m_analyzedEvents = -1;
    qint64 m_analysisEndMs = 0;
    qint64 m_analysisCostMs = 0;
    bool m_paused = false;
    bool m_saved = false;
    int m_delivered = 0;
    int m_views = 0;
    qint64 m_unshownSinceMs = 0; // events arrived that no ingest has taken, since then
    qint64 m_viewArrivalMs = 0;
    qint64 m_lastNvmlMs = 0;
    std::optional<uint64_t> m_nvmlUsed;
    QString m_nvmlNote;
    QString m_recoveryPath;
};

// makeDocument() of a live full analysis, with each device's peak report made here (off the
// GUI thread, where it and the column sizing cost 12-74 ms a document at 3M events).
std::shared_ptr<const Document> makeLiveDocument(std::shared_ptr<const Analysis> analysis);

// analyze() and makeDocument() for a snapshot already in memory: every stage, diagnosis too.
std::shared_ptr<const Document> analyzeSnapshot(std::shared_ptr<const Snapshot> snapshot, const std::string& name);

} // namespace memscope
