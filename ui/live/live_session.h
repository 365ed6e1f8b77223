#pragma once

#include "ui/document/document.h"
#include "live/live_client.h"

#include <QObject>
#include <QTimer>

#include <functional>
#include <memory>
#include <optional>

namespace memscope {

class JobRunner;

/*
 * The GUI's side of one live recording: a LiveClient (its own reader thread) plus the
 * analysis that turns what arrived into a Document for the views.
 *
 *   LiveClient ──revision──> poll() every 40 ms ──> a JobRunner job (replay, attribute,
 *   view models) ──> documentUpdated(), or updateFailed() with the message
 *
 * At most one analysis runs at a time, and one starts at most every 100 ms, so the view
 * updates up to 10 times a second while analysing the whole recording takes under ~100 ms;
 * pausing stops applying updates, never receiving. A session also holds a recording
 * recovered from a recovery file (no connection).
 */
class LiveSession : public QObject {
    Q_OBJECT
public:
    // runner: the window's (null: one of its own).
    explicit LiveSession(QObject* parent = nullptr, JobRunner* runner = nullptr);
    ~LiveSession() override;

    // Connects (throws std::runtime_error). The raw stream goes to a recovery file.
    void attach(const LiveEndpoint& endpoint);
    // Shows a recording read back from a recovery file.
    void showRecovered(std::shared_ptr<const Snapshot> snapshot, const QString& note);
    void detach();

    void setPaused(bool paused);
    // What turns a recording into a document on the runner's thread (default: analyzeSnapshot);
    // tests give one that fails, to see the failure shown.
    using Analyzer = std::function<std::shared_ptr<const Document>(std::shared_ptr<const Snapshot>, const std::string&)>;
    void setAnalyzer(Analyzer analyzer) { m_analyzer = std::move(analyzer); }
    bool paused() const { return m_paused; }

    LiveState state() const;
    QString stateText() const; // "streaming", "ended", "lost: …", and the last update's error
    // The last update's error (empty when it succeeded): the view keeps the one before.
    QString updateError() const { return m_updateError; }
    LiveStats stats() const;
    LiveHello hello() const;
    std::shared_ptr<const Snapshot> snapshot() const;
    std::shared_ptr<const Document> document() const { return m_document; }
    int documentsDelivered() const { return m_delivered; }
    // When the newest events the current document shows were first seen (ms since the epoch).
    qint64 documentArrivalMs() const { return m_documentArrivalMs; }
    // Device memory NVML sees the process use (all GPUs); empty when NVML cannot tell.
    std::optional<uint64_t> deviceMemoryInUse() const { return m_nvmlUsed; }
    QString nvmlNote() const { return m_nvmlNote; }
    QString recoveryPath() const { return m_recoveryPath; }

    // Writes the recording as a protocol-4 pickle; afterwards the recovery file goes.
    bool save(const QString& path, QString* error);
    bool saved() const { return m_saved; }
    void discardRecovery();

signals:
    void documentUpdated();
    void updateFailed(const QString& message);
    void statusChanged();

private:
    void poll();
    void startAnalysis(std::shared_ptr<const Snapshot> snapshot);
    void sampleNvml();

    std::unique_ptr<LiveClient> m_client;
    std::shared_ptr<const Snapshot> m_recovered;
    QString m_recoveredNote;
    JobRunner* m_runner;
    Analyzer m_analyzer;
    QString m_updateError;
    QTimer m_timer;
    std::shared_ptr<const Document> m_document;
    uint64_t m_analyzedRevision = 0;
    qint64 m_lastStartMs = 0;
    bool m_analyzing = false;
    bool m_paused = false;
    bool m_saved = false;
    int m_delivered = 0;
    qint64 m_unshownSinceMs = 0; // events arrived that no analysis has started on, since then
    qint64 m_documentArrivalMs = 0;
    qint64 m_lastNvmlMs = 0;
    std::optional<uint64_t> m_nvmlUsed;
    QString m_nvmlNote;
    QString m_recoveryPath;
};

// analyze() and makeDocument() for a snapshot already in memory: every stage, diagnosis too.
std::shared_ptr<const Document> analyzeSnapshot(std::shared_ptr<const Snapshot> snapshot, const std::string& name);

} // namespace memscope
