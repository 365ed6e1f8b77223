#pragma once

#include <string>
#include <vector>

namespace memscope {

/*
 * Where the agent is and how a program is started with it, for the command line (`memscope
 * record -- COMMAND`) and the window (the attach dialog's hints, its injection script, live
 * sessions' recovery files) alike.
 *
 * The agent package is looked for in order: $MEMSCOPE_AGENT_PATH; an installed tree beside
 * the executable (PREFIX/bin/memscope → PREFIX/share/memscope/agent); the source tree this
 * binary was built from (a build tree).
 */

// What a launched program's agent records with each event (docs/LIVE.md).
enum class AgentStacks {
    Full, // Python stacks on every event
    Light, // stacks on allocations only (MEMSCOPE_AGENT_LIGHT=1)
    Markers, // no stacks, phase markers instead (MEMSCOPE_AGENT_MARKERS=1)
};

// The folder holding the memscope_agent package. Throws std::runtime_error naming the places
// looked in when none has it.
std::string agentPackageDirectory();

struct AgentLaunch {
    std::string socketPath; // the one agent's socket (unused with job)
    std::string job; // every rank of a torchrun job starts its own agent (MEMSCOPE_AGENT=ranks)
    AgentStacks stacks = AgentStacks::Full;
};

// The environment of a program started with the agent: `parent` (KEY=VALUE entries) less the
// agent's own variables, with PYTHONPATH led by agentPackageDirectory().
std::vector<std::string> agentEnvironment(const std::vector<std::string>& parent, const AgentLaunch& launch);
// This process's environment as KEY=VALUE entries.
std::vector<std::string> currentEnvironment();

// Where live sessions of the window keep their recovery files: cacheRoot/recovery, where
// cacheRoot is the application's cache folder (the window passes Qt's; empty:
// $XDG_CACHE_HOME/memscope/memscope, else ~/.cache/memscope/memscope).
std::string liveRecoveryDirectory(const std::string& cacheRoot = {});
// A new recovery file's path in `directory` (made if missing): live-PID-YYYYMMDD-HHMMSS-mmm.mscp.
std::string newRecoveryPath(const std::string& directory);

} // namespace memscope
