#include "record_command.h"
#include "common/format_number.h"

#include "command_line.h"

#include "io/pickle_writer.h"
#include "live/agent_directory.h"
#include "live/agent_locator.h"
#include "live/job_live_session.h"
#include "live/live_client.h"
#include "analysis/analysis.h"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <optional>
#include <spawn.h>
#include <stdexcept>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace memscope {

namespace {

volatile std::sig_atomic_t g_interrupts = 0;

void onInterrupt(int) { g_interrupts = g_interrupts + 1; }

struct RecordOptions {
    std::string output;
    std::string attach;
    std::string token;
    std::string recover;
    double duration = 0;
    AgentStacks stacks = AgentStacks::Full;
    std::vector<std::string> command;
    bool allRanks = false;
    std::string attachJob;
    double lag = 5;
};

[[noreturn]] void usage(const std::string& why) { throw std::invalid_argument(why + "\n" + kRecordUsage); }

RecordOptions parse(const std::vector<std::string>& args)
{
    RecordOptions o;
    try {
        const CommandLine cl(
            args,
            {.command = "record",
             .flags = {"--all-ranks", "--light", "--markers"},
             .options =
                 {{"--output", "-o"}, {"--attach"}, {"--token"}, {"--recover"}, {"--duration"}, {"--attach-job"}, {"--lag"}},
             .maxOperands = 0,
             .passthrough = true});
        o.output = cl.value("--output").value_or("");
        o.attach = cl.value("--attach").value_or("");
        o.token = cl.value("--token").value_or("");
        o.recover = cl.value("--recover").value_or("");
        o.duration = cl.positive("--duration").value_or(0);
        if (cl.has("--light") && cl.has("--markers"))
            usage("give one of --light and --markers");
        o.stacks = cl.has("--markers") ? AgentStacks::Markers : cl.has("--light") ? AgentStacks::Light : AgentStacks::Full;
        o.command = cl.passthrough();
        o.allRanks = cl.has("--all-ranks");
        o.attachJob = cl.value("--attach-job").value_or("");
        o.lag = cl.positive("--lag").value_or(5);
    } catch (const UsageError& e) {
        usage(e.what());
    }
    if (o.output.empty())
        usage(o.allRanks || !o.attachJob.empty() ? "-o DIR is required" : "-o OUT.pickle is required");
    if (!o.attachJob.empty()) {
        if (!o.command.empty() || !o.attach.empty() || !o.recover.empty())
            usage("--attach-job JOB takes no -- COMMAND, --attach or --recover");
        o.allRanks = true;
        return o;
    }
    if (o.allRanks && o.command.empty())
        usage("--all-ranks records a launched job: -- torchrun ARGS... (or --attach-job JOB for a running one)");
    const int modes = !o.attach.empty() + !o.recover.empty() + !o.command.empty();
    if (modes != 1)
        usage("give exactly one of: -- COMMAND, --attach PID|SOCKET|HOST:PORT, --recover FILE");
    if (!o.token.empty() && o.attach.empty())
        usage("--token goes with --attach HOST:PORT");
    if (o.stacks != AgentStacks::Full && o.command.empty())
        usage(std::string(o.stacks == AgentStacks::Light ? "--light" : "--markers") +
              " goes with -- COMMAND (a running agent keeps the settings it started with)");
    return o;
}

std::string prepareSocketPath()
{
    const std::string dir = agentDirectory();
    if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
        throw std::runtime_error(dir + ": cannot create: " + std::strerror(errno));
    if (std::string why = checkPrivateDirectory(dir); !why.empty())
        throw std::runtime_error("refusing the agent directory " + why);
    return dir + "/record-" + std::to_string(::getpid()) + ".sock";
}

// socketPath: the one agent's socket; or, with `job`, every rank's agent names its own
// (MEMSCOPE_AGENT=ranks: torchrun's own process starts none).
pid_t launch(const std::vector<std::string>& command, const std::string& socketPath, AgentStacks stacks,
             const std::string& job = {})
{
    std::vector<std::string> env = agentEnvironment(currentEnvironment(),
                                                    {.socketPath = socketPath, .job = job, .stacks = stacks});
    std::vector<char*> envp, argv;
    for (auto& s : env)
        envp.push_back(s.data());
    envp.push_back(nullptr);
    std::vector<std::string> argStore = command;
    for (auto& s : argStore)
        argv.push_back(s.data());
    argv.push_back(nullptr);
    pid_t pid = 0;
    if (int rc = ::posix_spawnp(&pid, argv[0], nullptr, nullptr, argv.data(), envp.data()); rc != 0)
        throw std::runtime_error(command[0] + ": cannot start: " + std::strerror(rc));
    return pid;
}

std::string mib(int64_t bytes) { return formatFixed(static_cast<double>(bytes) / (1024.0 * 1024.0), 1) + " MiB"; }

void report(const Snapshot& s, const LiveStats& stats, const std::string& output, const std::string& who = {})
{
    size_t events = 0;
    for (const DeviceTrace& d : s.devices)
        events += d.events.count();
    std::cerr << "memscope record: " << who << "wrote " << output << " (" << events << " events";
    if (stats.agentDropped)
        std::cerr << ", " << stats.agentDropped << " DROPPED by the agent";
    std::cerr << ")\n";
    try {
        AnalysisOptions options;
        options.until = AnalysisStage::Replayed;
        const auto analysis = analyze(AnalysisSource::recording(copySnapshot(s), output), options);
        for (const DeviceReplay& d : analysis->replay->devices) {
            if (!d.eventCount)
                continue;
            std::cerr << "  device " << d.device << ": peak requested " << mib(d.peakRequested.bytes) << ", reserved "
                      << mib(d.peakReserved.bytes);
            if (d.eventCount && stats.torchRequestedPeak >= 0 && stats.torchDevice == d.device)
                std::cerr << " (torch's requested_bytes.all.peak: " << mib(stats.torchRequestedPeak)
                          << (stats.torchRequestedPeak == d.peakRequested.bytes ? ", equal" : ", differs") << ")";
            if (d.eventCount && stats.torchReservedPeak >= 0 && stats.torchDevice == d.device)
                std::cerr << " (torch's reserved_bytes.all.peak: " << mib(stats.torchReservedPeak)
                          << (stats.torchReservedPeak == d.peakReserved.bytes ? ", equal" : ", differs") << ")";
            std::cerr << "\n";
        }
    } catch (const std::exception& e) {
        std::cerr << "  (no summary: " << e.what() << ")\n";
    }
}

// --all-ranks / --attach-job: one recording per rank of a job, into the folder o.output.
int recordAllRanks(const RecordOptions& o)
{
    std::error_code ec;
    std::filesystem::create_directories(o.output, ec);
    if (ec || !std::filesystem::is_directory(o.output))
        throw std::runtime_error(o.output + ": cannot create the output folder" + (ec ? ": " + ec.message() : ""));
    const std::string job = o.attachJob.empty() ? "record-" + std::to_string(::getpid()) : o.attachJob;
    JobLiveSession::Options so;
    so.job = job;
    so.recoveryDir = o.output;
    so.lagMs = static_cast<int64_t>(o.lag * 1000);
    JobLiveSession session(so);

    pid_t child = -1;
    int childStatus = 0;
    bool childDone = false;
    const auto start = std::chrono::steady_clock::now();
    auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
    if (!o.command.empty()) {
        if (::mkdir(agentDirectory().c_str(), 0700) != 0 && errno != EEXIST)
            throw std::runtime_error(agentDirectory() + ": cannot create: " + std::strerror(errno));
        child = launch(o.command, {}, o.stacks, job);
    }
    std::cerr << "memscope record: recording every rank of job " << job;
    if (o.duration > 0)
        std::cerr << " for " << o.duration << " s";
    std::cerr << " into " << o.output << "; Ctrl-C ends it\n";

    std::vector<RankLiveState> shown;
    int interruptsSeen = 0;
    double childEndedAt = -1;
    for (;;) {
        session.poll();
        const auto status = session.status();
        // Say what changes: a rank attached, lagging, dead, ended.
        for (size_t i = 0; i < status.size(); ++i) {
            if (i < shown.size() && shown[i] == status[i].state)
                continue;
            std::cerr << "memscope record: rank " << status[i].rank << " (pid " << status[i].pid
                      << "): " << rankLiveStateName(status[i].state) << (status[i].detail.empty() ? "" : ": " + status[i].detail)
                      << "\n";
        }
        shown.clear();
        for (const auto& s : status)
            shown.push_back(s.state);
        if (child > 0 && !childDone && ::waitpid(child, &childStatus, WNOHANG) == child) {
            childDone = true;
            childEndedAt = elapsed();
        }
        if (child <= 0 && session.size() == 0 && elapsed() > 30) {
            std::cerr << "memscope record: no rank of job " << job << " appeared in " << agentDirectory()
                      << " (memscope-agent --list shows the running agents and their jobs)\n";
            return 1;
        }
        if (session.complete() || (child <= 0 && session.allFinished()))
            break;
        if (childDone && (session.allFinished() || session.size() == 0 || elapsed() - childEndedAt > 10))
            break;
        if (o.duration > 0 && elapsed() >= o.duration)
            break;
        if (g_interrupts > interruptsSeen) {
            interruptsSeen = g_interrupts;
            if (child <= 0 || childDone || interruptsSeen > 1)
                break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    session.detach();
    session.poll();
    if (child > 0 && !childDone && (o.duration > 0 || g_interrupts))
        std::cerr << "memscope record: " << o.command[0] << " (pid " << child << ") keeps running\n";

    int written = 0;
    const auto status = session.status();
    for (size_t i = 0; i < session.size(); ++i) {
        const RankLiveStatus& st = status[i];
        const LiveClient& client = session.client(i);
        const std::string who = "rank " + std::to_string(st.rank) + ": ";
        if (!client.stats().messages) {
            std::cerr << "memscope record: " << who << "nothing received" << (st.detail.empty() ? "" : ": " + st.detail) << "\n";
            continue;
        }
        if (st.state == RankLiveState::Dead || st.state == RankLiveState::Failed)
            std::cerr << "memscope record: " << who << rankLiveStateName(st.state) << ": " << st.detail
                      << " (its recording so far is kept)\n";
        const std::string out = o.output + "/rank" + std::to_string(st.rank) + ".pickle";
        auto s = client.snapshot();
        writePickleSnapshotFile(*s, out);
        std::remove((out + ".mscp").c_str());
        report(*s, client.stats(), out, who);
        ++written;
    }
    std::cerr << "memscope record: " << written << " of " << (session.worldSize() > 0 ? session.worldSize() : int(session.size()))
              << " ranks written to " << o.output << "\n";
    if (childDone && WIFEXITED(childStatus) && WEXITSTATUS(childStatus) != 0)
        return WEXITSTATUS(childStatus);
    return written ? 0 : 1;
}

} // namespace

int runRecord(const std::vector<std::string>& args)
{
    const RecordOptions o = parse(args);
    if (!o.recover.empty()) {
        std::string note;
        auto s = readLiveStreamFile(o.recover, &note);
        writePickleSnapshotFile(*s, o.output);
        if (!note.empty())
            std::cerr << "memscope record: " << o.recover << ": " << note << "\n";
        report(*s, {}, o.output);
        return 0;
    }

    struct sigaction sa { };
    sa.sa_handler = onInterrupt;
    ::sigemptyset(&sa.sa_mask);
    ::sigaction(SIGINT, &sa, nullptr);
    ::sigaction(SIGTERM, &sa, nullptr);
    if (o.allRanks)
        return recordAllRanks(o);

    LiveClient::Options options;
    options.recoveryPath = o.output + ".mscp";
    options.connectTimeoutMs = o.attach.empty() ? 1000 : 10000; // launched: re-check the program between tries
    LiveClient client(options);
    pid_t child = -1;
    int childStatus = 0;
    bool childDone = false;
    const auto start = std::chrono::steady_clock::now();
    auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
    auto reapChild = [&] {
        if (child > 0 && !childDone && ::waitpid(child, &childStatus, WNOHANG) == child)
            childDone = true;
    };

    if (!o.attach.empty()) {
        const std::optional<LiveEndpoint> tcp = parseTcpTarget(o.attach, o.token);
        client.connect(tcp ? *tcp : resolveAttachTarget(o.attach));
    } else {
        const std::string socketPath = prepareSocketPath();
        if (std::filesystem::path(o.command[0]).filename() == "torchrun")
            std::cerr << "memscope record: one socket for one process: this records a single rank; "
                         "--all-ranks records every rank of the job into a folder\n";
        child = launch(o.command, socketPath, o.stacks);
        // The agent starts with the program (importing torch, maybe building its
        // extension): wait for its socket as long as the program runs.
        for (;;) {
            try {
                client.connect(LiveEndpoint{socketPath, {}, 0, {}});
                break;
            } catch (const std::runtime_error& e) {
                reapChild();
                if (childDone || g_interrupts) {
                    std::cerr << "memscope record: " << o.command[0] << " ended before its agent started: " << e.what() << "\n";
                    break;
                }
            }
        }
    }
    std::cerr << "memscope record: recording";
    if (o.duration > 0)
        std::cerr << " for " << o.duration << " s";
    std::cerr << "; Ctrl-C ends it and writes " << o.output << "\n";

    int interruptsSeen = 0;
    double childEndedAt = -1;
    while (!client.finished()) {
        client.waitFinished(100);
        reapChild();
        if (childDone && childEndedAt < 0)
            childEndedAt = elapsed();
        if (o.duration > 0 && elapsed() >= o.duration)
            break;
        if (g_interrupts > interruptsSeen) {
            interruptsSeen = g_interrupts;
            // Launched: the program got the same Ctrl-C; let its agent send the end.
            if (child <= 0 || childDone || interruptsSeen > 1)
                break;
        }
        if (childEndedAt >= 0 && elapsed() - childEndedAt > 10)
            break;
    }
    client.detach();
    if (child > 0 && !childDone) {
        if (o.duration > 0 || g_interrupts) {
            // --duration ends the recording, not the program: it runs on without us.
            std::cerr << "memscope record: " << o.command[0] << " (pid " << child << ") keeps running\n";
        }
    }

    auto s = client.snapshot();
    const LiveStats stats = client.stats();
    if (client.state() == LiveState::Failed && !stats.messages) {
        // Refused before anything was streamed (a wrong token): there is nothing to write.
        std::remove(options.recoveryPath.c_str());
        std::cerr << "memscope record: " << (o.attach.empty() ? o.command[0] : o.attach) << ": " << client.error();
        if (!o.token.empty())
            std::cerr << " (check --token: the agent prints it as 'memscope-agent: tcp ADDRESS token T')";
        std::cerr << "\n";
        return 1;
    }
    if (client.state() == LiveState::Failed || client.state() == LiveState::Lost)
        std::cerr << "memscope record: " << liveStateName(client.state()) << ": " << client.error() << "\n";
    writePickleSnapshotFile(*s, o.output);
    std::remove(options.recoveryPath.c_str());
    report(*s, stats, o.output);
    if (childDone && WIFEXITED(childStatus) && WEXITSTATUS(childStatus) != 0)
        return WEXITSTATUS(childStatus);
    return 0;
}

} // namespace memscope
