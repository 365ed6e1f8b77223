// libFuzzer harness for what runs on a loaded snapshot after the loader: attribution
// (phases, iterations, categories), the point report at the peak, the report and CSV
// writers and the diagnostics. The loader's bounds (snapshot_limits.h) are what these
// rely on; any crash, sanitizer report or uncaught exception here is a finding.
#include "attribute/attributor.h"
#include "common/load_error.h"
#include "diagnose/diagnoser.h"
#include "io/diagnostics_json.h"
#include "io/allocations_csv.h"
#include "snapshot/frame_classifier.h"
#include "io/point_report.h"
#include "io/report_json_writer.h"
#include "replay/replay.h"
#include "snapshot/snapshot_reader.h"

#include <cstdint>
#include <span>
#include <sstream>

using namespace memscope;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    std::shared_ptr<const Snapshot> snapshot;
    try {
        snapshot = readSnapshotBytes(std::span<const uint8_t>(data, size), "fuzz");
    } catch (const LoadError&) {
        return 0;
    }
    auto replay = replaySnapshot(snapshot);
    auto attribution = attribute(replay);
    const FrameClassifier frames(*snapshot);
    for (size_t d = 0; d < replay->devices.size(); ++d) {
        const PointReport peak = buildPointReport(*attribution, d, peakEvent(replay->devices[d]));
        (void)reportJson(*attribution, peak, frames);
        std::ostringstream csv;
        writeAllocationsCsv(csv, *attribution, d);
    }
    auto diagnosis = diagnose(*attribution, frames);
    (void)diagnosticsText(*diagnosis, frames);
    (void)diagnosticsToJson(*diagnosis, *replay, frames);
    return 0;
}
