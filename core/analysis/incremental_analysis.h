#pragma once

#include "analysis/analysis.h"
#include "live/live_client.h"
#include "replay/chunked_series.h"
#include "replay/incremental_replay.h"

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace memscope {

// What the live tab shows after one update: immutable, shared, cheap to take (see
// IncrementalAnalysis). Events are counted over all devices.
struct LiveView {
    uint64_t revision = 0; // +1 per published view
    std::vector<DeviceReplayView> devices; // the recording's devices, in its order
    int64_t events = 0; // events in the views above (shown)
    int64_t received = 0; // events the recording had when this view was taken
    LiveStats stats; // the connection's counters (dropped: stats.agentDropped)
    LiveState state = LiveState::Idle;
    std::string connectionError; // LiveClient::error() once finished
    // The latest full analysis (attribution, iterations, categories, diagnoses) of the first
    // analysisEvents events, on the slower cadence; null before the first, and in the bounded mode.
    std::shared_ptr<const Analysis> analysis;
    int64_t analysisEvents = 0;
    double analysisMs = 0; // what that analysis cost
    // The last update or analysis that failed, with why: the tab shows it; empty when none.
    std::string error;
    double ingestMs = 0; // what taking the new rows and publishing this view cost
    int64_t heldBytes = 0; // the incremental state's memory (curves, pyramids, rows kept)
    int64_t rowBytes = 0; // of heldBytes: the rows mirrored since the last full analysis's Snapshot
    bool bounded = false;

    const DeviceReplayView* device(int ordinal) const
    {
        for (const DeviceReplayView& d : devices)
            if (d.device == ordinal)
                return &d;
        return nullptr;
    }
};

/*
 * The live tab's model: the recording analysed as it grows, each update costing in
 * proportion to the new events.
 *
 *   reader thread (LiveClient) ── rows ──> ingest() under the client's lock, O(new rows):
 *        IncrementalDeviceReplay per device (curves, pyramids, peaks, allocations: exact)
 *        + the rows mirrored into append-only chunks, then released from the recording
 *   ──> publish: a LiveView (immutable; shares the chunks, copies nothing whole)
 *   full-analysis thread, on a slower cadence (at most `fullAnalysisShare` of its time):
 *        a Snapshot built without any lock from the last full analysis's Snapshot and the
 *        rows mirrored since; it becomes the mirror's base and the rows it holds are let go
 *        (every analysed event is held once, in the Snapshot the tab's analysis shares), analyze() on it
 *        (attribution, iterations, categories, diagnoses: the same pipeline as a file, so
 *        equal to it by construction), published in the next LiveView
 *
 * The curves, peaks and pyramids of every update equal a whole-file replay of the same
 * prefix (tests/live/tst_incremental_replay.cpp, tst_incremental_analysis.cpp). Bounded mode
 * (detailEvents > 0): per-event detail (curves, mirrored rows) of all but the newest
 * detailEvents is let go; the pyramids keep the whole run's min/max at every zoom, the
 * on-disk stream (LiveClient's recovery file) holds every event, and no full analysis runs
 * while streaming (analyze() the stream file afterwards, or readLiveStreamRange for a range).
 *
 * Threading: ingest/publish on one worker thread (start() makes it, or call ingest() from
 * your own), the full analysis on a second; view() from any thread (a mutex held for a
 * shared_ptr copy). onPublished runs on the worker thread after each new view.
 */
class IncrementalAnalysis {
public:
    struct Options {
        std::string name = "live"; // the Analysis's name
        int64_t detailEvents = 0; // 0: keep every event's detail and run full analyses
        double fullAnalysisShare = 0.25; // full analyses take at most this share of wall time
        int minFullAnalysisIntervalMs = 1000;
        int ingestPeriodMs = 50; // start(): ingest at most this often
        AnalysisStage fullAnalysisUntil = AnalysisStage::Diagnosed;
        // The analysis thread's nice value (Linux, per thread): the ingest thread, the reader
        // and the GUI take a core from it at once; it still gets every idle cycle. 0: as they.
        int analysisNice = 10;
    };

    IncrementalAnalysis();
    explicit IncrementalAnalysis(Options options);
    ~IncrementalAnalysis();
    IncrementalAnalysis(const IncrementalAnalysis&) = delete;
    IncrementalAnalysis& operator=(const IncrementalAnalysis&) = delete;

    // Takes the rows `recording` received since the last call (the caller holds the client's
    // lock: LiveClient::withRecording), releases them from it, and updates the replays.
    // Returns the events taken. Never throws: a failure is kept for the next view's `error`.
    int64_t ingest(LiveRecording& recording);
    // The same for a plain growing Snapshot (tests, benchmarks): rows [0, count) of each
    // device, of which the ones past what was taken are new.
    int64_t ingest(const Snapshot& growing);
    // Publishes a view of what was ingested; `client` (may be null) adds its state and counters.
    std::shared_ptr<const LiveView> publish(const LiveClient* client = nullptr, double ingestMs = 0);
    // Builds a Snapshot of everything ingested (mirroredSnapshot()), makes it the mirror's
    // base (the rows it holds are let go) and runs analyze() on it; the next publish()
    // carries it. Empty result in the bounded mode.
    std::shared_ptr<const Analysis> runFullAnalysis();
    // The Snapshot of everything ingested so far: the base's columns and the rows mirrored
    // since; null in the bounded mode once detail was let go. O(events).
    std::shared_ptr<const Snapshot> mirroredSnapshot() const;
    // The last full analysis's Snapshot, which holds the mirrored events before the rows kept
    // (null before the first): the analysis shares it, nothing copies it.
    std::shared_ptr<const Snapshot> baseSnapshot() const;

    std::shared_ptr<const LiveView> view() const;
    // Hands a view the caller no longer needs to the analysis thread, which lets it go: the
    // last reference to an old full analysis frees gigabytes, which must not happen on the
    // GUI or ingest thread (measured: 1.1-1.5 s gaps at 10M events). publish() retires the
    // view it replaces the same way. Without the analysis thread (bounded mode) it is freed at once.
    void retire(std::shared_ptr<const LiveView> view);

    // Two threads: ingest + publish every ingestPeriodMs (sooner when data waits), and full
    // analyses when due (and once more when the connection has finished). stop() joins them.
    void start(LiveClient& client, std::function<void()> onPublished = {});
    void stop();
    // Asks the analysis thread for a full analysis now (Pause, a click on a page).
    void requestFullAnalysis();

private:
    struct Row {
        Action action = Action::Unknown;
        StackId stack;
        StringId meta;
        StringId context;
        uint64_t addr = 0;
        uint64_t size = 0;
        uint64_t stream = 0;
        int64_t time = 0;
    };
    struct DeviceState {
        int ordinal = 0;
        IncrementalDeviceReplay replay;
        ChunkedSeries<Row> rows; // mirrored, absolute numbering; evicted before m_base's rows
        std::vector<std::pair<int64_t, uint64_t>> deviceFree; // absolute row -> device_free
        bool hasTime = false;
    };
    void ingestDevice(size_t index, const DeviceTrace& trace, int64_t base);
    void mirrorPools(const Snapshot& s);
    void ingestLoop(LiveClient* client, std::function<void()> onPublished);
    void analysisLoop(LiveClient* client);

    Options m_options;
    mutable std::mutex m_stateMutex; // the ingest state against the full analysis's copy of it
    std::vector<std::unique_ptr<DeviceState>> m_devices;
    std::shared_ptr<const Snapshot> m_base; // the last full analysis's; rows before its counts are let go
    ChunkedSeries<std::string> m_strings; // mirrored pools, in id order (id 0 included)
    ChunkedSeries<Frame> m_frames;
    ChunkedSeries<std::vector<FrameId>> m_stacks;
    std::vector<Annotation> m_annotations;
    std::vector<Segment> m_segments;
    size_t m_segmentsSeen = SIZE_MAX;
    std::map<std::string, std::string> m_settings;
    bool m_traceOverflowed = false;
    int64_t m_traceMaxEntries = -1;
    std::string m_path;
    std::string m_ingestError;
    int64_t m_events = 0;
    int64_t m_received = 0;

    mutable std::mutex m_viewMutex;
    std::shared_ptr<const LiveView> m_view;
    std::shared_ptr<const Analysis> m_analysis;
    std::vector<std::shared_ptr<const LiveView>> m_retired; // freed on the analysis thread
    int64_t m_analysisEvents = 0;
    double m_analysisMs = 0;
    std::string m_analysisError;
    uint64_t m_revision = 0;

    std::thread m_ingestThread;
    std::thread m_analysisThread;
    std::mutex m_wakeMutex;
    std::condition_variable m_wake;
    bool m_stop = false;
    bool m_analysisRequested = false;
    std::atomic<bool> m_analysisRunning{false}; // the analysis thread exists (retired views go to it)
};

} // namespace memscope
