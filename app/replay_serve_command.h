#pragma once

#include <string>
#include <vector>

namespace memscope {

inline constexpr char kReplayServeUsage[] =
    "usage: memscope replay-serve FILE [--socket PATH] [--rate EVENTS_PER_S] [--info PATH]\n"
    "  serves FILE's events over the live protocol, as `memscope-agent --replay FILE` does, at a fixed\n"
    "  rate (0, the default: as fast as the client reads); the socket defaults to the agents' private\n"
    "  directory (agent-PID.sock, with agent-PID.json beside it for File > Attach)";

// memscope replay-serve: the native replay sender (core/live/replay_server.h).
int runReplayServe(const std::vector<std::string>& args);

} // namespace memscope
