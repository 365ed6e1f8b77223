#pragma once

#include "live/live_recording.h"

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>

namespace memscope {

// Where an agent listens: a Unix socket path, or a loopback TCP address and its token.
struct LiveEndpoint {
    std::string unixPath;
    std::string tcpHost;
    int tcpPort = 0;
    std::string token;

    std::string describe() const;
};

enum class LiveState : uint8_t {
    Idle, // not connected yet
    Streaming, // connected, receiving
    Ended, // the agent sent END and closed: the recording is complete
    Lost, // the connection broke before END (the agent was killed, say)
    Failed, // the agent broke the protocol; the connection was closed
    Detached, // the user detached
};

std::string_view liveStateName(LiveState s);

/*
 * The app's side of a live session: one connection to one agent.
 *
 *   connect() ── socket ──> reader thread ──bytes──> recovery file (flushed ≤ 1 s)
 *                                        └─────────> LiveDecoder ─> LiveRecording
 *                                                                   (under m_mutex)
 *
 * The reader thread owns the socket; everything else reads through snapshot()/stats(),
 * which lock briefly. Whatever happens to the connection, the recording keeps what
 * arrived. connect() checks the peer's uid on Unix sockets (SO_PEERCRED).
 */
class LiveClient {
public:
    struct Options {
        std::string recoveryPath; // empty: no recovery file
        uint32_t maxMessage = 16u << 20; // larger messages close the connection
        int connectTimeoutMs = 10000; // retry while the socket does not exist yet
    };

    LiveClient();
    explicit LiveClient(Options options);
    ~LiveClient();
    LiveClient(const LiveClient&) = delete;
    LiveClient& operator=(const LiveClient&) = delete;

    // Connects and starts the reader thread. Throws std::runtime_error with a one-line reason.
    void connect(const LiveEndpoint& endpoint);
    // Closes the connection (if open) and joins the reader. The data stays.
    void detach();

    LiveState state() const;
    std::string error() const;
    bool finished() const; // Ended, Lost, Failed or Detached
    bool waitFinished(int timeoutMs) const;

    // An immutable copy of what was received so far.
    std::shared_ptr<const Snapshot> snapshot() const;
    // Runs f on the recording under the reader thread's lock: the way to take only the new
    // rows (IncrementalAnalysis::ingest), in O(new rows). f must be quick; the reader waits.
    void withRecording(const std::function<void(LiveRecording&)>& f);
    LiveStats stats() const;
    LiveHello hello() const;
    // Incremented after every batch of applied messages; cheap to poll.
    uint64_t revision() const { return m_revision.load(std::memory_order_acquire); }
    // Milliseconds since bytes last arrived (the agent sends STATUS twice a second, so a
    // healthy agent never goes quiet for long); since connect() before the first; -1 before connect().
    int64_t quietMs() const;

    // Called on the reader thread after data was applied or the state changed.
    void setOnUpdate(std::function<void()> callback);

private:
    void readLoop();
    void finish(LiveState state, std::string error);
    void flushRecovery(bool force);

    Options m_options;
    int m_fd = -1;
    int m_wakePipe[2] = {-1, -1};
    std::thread m_thread;
    mutable std::mutex m_mutex;
    mutable std::condition_variable m_finishedCv;
    LiveRecording m_recording;
    LiveState m_state = LiveState::Idle;
    std::string m_error;
    std::atomic<uint64_t> m_revision{0};
    std::atomic<int64_t> m_lastDataMs{-1};
    std::function<void()> m_onUpdate;
    std::FILE* m_recovery = nullptr;
    int64_t m_lastFlushMs = 0;
};

// Reads a recorded protocol stream (a recovery file) into a snapshot. A truncated
// tail is dropped; a broken message ends the reading. `note` receives what happened.
std::shared_ptr<const Snapshot> readLiveStreamFile(const std::string& path, std::string* note = nullptr);

// True when the bytes start like a protocol stream (a HELLO with the magic).
bool looksLikeLiveStream(std::span<const uint8_t> head);

} // namespace memscope
