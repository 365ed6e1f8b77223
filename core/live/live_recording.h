#pragma once

#include "snapshot/snapshot.h"

#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

namespace memscope {

// A message from an agent that breaks the protocol. The connection that sent it is
// closed; everything applied before it stays.
class LiveProtocolError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// The agent answered with ERROR instead of HELLO: it refused this client (over TCP, a
// missing or wrong token). what() is "the agent refused the connection: " and its reason.
class LiveRefused : public LiveProtocolError {
public:
    using LiveProtocolError::LiveProtocolError;
};

// What the agent said about itself in HELLO.
struct LiveHello {
    std::string json; // as received
    int64_t pid = 0;
    std::string mode; // tracker, poll, replay
    std::string commandLine;
    std::string torchVersion;
    std::string pythonVersion;
    std::string host;
    std::vector<std::string> devices;
    int64_t startedUs = 0;
    // A rank of a torchrun job (protocol 1.1): its job id, rank and world size; empty / -1 otherwise.
    std::string job;
    int rank = -1;
    int worldSize = -1;
    int localRank = -1;
};

struct LiveStats {
    uint64_t messages = 0;
    uint64_t bytes = 0;
    uint64_t events = 0;
    uint64_t annotations = 0;
    uint64_t agentDropped = 0; // events the agent could not queue (STATUS / END)
    uint64_t agentEvents = 0; // events the agent has produced so far (STATUS)
    uint64_t truncated = 0; // events the agent no longer held when this client joined
    bool ended = false; // END received
    std::string endReason;
    std::string endJson;
    std::vector<std::string> agentErrors;
    // torch's own counters sent with END, of the process's device (-1 when absent).
    int64_t torchRequestedPeak = -1;
    int64_t torchReservedPeak = -1;
    int torchDevice = 0; // the device of those counters
};

/*
 * A recording received from an agent, kept in the same Snapshot shape a file loads
 * into, so the same replay runs on it.
 *
 * The wire defines strings, frames and stacks once under its own ids; the maps below
 * translate them to the snapshot's pools as they arrive. Each message is checked
 * completely before it changes anything, so a bad message leaves the model as it was.
 * snapshot() hands out an immutable copy (the pools are rebuilt in id order, so ids
 * are identical in the copy).
 */
class LiveRecording {
public:
    LiveRecording();

    // Applies one message; throws LiveProtocolError.
    void apply(uint8_t type, std::span<const uint8_t> payload);

    const Snapshot& model() const { return *m_snapshot; }
    const LiveHello& hello() const { return m_hello; }
    const LiveStats& stats() const { return m_stats; }

    std::shared_ptr<const Snapshot> snapshot() const;

    // The bounded live mode: drops the event rows applied so far, once a consumer (the
    // IncrementalAnalysis, analysis/incremental_analysis.h) has taken them, so the recording
    // holds only what arrived since (and the strings, frames, stacks, annotations and
    // segments, which do not grow with the run). Row r of device index d's table is then
    // event eventBase(d) + r of that device; `oom` rows' deviceFree is keyed by the row.
    // snapshot() then holds only the rows since; the whole recording is the on-disk stream.
    void releaseEvents();
    int64_t eventBase(size_t deviceIndex) const { return deviceIndex < m_released.size() ? m_released[deviceIndex] : 0; }

private:
    void applyHello(std::span<const uint8_t> p);
    void applyString(std::span<const uint8_t> p);
    void applyFrame(std::span<const uint8_t> p);
    void applyStack(std::span<const uint8_t> p);
    void applyEvents(std::span<const uint8_t> p);
    void applyAnnotation(std::span<const uint8_t> p);
    void applySettings(std::span<const uint8_t> p);
    void applySegments(std::span<const uint8_t> p);
    void applyStatus(std::span<const uint8_t> p);
    void applyEnd(std::span<const uint8_t> p);

    StringId stringRef(uint32_t wire, const char* what) const;
    StackId stackRef(uint32_t wire, const char* what) const;
    DeviceTrace& deviceTrace(uint32_t device);

    std::unique_ptr<Snapshot> m_snapshot;
    LiveHello m_hello;
    LiveStats m_stats;
    std::vector<uint64_t> m_sizeTotal; // per device: sizes received so far (snapshot_limits.h)
    bool m_helloSeen = false;
    std::unordered_map<uint32_t, StringId> m_strings;
    std::unordered_map<uint32_t, FrameId> m_frames;
    std::unordered_map<uint32_t, StackId> m_stacks;
    std::vector<FrameId> m_scratch;
    std::vector<int64_t> m_released; // per device index: rows dropped by releaseEvents()
};

// A copy of a snapshot (StringPool cannot be copied; its strings are re-interned in id order).
std::unique_ptr<Snapshot> copySnapshot(const Snapshot& s);

} // namespace memscope
