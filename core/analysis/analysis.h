#pragma once

#include "analysis/device_queries.h"
#include "attribute/attribution.h"
#include "diagnose/diagnoser.h"
#include "diagnose/training_measurement.h"
#include "snapshot/frame_classifier.h"
#include "snapshot/snapshot_reader.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace memscope {

/*
 * The one analysis pipeline. Every caller (the GUI's loader, each headless command, the
 * report, the live window) turns a file or a recording into results here, in four stages:
 *
 *   Loaded      the file read into a Snapshot (columns, interned strings, frames, stacks)
 *   Replayed    each device's allocations paired and its requested/reserved curves built,
 *               and its DeviceQueries (segments, pools, metadata and annotation spans)
 *               unless the analysis stops at this stage
 *   Attributed  phases, iterations and a category per allocation, per-category curves
 *   Diagnosed   the detectors' findings and the estimator's measured inputs
 *
 * After each stage the callbacks get an Analysis holding everything computed so far, so a
 * window can draw the curves before the categories and findings arrive. Each Analysis is
 * immutable and shares its parts with the ones of the stages before it.
 */
enum class AnalysisStage { Loaded, Replayed, Attributed, Diagnosed };
inline constexpr int kAnalysisStageCount = 4;
const char* analysisStageName(AnalysisStage stage); // "loading", "replaying", …
// A stage's fraction as a fraction of the whole analysis, for one progress bar.
double analysisFraction(AnalysisStage stage, double fraction);

// What to analyse: a file on disk, or a snapshot already in memory (a live recording).
struct AnalysisSource {
    std::string path; // a file, when snapshot is null
    std::shared_ptr<const Snapshot> snapshot; // a recording in memory
    std::string name; // shown and used in messages; the path for files

    static AnalysisSource file(std::string path);
    static AnalysisSource recording(std::shared_ptr<const Snapshot> snapshot, std::string name);
};

struct AnalysisOptions {
    LoadOptions load; // its progress is set by analyze()
    AnalysisStage until = AnalysisStage::Diagnosed; // the last stage to run
    // Warm the next stage's pages on an idle core (common/page_warmer.h): faster on a fresh
    // VM, but the warmed mapping adds to the resident peak; the live path turns it off.
    bool warmPages = true;
};

struct AnalysisCallbacks {
    // The running stage and its fraction done in [0, 1]; returning false cancels (LoadCancelled).
    std::function<bool(AnalysisStage stage, double fraction)> progress;
    // After each stage: everything computed so far (stage() says which).
    std::function<void(const std::shared_ptr<const class Analysis>&)> stageReady;
};

class Analysis {
public:
    std::string name;
    AnalysisStage stage = AnalysisStage::Loaded;
    std::shared_ptr<const Snapshot> snapshot;
    std::shared_ptr<const Replay> replay; // from Replayed
    // Per device index, from Replayed (when `until` goes further; always from Attributed).
    std::shared_ptr<const std::vector<DeviceQueries>> queries;
    std::shared_ptr<const Attribution> attribution; // from Attributed
    // The categories are ready: every allocation of every device has one, and every device
    // its per-category curves. The one name for it (the window's documents ask this).
    bool attributed = false;
    std::shared_ptr<const FrameClassifier> frames; // from Attributed
    std::shared_ptr<const DiagnosisResult> diagnosis; // from Diagnosed
    std::vector<TrainingMeasurement> training; // from Diagnosed, per device index

    bool reached(AnalysisStage s) const { return static_cast<int>(stage) >= static_cast<int>(s); }
    size_t deviceCount() const { return snapshot ? snapshot->devices.size() : 0; }
    // queries->at(deviceIndex); throws std::logic_error before they are computed.
    const DeviceQueries& queriesOf(size_t deviceIndex) const;
    // The index of device `ordinal`, or nullopt when the recording has none.
    std::optional<size_t> findDevice(int ordinal) const;
    // The device shown when none is asked for: one that ran out of memory, else the one with
    // the highest requested peak, else the first (0 when there is none).
    size_t focusDevice() const;
    // findDevice(ordinal) when one is asked, else focusDevice(); throws std::invalid_argument
    // naming the file and the devices it has when the ordinal is missing or there is no device.
    size_t deviceIndex(std::optional<int> ordinal) const;
    // Why focusDevice() chose its device: "out of memory", "highest peak" or "first device".
    const char* focusReason() const;
    // The findings with the focus device's first (each device's in their own order), so a
    // report of every device opens on the one that went wrong. Empty before Diagnosed.
    Diagnostics findingsFocusFirst() const;
};

// Runs the stages up to options.until. Throws LoadError (the file, byte offset or key, and
// what was expected) or LoadCancelled.
std::shared_ptr<const Analysis> analyze(const AnalysisSource& source, const AnalysisOptions& options = {},
                                        const AnalysisCallbacks& callbacks = {});

} // namespace memscope
