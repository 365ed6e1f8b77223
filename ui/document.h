#pragma once

#include "attribute/attribution.h"
#include "device_model.h"
#include "diagnose/diagnoser.h"
#include "diagnose/training_measurement.h"
#include "io/frame_classifier.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace memscope {

// One opened snapshot: the core's immutable results and what the views precomputed from
// them. Shared read-only between the views of a tab and the exporters.
struct Document {
    std::string path;
    std::shared_ptr<const Attribution> attribution;
    bool attributed = false; // the core gave every allocation a category (false: shown as one)
    std::vector<DeviceModel> devices;
    std::unique_ptr<FrameClassifier> frames;
    std::shared_ptr<const DiagnosisResult> diagnosis; // core/diagnose's findings, every device
    std::vector<TrainingMeasurement> training;        // per device: the estimator's measured inputs

    const Snapshot& snapshot() const { return *attribution->replay->snapshot; }
    const Replay& replay() const { return *attribution->replay; }
};

// Reads, replays, attributes and diagnoses one file, then precomputes the views' data: the whole
// pipeline, used by the GUI's loader thread and by `memscope report`. `progress` gets a
// fraction in [0, 1] and returns false to cancel (LoadCancelled). Throws LoadError.
std::shared_ptr<const Document> analyzeFile(const std::string& path, const std::function<bool(double)>& progress = {});

} // namespace memscope
