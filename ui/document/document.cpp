#include "ui/document/document.h"

namespace memscope {

std::shared_ptr<const Document> makeDocument(std::shared_ptr<const Analysis> analysis, const Document* previous)
{
    auto doc = std::make_shared<Document>();
    doc->path = analysis->name;
    for (size_t i = 0; i < analysis->replay->devices.size(); ++i) {
        const DeviceModel* before = previous && i < previous->devices.size() ? &previous->devices[i] : nullptr;
        doc->devices.push_back(buildDeviceModel(*analysis, i, before));
    }
    doc->analysis = std::move(analysis);
    return doc;
}

std::shared_ptr<const Document> analyzeFile(const std::string& path, const std::function<bool(double)>& progress)
{
    AnalysisCallbacks callbacks;
    if (progress)
        callbacks.progress = [&](AnalysisStage stage, double f) { return progress(analysisFraction(stage, f)); };
    return makeDocument(analyze(AnalysisSource::file(path), {}, callbacks));
}

} // namespace memscope
