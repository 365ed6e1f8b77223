// memscope_live_stream: the core live path, headless, under a paced stream (issue 26).
//
//   memscope_live_stream --memscope build/dev/app/memscope --file /tmp/gen_10m.pickle --rate 100000
//       [--detail N] [--stats OUT.jsonl] [--recovery OUT.mscp] [--no-full-analysis]
//
// Starts `memscope replay-serve FILE --rate R` as its own process (so its memory is not
// counted here), attaches a LiveClient (writing the on-disk stream to --recovery) and runs
// an IncrementalAnalysis on it as the live tab does (ingest + publish every 50 ms on one
// thread, full analyses on another unless --no-full-analysis or --detail N > 0). After
// each published view it appends one JSON line (MEMSCOPE_LIVE_STATS's keys: t_s, events,
// update_ms = the ingest and publish of the core, rss_bytes, dropped, lag_events), and at
// the end prints: updates, updates a second, update_ms p50/p99/max, the longest gap between
// updates while events arrived, the largest lag, events shown against the source's, peak
// and final RSS, the full analyses' count and cost.
#include "analysis/incremental_analysis.h"
#include "live/live_client.h"
#include "live/live_decoder.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <spawn.h>
#include <string>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

extern char** environ;

using namespace memscope;

namespace {

int64_t rssBytes()
{
    std::FILE* f = std::fopen("/proc/self/statm", "r");
    long pages = 0, resident = 0;
    if (f) {
        if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2)
            resident = 0;
        std::fclose(f);
    }
    return static_cast<int64_t>(resident) * ::sysconf(_SC_PAGESIZE);
}

const char* arg(int argc, char** argv, const char* name, const char* fallback)
{
    for (int i = 1; i + 1 < argc; ++i)
        if (std::strcmp(argv[i], name) == 0)
            return argv[i + 1];
    return fallback;
}

bool flag(int argc, char** argv, const char* name)
{
    for (int i = 1; i < argc; ++i)
        if (std::strcmp(argv[i], name) == 0)
            return true;
    return false;
}

double pct(std::vector<double> v, double p)
{
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))];
}

} // namespace

// --verify-stream FILE.mscp: reads an on-disk live stream through the bounded incremental path
// (rows released after each piece: memory stays flat for any length) and prints each device's
// events and peaks, to compare with the source file's (memscope summary) without loading it whole.
int verifyStream(const std::string& path)
{
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) {
        std::fprintf(stderr, "%s: cannot open\n", path.c_str());
        return 1;
    }
    LiveRecording rec;
    LiveDecoder dec(rec);
    IncrementalAnalysis::Options o;
    o.detailEvents = 1 << 20;
    IncrementalAnalysis inc(o);
    std::vector<uint8_t> buffer(8 << 20);
    std::string error;
    const auto t0 = std::chrono::steady_clock::now();
    for (;;) {
        const size_t n = std::fread(buffer.data(), 1, buffer.size(), f);
        if (n == 0)
            break;
        try {
            dec.feed({buffer.data(), n});
        } catch (const std::exception& e) {
            error = e.what();
            break;
        }
        inc.ingest(rec);
    }
    std::fclose(f);
    inc.ingest(rec);
    const auto v = inc.publish();
    std::printf("%s: %s%s, %.1f s, rss %.1f MiB, pending %zu bytes\n", path.c_str(), rec.stats().ended ? "complete" : "no END",
                error.empty() ? "" : (", " + error).c_str(),
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), rssBytes() / 1048576.0,
                dec.pendingBytes());
    for (const DeviceReplayView& d : v->devices)
        std::printf("device %d: %lld events, peak requested %lld at event %lld, peak reserved %lld\n", d.device,
                    static_cast<long long>(d.eventCount), static_cast<long long>(d.peakRequested.bytes),
                    static_cast<long long>(d.peakRequested.event.value), static_cast<long long>(d.peakReserved.bytes));
    return 0;
}

int main(int argc, char** argv)
{
    if (const char* verify = arg(argc, argv, "--verify-stream", nullptr))
        return verifyStream(verify);
    const std::string memscope = arg(argc, argv, "--memscope", "memscope");
    const std::string file = arg(argc, argv, "--file", "");
    const std::string rate = arg(argc, argv, "--rate", "100000");
    const int64_t detail = std::atoll(arg(argc, argv, "--detail", "0"));
    const std::string statsPath = arg(argc, argv, "--stats", "");
    const std::string recovery = arg(argc, argv, "--recovery", "");
    const bool noFull = flag(argc, argv, "--no-full-analysis");
    if (file.empty()) {
        std::fprintf(stderr, "usage: memscope_live_stream --memscope PATH --file FILE [--rate N] [--detail N] [--stats OUT] "
                             "[--recovery OUT.mscp] [--no-full-analysis]\n");
        return 2;
    }
    const std::string dir = "/tmp/memscope-live-bench-" + std::to_string(::getpid());
    ::mkdir(dir.c_str(), 0700);
    const std::string socket = dir + "/a.sock";
    std::vector<std::string> spawnArgs = {memscope, "replay-serve", file, "--socket", socket, "--rate", rate};
    std::vector<char*> cargv;
    for (std::string& s : spawnArgs)
        cargv.push_back(s.data());
    cargv.push_back(nullptr);
    pid_t server = 0;
    if (posix_spawn(&server, memscope.c_str(), nullptr, nullptr, cargv.data(), environ) != 0) {
        std::fprintf(stderr, "cannot start %s\n", memscope.c_str());
        return 1;
    }
    LiveClient::Options co;
    co.recoveryPath = recovery;
    co.connectTimeoutMs = 600000; // the server loads the file first
    LiveClient client(co);
    const auto tConnect0 = std::chrono::steady_clock::now();
    client.connect(LiveEndpoint{socket, {}, 0, {}});
    const double connectS = std::chrono::duration<double>(std::chrono::steady_clock::now() - tConnect0).count();

    IncrementalAnalysis::Options o;
    o.detailEvents = detail;
    if (noFull)
        o.fullAnalysisShare = 0.0001, o.minFullAnalysisIntervalMs = 1 << 30;
    IncrementalAnalysis inc(o);
    std::FILE* stats = statsPath.empty() ? nullptr : std::fopen(statsPath.c_str(), "w");
    const auto t0 = std::chrono::steady_clock::now();
    std::mutex mutex;
    std::vector<double> updateMs, times;
    std::vector<int64_t> eventsAt;
    int64_t maxLag = 0, maxRss = 0, firstEventsAt = -1;
    int fullAnalyses = 0;
    double fullMsTotal = 0, fullMsMax = 0;
    int64_t lastAnalysisEvents = -1;
    inc.start(client, [&] {
        const auto v = inc.view();
        const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        const int64_t rss = rssBytes();
        std::lock_guard<std::mutex> lock(mutex);
        updateMs.push_back(v->ingestMs);
        times.push_back(t);
        eventsAt.push_back(v->events);
        maxLag = std::max(maxLag, v->received - v->events);
        maxRss = std::max(maxRss, rss);
        if (firstEventsAt < 0 && v->events > 0)
            firstEventsAt = static_cast<int64_t>(times.size()) - 1;
        if (v->analysis && v->analysisEvents != lastAnalysisEvents) {
            lastAnalysisEvents = v->analysisEvents;
            ++fullAnalyses;
            fullMsTotal += v->analysisMs;
            fullMsMax = std::max(fullMsMax, v->analysisMs);
        }
        if (stats)
            std::fprintf(stats,
                         "{\"t_s\": %.3f, \"events\": %lld, \"update_ms\": %.3f, \"rss_bytes\": %lld, \"dropped\": %llu, "
                         "\"lag_events\": %lld, \"analysis_events\": %lld}\n",
                         t, static_cast<long long>(v->events), v->ingestMs, static_cast<long long>(rss),
                         static_cast<unsigned long long>(v->stats.agentDropped), static_cast<long long>(v->received - v->events),
                         static_cast<long long>(v->analysisEvents));
    });
    while (!client.waitFinished(200)) { }
    // Let the last rows and, unless bounded, the last full analysis land.
    for (int i = 0; i < 600; ++i) {
        const auto v = inc.view();
        if (v->events >= v->received && (detail > 0 || noFull || v->analysisEvents >= v->events))
            break;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    inc.stop();
    // The last rows (those after the last update) and the final state.
    client.withRecording([&](LiveRecording& r) { inc.ingest(r); });
    const auto v = inc.publish(&client);
    const int64_t rssEnd = rssBytes();
    if (stats)
        std::fclose(stats);
    int status = 0;
    ::waitpid(server, &status, 0);
    ::unlink(socket.c_str());
    ::rmdir(dir.c_str());

    // Gaps between updates while events arrived (from the first update with events to the last growing one).
    double maxGap = 0;
    size_t lastGrowing = 0;
    for (size_t i = 1; i < eventsAt.size(); ++i)
        if (eventsAt[i] > eventsAt[i - 1])
            lastGrowing = i;
    const size_t from = firstEventsAt < 0 ? 0 : static_cast<size_t>(firstEventsAt);
    for (size_t i = from + 1; i <= lastGrowing; ++i)
        maxGap = std::max(maxGap, (times[i] - times[i - 1]) * 1000);
    const double streamS = lastGrowing > from ? times[lastGrowing] - times[from] : 0;
    const size_t streamUpdates = lastGrowing > from ? lastGrowing - from : 0;
    struct stat st { };
    const int64_t fileBytes = ::stat(file.c_str(), &st) == 0 ? static_cast<int64_t>(st.st_size) : 0;
    int64_t peakRequested = 0, peakReserved = 0;
    for (const DeviceReplayView& d : v->devices) {
        peakRequested = std::max(peakRequested, d.peakRequested.bytes);
        peakReserved = std::max(peakReserved, d.peakReserved.bytes);
    }
    std::printf("file %s (%lld bytes), rate %s, detail %lld%s\n", file.c_str(), static_cast<long long>(fileBytes), rate.c_str(),
                static_cast<long long>(detail), noFull ? ", no full analysis" : "");
    std::printf("connected after %.2f s (the server loading the file)\n", connectS);
    std::printf("events shown %lld of %llu received, dropped %llu, state %s %s\n", static_cast<long long>(v->events),
                static_cast<unsigned long long>(v->stats.events), static_cast<unsigned long long>(v->stats.agentDropped),
                std::string(liveStateName(v->state)).c_str(), v->connectionError.c_str());
    std::printf("stream %.2f s, %zu updates while events arrived: %.1f updates/s; longest gap %.1f ms\n", streamS, streamUpdates,
                streamS > 0 ? streamUpdates / streamS : 0.0, maxGap);
    std::printf("update_ms (core ingest + publish) p50 %.2f p99 %.2f max %.2f over %zu updates\n", pct(updateMs, 0.5),
                pct(updateMs, 0.99), pct(updateMs, 1.0), updateMs.size());
    std::printf("lag_events max %lld\n", static_cast<long long>(maxLag));
    std::printf("rss max %.1f MiB, end %.1f MiB = %.3fx the file; incremental state %.1f MiB\n", maxRss / 1048576.0,
                rssEnd / 1048576.0, fileBytes ? static_cast<double>(rssEnd) / static_cast<double>(fileBytes) : 0.0,
                v->heldBytes / 1048576.0);
    std::printf("full analyses %d, last of %lld events, mean %.0f ms, max %.0f ms; error: %s\n", fullAnalyses,
                static_cast<long long>(v->analysisEvents), fullAnalyses ? fullMsTotal / fullAnalyses : 0.0, fullMsMax,
                v->error.empty() ? "none" : v->error.c_str());
    std::printf("peak requested %lld, reserved %lld\n", static_cast<long long>(peakRequested),
                static_cast<long long>(peakReserved));
    return 0;
}
