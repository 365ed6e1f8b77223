#pragma once

#include "live/live_client.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace memscope {

// One running agent, as its agent-PID.json beside its socket describes it.
struct AgentInfo {
    int pid = 0;
    std::string socketPath;
    std::string mode;
    std::string commandLine;
    std::string torchVersion;
    std::string pythonVersion;
    std::vector<std::string> devices;
    std::string tcp; // "host:port" when the agent also listens on TCP
    std::string token;
    std::string infoPath;
    // A rank of a torchrun job (its socket is job-<job>-rank-<rank>.sock); empty / -1 otherwise.
    std::string job;
    int rank = -1;
    int worldSize = -1;
};

// The private per-user directory the agents put their sockets in (the same rule as
// agent/memscope_agent/transport.py: $XDG_RUNTIME_DIR/memscope, else /tmp/memscope-UID).
std::string agentDirectory();

// Empty when `path` is a directory owned by this user that no one else can enter;
// otherwise why it must not be trusted.
std::string checkPrivateDirectory(const std::string& path);

// Agents whose process is alive. Throws std::runtime_error when the directory exists
// but is not private.
std::vector<AgentInfo> listAgents(const std::string& directory = agentDirectory());

// The agents of the ranks of job `job` (AgentInfo::job), sorted by rank.
std::vector<AgentInfo> listJobAgents(const std::string& job, const std::string& directory = agentDirectory());

// The jobs whose ranks run agents here, each with its ranks sorted by rank, jobs by name.
std::vector<std::pair<std::string, std::vector<AgentInfo>>> listJobs(const std::string& directory = agentDirectory());

// "1234" -> the agent of process 1234; anything else is taken as a socket path.
// Throws std::runtime_error naming what was looked for.
LiveEndpoint resolveAttachTarget(const std::string& target, const std::string& directory = agentDirectory());

// "HOST:PORT", "[::1]:PORT": an agent's TCP listener (on this machine, or another one's
// brought here by `ssh -L`), with the token it printed. nullopt when `target` is not of
// that form (a pid or a socket path: resolveAttachTarget); throws std::invalid_argument
// for a bad port or a missing token.
std::optional<LiveEndpoint> parseTcpTarget(const std::string& target, const std::string& token);

} // namespace memscope
