#include "replay_serve_command.h"

#include "command_line.h"
#include "live/agent_directory.h"
#include "live/replay_server.h"
#include "analysis/analysis.h"

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include <unistd.h>

namespace memscope {

namespace {

std::atomic<bool> g_stop{false};

extern "C" void onStopSignal(int) { g_stop.store(true); }

} // namespace

int runReplayServe(const std::vector<std::string>& args)
{
    const CommandLine cl(args, {.command = "replay-serve", .flags = {}, .options = {{"--socket"}, {"--rate"}, {"--info"}}});
    const std::string file = cl.operand();
    if (file.empty())
        throw UsageError("replay-serve takes a recording to serve");
    ReplayServeOptions o;
    o.rate = cl.nonNegative("--rate").value_or(0);
    o.source = file;
    if (auto s = cl.value("--socket")) {
        o.socketPath = *s;
        o.infoPath = cl.value("--info").value_or(std::string());
    } else {
        const std::string dir = agentDirectory();
        std::filesystem::create_directories(dir);
        std::filesystem::permissions(dir, std::filesystem::perms::owner_all, std::filesystem::perm_options::replace);
        if (std::string why = checkPrivateDirectory(dir); !why.empty()) {
            std::cerr << "memscope replay-serve: " << dir << ": " << why << "\n";
            return 1;
        }
        o.socketPath = dir + "/agent-" + std::to_string(::getpid()) + ".sock";
        o.infoPath = cl.value("--info").value_or(dir + "/agent-" + std::to_string(::getpid()) + ".json");
    }
    const auto t0 = std::chrono::steady_clock::now();
    // Through the one pipeline, stopped once the file is read: the sender needs no replay.
    const auto snap = analyze(AnalysisSource::file(file), {.load = {}, .until = AnalysisStage::Loaded})->snapshot;
    uint64_t events = 0;
    for (const DeviceTrace& t : snap->devices)
        events += t.events.count();
    const double loadS = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::signal(SIGTERM, onStopSignal);
    std::signal(SIGINT, onStopSignal);
    o.stop = &g_stop;
    o.log = [&](const std::string& line) {
        std::fprintf(stderr, "%s (%llu events, loaded in %.2f s)\n", line.c_str(), static_cast<unsigned long long>(events),
                     loadS);
    };
    const ReplayServeResult r = serveReplay(snap, o);
    std::fprintf(stderr, "memscope replay-serve: %llu events sent in %.2f s (%.0f events/s), %d client(s)\n",
                 static_cast<unsigned long long>(r.eventsSent), r.seconds, r.seconds > 0 ? r.eventsSent / r.seconds : 0.0,
                 r.clients);
    return 0;
}

} // namespace memscope
