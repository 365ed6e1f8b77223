#pragma once

#include "snapshot/snapshot.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace memscope {

/*
 * The native replay sender: serves a loaded recording over the live protocol on a Unix
 * socket, as `memscope-agent --replay FILE` does, at a fixed event rate (0: as fast as the
 * client reads). `memscope replay-serve` runs it; the Python agent's `--replay FILE --rate N`
 * execs that when a memscope binary is found (agent/memscope_agent/__main__.py).
 *
 * Each client that says CLIENT_HELLO gets its own thread and the whole recording from the
 * start: HELLO, every string/frame/stack definition, SETTINGS, then EVENTS paced so that
 * the events sent after t seconds are rate · t (sent every 10 ms; 8,192-event messages when
 * unpaced), ANNOTATIONs by time among them, STATUS twice a second, and at the end SEGMENTS
 * and END ("replay_done"). The socket is 0600 and only this user's processes are served
 * (SO_PEERCRED), as the agent's; beside it an info file (agent-PID.json) lists it for
 * File > Attach. It returns once the first client's stream has ended and every client
 * that joined meanwhile has been served (or `stop` is set).
 */
struct ReplayServeOptions {
    std::string socketPath;
    std::string infoPath; // empty: none
    double rate = 0; // events a second; 0: as fast as possible
    std::string source; // the file's name, for HELLO and END
    std::atomic<bool>* stop = nullptr; // set from a signal handler to end early
    std::function<void(const std::string&)> log;
};

struct ReplayServeResult {
    int clients = 0;
    uint64_t eventsSent = 0; // to the first client
    double seconds = 0; // the first client's stream, HELLO to END
};

// Throws std::runtime_error with a one-line reason when the socket cannot be made.
ReplayServeResult serveReplay(std::shared_ptr<const Snapshot> snapshot, const ReplayServeOptions& options);

} // namespace memscope
