// libFuzzer harness for everything a user's file reaches: format detection, gzip,
// JSON, the pickle VM, the snapshot builder, the replay of every device and the
// summary writers. A LoadError is the expected way to say no; any other exception,
// crash, sanitizer report, leak, or a run past the time or memory limits is a finding.
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
    std::shared_ptr<const Snapshot> snapshot;
    try {
        snapshot = readSnapshotBytes(std::span<const uint8_t>(data, size), "fuzz");
    } catch (const LoadError& e) {
        const std::string what = e.what();
        if (what.find('\n') != std::string::npos || what.rfind("fuzz", 0) != 0)
            std::abort();
        return 0;
    }
    auto replay = replaySnapshot(snapshot);
    for (const DeviceReplay& d : replay->devices) {
        (void)d.liveAfter(-1);
        (void)d.liveAfter(d.eventCount / 2);
        (void)d.liveAfter(d.peakRequested.event.value);
        (void)d.liveAfter(d.eventCount - 1);
    }
    const std::string text = summaryText(*replay, std::nullopt);
    const std::string json = summaryJson(*replay, std::nullopt);
    if (text.empty() || json.empty())
        std::abort();
    return 0;
}
