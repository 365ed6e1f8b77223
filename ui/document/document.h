#pragma once

#include "analysis/analysis.h"
#include "query/point_report.h"
#include "ui/document/device_model.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace memscope {

// One opened snapshot: the core's Analysis, and the drawing structures the views
// precomputed from it (DeviceModel: x positions, pyramids, bands). Everything else is the
// analysis's own, asked through it. Shared read-only between the views of a tab and the
// exporters. A document of the Replayed stage has curves and no categories (attributed()
// false), nor frames, findings or training measurements yet.
struct Document {
    std::string path;
    std::shared_ptr<const Analysis> analysis;
    std::vector<DeviceModel> devices;
    // Per device, the report of its global peak when made off the GUI thread (a live
    // session's grown documents); empty: the peak panel builds it when shown.
    std::vector<std::shared_ptr<const PointReport>> peakReports;

    // The categories are ready (Analysis::attributed): phases, categories and frames arrived.
    bool attributed() const { return analysis->attributed; }
    bool diagnosed() const { return analysis->diagnosis != nullptr; }

    const std::shared_ptr<const Attribution>& attribution() const { return analysis->attribution; }
    const std::shared_ptr<const FrameClassifier>& frames() const { return analysis->frames; }
    const std::shared_ptr<const DiagnosisResult>& diagnosis() const { return analysis->diagnosis; }
    const std::vector<TrainingMeasurement>& training() const { return analysis->training; }
    const Snapshot& snapshot() const { return *analysis->snapshot; }
    const Replay& replay() const { return *analysis->replay; }
};

// The views' data for an analysis that has at least replayed. `previous`, a document of an
// earlier stage of the same analysis, lends the parts that do not change (x positions,
// pyramids, annotation ranges).
std::shared_ptr<const Document> makeDocument(std::shared_ptr<const Analysis> analysis, const Document* previous = nullptr);

// analyze() then makeDocument(), for callers that want the finished document at once.
// `progress` gets a fraction of the whole in [0, 1] and returns false to cancel (LoadCancelled).
// Throws LoadError.
std::shared_ptr<const Document> analyzeFile(const std::string& path, const std::function<bool(double)>& progress = {});

} // namespace memscope
