#pragma once

#include "analysis/analysis.h"
#include "ui/document/device_model.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace memscope {

// One opened snapshot: the core's analysis and what the views precomputed from it. Shared
// read-only between the views of a tab and the exporters. A document made at the Replayed
// stage has curves but no attribution, frames, diagnosis or training yet (attributed false).
struct Document {
    std::string path;
    std::shared_ptr<const Analysis> analysis;
    std::shared_ptr<const Attribution> attribution; // analysis->attribution (null before Attributed)
    bool attributed = false; // the core gave every allocation a category (false: shown as one)
    std::vector<DeviceModel> devices;
    std::shared_ptr<const FrameClassifier> frames;
    std::shared_ptr<const DiagnosisResult> diagnosis; // core/diagnose's findings, every device
    std::vector<TrainingMeasurement> training; // per device: the estimator's measured inputs

    // What has arrived: categories, phases and frames from Attributed, findings from Diagnosed.
    bool categorised() const { return attribution != nullptr; }
    bool diagnosed() const { return diagnosis != nullptr; }

    const Snapshot& snapshot() const { return *analysis->snapshot; }
    const Replay& replay() const { return *analysis->replay; }
};

// The views' data for an analysis that has at least replayed. `previous`, a document of an
// earlier stage of the same analysis, lends the parts that do not change (x positions,
// pyramids, segments).
std::shared_ptr<const Document> makeDocument(std::shared_ptr<const Analysis> analysis, const Document* previous = nullptr);

// analyze() then makeDocument(), for callers that want the finished document at once.
// `progress` gets a fraction of the whole in [0, 1] and returns false to cancel (LoadCancelled).
// Throws LoadError.
std::shared_ptr<const Document> analyzeFile(const std::string& path, const std::function<bool(double)>& progress = {});

} // namespace memscope
