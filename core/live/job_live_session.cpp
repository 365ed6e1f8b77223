#include "live/job_live_session.h"

#include <algorithm>
#include <chrono>

namespace memscope {

namespace {

int64_t nowMs()
{
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string seconds(int64_t ms) { return std::to_string(ms / 1000) + "." + std::to_string(ms % 1000 / 100) + " s"; }

} // namespace

std::string_view rankLiveStateName(RankLiveState s)
{
    switch (s) {
    case RankLiveState::Streaming: return "streaming";
    case RankLiveState::Lagging: return "lagging";
    case RankLiveState::Ended: return "ended";
    case RankLiveState::Dead: return "dead";
    case RankLiveState::Failed: return "failed";
    case RankLiveState::Detached: return "detached";
    }
    return "?";
}

JobLiveSession::JobLiveSession(Options options) : m_options(std::move(options)) { }

JobLiveSession::~JobLiveSession() { detach(); }

size_t JobLiveSession::poll()
{
    size_t added = 0;
    std::vector<AgentInfo> agents;
    try {
        agents = listJobAgents(m_options.job, m_options.directory);
    } catch (const std::exception&) {
        // An untrustworthy directory: nothing new is attached; the ranks attached go on.
    }
    for (const AgentInfo& a : agents) {
        if (a.worldSize > 0)
            m_worldSize = a.worldSize;
        const bool known = std::any_of(m_ranks.begin(), m_ranks.end(), [&](const auto& r) { return r->rank == a.rank; });
        if (known || a.rank < 0)
            continue;
        auto r = std::make_unique<Rank>();
        r->rank = a.rank;
        r->pid = a.pid;
        r->socketPath = a.socketPath;
        LiveClient::Options o;
        if (!m_options.recoveryDir.empty())
            o.recoveryPath = m_options.recoveryDir + "/rank" + std::to_string(a.rank) + ".pickle.mscp";
        o.connectTimeoutMs = 2000;
        r->client = std::make_unique<LiveClient>(o);
        try {
            r->client->connect(LiveEndpoint{a.socketPath, {}, 0, {}});
        } catch (const std::exception& e) {
            r->connectError = e.what();
        }
        r->lastEventChangeMs = nowMs();
        m_ranks.push_back(std::move(r));
        ++added;
    }
    std::sort(m_ranks.begin(), m_ranks.end(), [](const auto& x, const auto& y) { return x->rank < y->rank; });

    // States: a rank lags when it is quiet, or gets no event, for lagMs while another's events grew.
    const int64_t now = nowMs();
    int64_t newestGrowth = -1;
    for (auto& r : m_ranks) {
        const uint64_t events = r->client->stats().events;
        if (events != r->lastEvents) {
            r->lastEvents = events;
            r->lastEventChangeMs = now;
        }
        if (r->client->state() == LiveState::Streaming)
            newestGrowth = std::max(newestGrowth, r->lastEventChangeMs);
        if (const int ws = r->client->hello().worldSize; ws > 0)
            m_worldSize = ws;
    }
    for (auto& r : m_ranks) {
        if (!r->connectError.empty()) {
            r->state = RankLiveState::Failed;
            r->detail = r->connectError;
            continue;
        }
        const LiveState s = r->client->state();
        r->detail = r->client->error();
        switch (s) {
        case LiveState::Idle:
        case LiveState::Streaming: {
            const int64_t quiet = r->client->quietMs();
            const int64_t noEvent = now - r->lastEventChangeMs;
            const bool othersGrew = newestGrowth >= 0 && now - newestGrowth < m_options.lagMs;
            if (quiet >= m_options.lagMs) {
                r->state = RankLiveState::Lagging;
                r->detail = "nothing from its agent for " + seconds(quiet);
            } else if (noEvent >= m_options.lagMs && othersGrew) {
                r->state = RankLiveState::Lagging;
                r->detail = "no event for " + seconds(noEvent) + " while other ranks get some";
            } else {
                r->state = RankLiveState::Streaming;
                r->detail.clear();
            }
            break;
        }
        case LiveState::Ended: r->state = RankLiveState::Ended; break;
        case LiveState::Lost: r->state = RankLiveState::Dead; break;
        case LiveState::Failed: r->state = RankLiveState::Failed; break;
        case LiveState::Detached: r->state = RankLiveState::Detached; break;
        }
    }
    return added;
}

std::vector<RankLiveStatus> JobLiveSession::status() const
{
    std::vector<RankLiveStatus> out;
    const int64_t now = nowMs();
    for (const auto& r : m_ranks) {
        RankLiveStatus s;
        s.rank = r->rank;
        s.pid = r->pid;
        s.socketPath = r->socketPath;
        s.state = r->state;
        s.detail = r->detail;
        s.stats = r->client->stats();
        s.quietMs = std::max<int64_t>(0, r->client->quietMs());
        s.noEventMs = now - r->lastEventChangeMs;
        out.push_back(std::move(s));
    }
    return out;
}

bool JobLiveSession::allFinished() const
{
    if (m_ranks.empty())
        return false;
    // By the states poll() worked out, so that status() agrees once this is true.
    return std::all_of(m_ranks.begin(), m_ranks.end(),
                       [](const auto& r) { return r->state != RankLiveState::Streaming && r->state != RankLiveState::Lagging; });
}

bool JobLiveSession::complete() const
{
    return m_worldSize > 0 && m_ranks.size() >= static_cast<size_t>(m_worldSize) && allFinished();
}

void JobLiveSession::detach()
{
    for (auto& r : m_ranks)
        r->client->detach();
}

} // namespace memscope
