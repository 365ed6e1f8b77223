#include "document.h"

#include "attribute/attributor.h"
#include "common/load_error.h"
#include "replay/replay.h"
#include "snapshot/snapshot_reader.h"

namespace memscope {

std::shared_ptr<const Document> analyzeFile(const std::string& path, const std::function<bool(double)>& progress)
{
    auto report = [&](double f) {
        if (progress && !progress(f))
            throw LoadCancelled();
    };
    LoadOptions options;
    if (progress)
        options.progress = [&](double f) { return progress(f * 0.8); };
    auto snapshot = readSnapshotFile(path, options);
    report(0.8);
    auto replay = replaySnapshot(std::move(snapshot));
    report(0.9);
    auto doc = std::make_shared<Document>();
    doc->path = path;
    doc->attribution = attribute(replay);
    doc->attributed = true;
    for (size_t i = 0; i < replay->devices.size(); ++i)
        for (const auto& curve : doc->attribution->devices.at(i).categoryBytes)
            doc->attributed = doc->attributed && curve.size() == static_cast<size_t>(replay->devices[i].eventCount);
    report(0.95);
    for (size_t i = 0; i < replay->devices.size(); ++i)
        doc->devices.push_back(buildDeviceModel(*doc->attribution, i));
    doc->frames = std::make_unique<FrameClassifier>(*replay->snapshot);
    report(0.97);
    doc->diagnosis = diagnose(*doc->attribution, *doc->frames);
    for (size_t i = 0; i < replay->devices.size(); ++i)
        doc->training.push_back(measureTraining(replay->devices[i], doc->attribution->devices[i]));
    report(1.0);
    return doc;
}

} // namespace memscope
