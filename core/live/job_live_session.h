#pragma once

#include "live/agent_directory.h"
#include "live/live_client.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace memscope {

enum class RankLiveState : uint8_t {
    Streaming, // receiving
    Lagging, // connected, but quiet (no bytes, or no new event) for Options::lagMs while another rank streams
    Ended, // the agent sent END: this rank's recording is complete
    Dead, // the connection closed before END: the process died or was killed
    Failed, // the agent broke the protocol
    Detached, // detached by the user
};

std::string_view rankLiveStateName(RankLiveState s);

struct RankLiveStatus {
    int rank = -1;
    int pid = 0;
    std::string socketPath;
    RankLiveState state = RankLiveState::Streaming;
    std::string detail; // why Dead / Failed / Lagging, in words
    LiveStats stats;
    int64_t quietMs = 0; // since bytes last arrived
    int64_t noEventMs = 0; // since the event count last grew
};

/*
 * Live attach to every rank of a torchrun job at once. Each rank's agent listens on
 * job-<job>-rank-<r>.sock in the private agent directory (agent/memscope_agent/job.py);
 * poll() attaches a LiveClient to each rank that has appeared since the last call, and
 * works out each rank's state from its client:
 *
 *   client Streaming ──quiet or no new event for lagMs while another rank's events grew──> Lagging
 *   client Ended → Ended, Lost → Dead, Failed → Failed, Detached → Detached
 *
 * A rank's agent sends STATUS about twice a second, so a rank goes quiet only when its
 * process is frozen or its host unreachable; "no new event while the others get some" is
 * a rank stuck while the rest train. A dead or lagging rank never stops the others.
 * Each rank keeps its own recording (client(i).snapshot()), and its recovery file under
 * Options::recoveryDir when one is given.
 */
class JobLiveSession {
public:
    struct Options {
        std::string job;
        std::string directory = agentDirectory();
        std::string recoveryDir; // empty: no recovery files; else DIR/rank<R>.pickle.mscp
        int64_t lagMs = 5000;
    };

    explicit JobLiveSession(Options options);
    ~JobLiveSession();
    JobLiveSession(const JobLiveSession&) = delete;
    JobLiveSession& operator=(const JobLiveSession&) = delete;

    // Attaches to the ranks that appeared since the last call and updates every rank's
    // state; returns how many ranks were attached now. A rank whose connect fails is kept
    // as Failed with the reason. Call it periodically (the app: with its view updates).
    size_t poll();

    size_t size() const { return m_ranks.size(); }
    // In rank order.
    std::vector<RankLiveStatus> status() const;
    const LiveClient& client(size_t index) const { return *m_ranks[index]->client; }
    int rank(size_t index) const { return m_ranks[index]->rank; }
    // From the ranks' hellos (or their info files); -1 while none said.
    int worldSize() const { return m_worldSize; }
    const std::string& job() const { return m_options.job; }
    // Every rank attached so far has finished (Ended, Dead, Failed, Detached) as of the last
    // poll(); false with none.
    bool allFinished() const;
    // Every rank of the world attached (worldSize() known) and finished.
    bool complete() const;
    void detach();

private:
    struct Rank {
        int rank = -1;
        int pid = 0;
        std::string socketPath;
        std::unique_ptr<LiveClient> client;
        std::string connectError;
        uint64_t lastEvents = 0;
        int64_t lastEventChangeMs = 0;
        RankLiveState state = RankLiveState::Streaming;
        std::string detail;
    };

    Options m_options;
    std::vector<std::unique_ptr<Rank>> m_ranks;
    int m_worldSize = -1;
};

} // namespace memscope
