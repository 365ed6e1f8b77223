#include "analysis/analysis.h"

#include "attribute/attributor.h"
#include "common/load_error.h"
#include "common/page_warmer.h"
#include "live/live_client.h"
#include "replay/replay.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <stdexcept>

namespace memscope {

namespace {

// A live session's on-disk stream (LiveClient's recovery file, written as events arrive) opens
// like any recording: up to its last whole message.
bool isLiveStreamFile(const std::string& path)
{
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f)
        return false;
    uint8_t head[9] = {};
    const size_t n = std::fread(head, 1, sizeof head, f);
    std::fclose(f);
    return looksLikeLiveStream({head, n});
}

} // namespace

const char* analysisStageName(AnalysisStage stage)
{
    switch (stage) {
    case AnalysisStage::Loaded: return "loading";
    case AnalysisStage::Replayed: return "replaying";
    case AnalysisStage::Attributed: return "attributing";
    case AnalysisStage::Diagnosed: return "diagnosing";
    }
    return "analysing";
}

AnalysisSource AnalysisSource::file(std::string path)
{
    AnalysisSource s;
    s.name = path;
    s.path = std::move(path);
    return s;
}

AnalysisSource AnalysisSource::recording(std::shared_ptr<const Snapshot> snapshot, std::string name)
{
    AnalysisSource s;
    s.snapshot = std::move(snapshot);
    s.name = std::move(name);
    return s;
}

const DeviceQueries& Analysis::queriesOf(size_t deviceIndex) const
{
    if (!queries)
        throw std::logic_error(name + ": the device queries are computed with the Replayed stage of a longer analysis");
    return queries->at(deviceIndex);
}

std::optional<size_t> Analysis::findDevice(int ordinal) const
{
    if (!snapshot)
        return std::nullopt;
    for (size_t i = 0; i < snapshot->devices.size(); ++i)
        if (snapshot->devices[i].device == ordinal)
            return i;
    return std::nullopt;
}

size_t Analysis::focusDevice() const
{
    if (replay) {
        for (size_t i = 0; i < replay->devices.size(); ++i)
            if (!replay->devices[i].oomEvents.empty())
                return i;
        // A GPU before pinned host memory (host_traces, device -1), whatever their peaks.
        size_t best = 0;
        for (size_t i = 1; i < replay->devices.size(); ++i) {
            const DeviceReplay& d = replay->devices[i];
            const DeviceReplay& b = replay->devices[best];
            if ((b.device < 0 && d.device >= 0) ||
                ((d.device < 0) == (b.device < 0) && d.peakRequested.bytes > b.peakRequested.bytes))
                best = i;
        }
        return best;
    }
    if (snapshot)
        for (size_t i = 0; i < snapshot->devices.size(); ++i)
            if (snapshot->devices[i].events.count() > 0)
                return i;
    return 0;
}

const char* Analysis::focusReason() const
{
    if (!replay || replay->devices.empty())
        return "first device";
    if (!replay->devices[focusDevice()].oomEvents.empty())
        return "out of memory";
    return replay->devices.size() > 1 ? "highest peak" : "only device";
}

Diagnostics Analysis::findingsFocusFirst() const
{
    Diagnostics out;
    if (!diagnosis)
        return out;
    out.items = diagnosis->items;
    const size_t focus = focusDevice();
    std::stable_partition(out.items.begin(), out.items.end(), [&](const Diagnostic& d) { return d.deviceIndex == focus; });
    return out;
}

size_t Analysis::deviceIndex(std::optional<int> ordinal) const
{
    if (deviceCount() == 0)
        throw std::invalid_argument(name + ": has no device traces");
    if (!ordinal)
        return focusDevice();
    if (auto i = findDevice(*ordinal))
        return *i;
    std::string have;
    for (const DeviceTrace& d : snapshot->devices)
        have += (have.empty() ? "" : ", ") + std::to_string(d.device);
    throw std::invalid_argument(name + ": has no device " + std::to_string(*ordinal) + " (it has " + have + ")");
}

double analysisFraction(AnalysisStage stage, double fraction)
{
    // The share of the whole run each stage takes on real files: reading dominates.
    constexpr double start[kAnalysisStageCount + 1] = {0.0, 0.8, 0.9, 0.96, 1.0};
    const auto s = static_cast<size_t>(stage);
    return start[s] + (start[s + 1] - start[s]) * fraction;
}

std::shared_ptr<const Analysis> analyze(const AnalysisSource& source, const AnalysisOptions& options,
                                        const AnalysisCallbacks& callbacks)
{
    auto report = [&](AnalysisStage stage, double fraction) {
        if (callbacks.progress && !callbacks.progress(stage, fraction))
            throw LoadCancelled();
    };
    auto publish = [&](const std::shared_ptr<Analysis>& a) {
        report(a->stage, 1.0);
        if (callbacks.stageReady)
            callbacks.stageReady(a);
        return options.until == a->stage;
    };

    auto a = std::make_shared<Analysis>();
    a->name = source.name.empty() ? source.path : source.name;
    a->stage = AnalysisStage::Loaded;
    report(AnalysisStage::Loaded, 0.0);
    if (source.snapshot) {
        a->snapshot = source.snapshot;
    } else {
        LoadOptions load = options.load;
        if (callbacks.progress)
            load.progress = [&](double f) { return callbacks.progress(AnalysisStage::Loaded, f); };
        // The replay's columns, about 28 bytes an event (its two curves 4 each), warmed while the
        // file is parsed; a pickle spends about 96 bytes an event or more (common/page_warmer.h).
        PageWarmer warmer;
        std::error_code error;
        const uintmax_t fileBytes = std::filesystem::file_size(source.path, error);
        if (options.until != AnalysisStage::Loaded && !error && options.warmPages)
            warmer.start(static_cast<size_t>(fileBytes / 96 * 28));
        a->snapshot = isLiveStreamFile(source.path) ? readLiveStreamFile(source.path) : readSnapshotFile(source.path, load);
    }
    if (publish(a))
        return a;

    report(AnalysisStage::Replayed, 0.0);
    auto replayed = std::make_shared<Analysis>(*a);
    replayed->stage = AnalysisStage::Replayed;
    {
        // The attribution's per-category curves, about 28 bytes an event, warmed meanwhile.
        PageWarmer warmer;
        if (options.until != AnalysisStage::Replayed && options.warmPages) {
            size_t events = 0;
            for (const DeviceTrace& d : a->snapshot->devices)
                events += d.events.count();
            warmer.start(events * 28);
        }
        replayed->replay = replaySnapshot(a->snapshot);
    }
    auto queries = [](const Replay& replay) {
        auto q = std::make_shared<std::vector<DeviceQueries>>();
        for (size_t i = 0; i < replay.devices.size(); ++i)
            q->push_back(queryDevice(replay, i));
        return std::shared_ptr<const std::vector<DeviceQueries>>(std::move(q));
    };
    if (options.until != AnalysisStage::Replayed)
        replayed->queries = queries(*replayed->replay);
    if (publish(replayed))
        return replayed;

    report(AnalysisStage::Attributed, 0.0);
    auto attributed = std::make_shared<Analysis>(*replayed);
    attributed->stage = AnalysisStage::Attributed;
    attributed->attribution = attribute(replayed->replay);
    attributed->attributed = true;
    for (size_t i = 0; i < replayed->replay->devices.size(); ++i)
        for (const auto& curve : attributed->attribution->devices.at(i).categoryBytes)
            attributed->attributed = attributed->attributed &&
                                     curve.size() == static_cast<size_t>(replayed->replay->devices[i].eventCount);
    attributed->frames = std::make_shared<const FrameClassifier>(*a->snapshot);
    if (publish(attributed))
        return attributed;

    report(AnalysisStage::Diagnosed, 0.0);
    auto diagnosed = std::make_shared<Analysis>(*attributed);
    diagnosed->stage = AnalysisStage::Diagnosed;
    diagnosed->diagnosis = diagnose(*attributed->attribution, *attributed->frames);
    for (size_t i = 0; i < replayed->replay->devices.size(); ++i)
        diagnosed->training.push_back(measureTraining(replayed->replay->devices[i], attributed->attribution->devices[i]));
    publish(diagnosed);
    return diagnosed;
}

} // namespace memscope
