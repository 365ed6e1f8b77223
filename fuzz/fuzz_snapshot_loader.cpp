// libFuzzer harness for everything a user's file reaches: format detection, gzip,
// JSON, the pickle VM, the snapshot builder, the replay of every device and the
// summary writers. A LoadError is the expected way to say no; any other exception,
// crash, sanitizer report, leak, or a run past the time or memory limits is a finding.
// Each input is also read by the parallel parse (3 threads, 4 KiB chunks, so that small
// inputs split): a different error, or a different summary, is a finding too.
#include "common/load_error.h"
#include "io/summary_writer.h"
#include "replay/replay.h"
#include "snapshot/snapshot_reader.h"

#include <cstdint>
#include <cstdlib>
#include <span>
#include <string>

using namespace memscope;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    auto read = [&](unsigned threads, std::string& error) -> std::shared_ptr<const Snapshot> {
        LoadOptions options;
        options.threads = threads;
        options.parallelChunkBytes = threads > 1 ? 4096 : 0;
        try {
            return readSnapshotBytes(std::span<const uint8_t>(data, size), "fuzz", options);
        } catch (const LoadError& e) {
            error = e.what();
            if (error.find('\n') != std::string::npos || error.rfind("fuzz", 0) != 0)
                std::abort();
            return nullptr;
        }
    };
    std::string error, parallelError;
    const std::shared_ptr<const Snapshot> snapshot = read(1, error);
    const std::shared_ptr<const Snapshot> parallel = read(3, parallelError);
    if (error != parallelError || !snapshot != !parallel)
        std::abort();
    if (!snapshot)
        return 0;
    if (summaryJson(*replaySnapshot(parallel), std::nullopt) != summaryJson(*replaySnapshot(snapshot), std::nullopt))
        std::abort();
    auto replay = replaySnapshot(snapshot);
    for (const DeviceReplay& d : replay->devices) {
        (void)d.activeAfter(-1);
        (void)d.activeAfter(d.eventCount / 2);
        (void)d.activeAfter(d.peakRequested.event.value);
        (void)d.activeAfter(d.eventCount - 1);
    }
    const std::string text = summaryText(*replay, std::nullopt);
    const std::string json = summaryJson(*replay, std::nullopt);
    if (text.empty() || json.empty())
        std::abort();
    return 0;
}
