// libFuzzer harness for what runs on a loaded snapshot after the loader (analyze()): attribution
// (phases, iterations, categories), the point report at the peak, the report and CSV
// writers and the diagnostics. The loader's bounds (snapshot_limits.h) are what these
// rely on; any crash, sanitizer report or uncaught exception here is a finding.
#include "analysis/analysis.h"
#include "common/load_error.h"
#include "io/diagnostics_json.h"
#include "io/allocations_csv.h"
#include "query/point_report.h"
#include "io/report_json_writer.h"
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
    const auto analysis = analyze(AnalysisSource::recording(snapshot, "fuzz"));
    const Replay* replay = analysis->replay.get();
    const Attribution* attribution = analysis->attribution.get();
    const FrameClassifier& frames = *analysis->frames;
    for (size_t d = 0; d < replay->devices.size(); ++d) {
        const PointReport peak = buildPointReport(*attribution, d, peakEvent(replay->devices[d]));
        (void)reportJson(*attribution, peak, frames);
        std::ostringstream csv;
        writeAllocationsCsv(csv, *attribution, d);
    }
    const DiagnosisResult* diagnosis = analysis->diagnosis.get();
    (void)diagnosticsText(*diagnosis, frames);
    (void)diagnosticsToJson(*diagnosis, *replay, frames);
    return 0;
}
