#include "diagnose_commands.h"

#include "attribute/attributor.h"
#include "diagnose/diagnoser.h"
#include "diagnose/diagnostics_json.h"
#include "diagnose/estimator.h"
#include "diagnose/training_measurement.h"
#include "io/frame_classifier.h"
#include "replay/replay.h"
#include "snapshot/snapshot_reader.h"

#include <iostream>
#include <optional>
#include <stdexcept>

namespace memscope {

namespace {

int parseDeviceArg(const std::string& s)
{
    try {
        size_t used = 0;
        const int d = std::stoi(s, &used);
        if (used == s.size() && d >= 0)
            return d;
    } catch (...) {
    }
    throw std::invalid_argument("--device takes a device ordinal (0, 1, …), got '" + s + "'");
}

double parsePositive(const std::string& option, const std::string& s)
{
    try {
        size_t used = 0;
        const double v = std::stod(s, &used);
        if (used == s.size() && v > 0)
            return v;
    } catch (...) {
    }
    throw std::invalid_argument(option + " takes a positive number, got '" + s + "'");
}

double parseNonNegative(const std::string& option, const std::string& s)
{
    try {
        size_t used = 0;
        const double v = std::stod(s, &used);
        if (used == s.size() && v >= 0)
            return v;
    } catch (...) {
    }
    throw std::invalid_argument(option + " takes a number >= 0, got '" + s + "'");
}

// Splits "--opt=value" and "--opt value"; returns true and the value when `a` is `opt`.
bool optionValue(const std::vector<std::string>& args, size_t& i, const std::string& opt, std::string& value)
{
    const std::string& a = args[i];
    if (a == opt) {
        if (i + 1 >= args.size())
            throw std::invalid_argument(opt + " needs a value");
        value = args[++i];
        return true;
    }
    if (a.size() > opt.size() && a.compare(0, opt.size(), opt) == 0 && a[opt.size()] == '=') {
        value = a.substr(opt.size() + 1);
        return true;
    }
    return false;
}

// The index into replay.devices: the asked ordinal, else the first device with events.
size_t deviceIndex(const Replay& replay, const std::string& file, std::optional<int> device)
{
    if (replay.devices.empty())
        throw std::invalid_argument(file + ": has no device traces");
    if (device) {
        for (size_t i = 0; i < replay.devices.size(); ++i)
            if (replay.devices[i].device == *device)
                return i;
        throw std::invalid_argument(file + ": has no device " + std::to_string(*device) + " (it has " +
                                    std::to_string(replay.devices.size()) + ")");
    }
    for (size_t i = 0; i < replay.devices.size(); ++i)
        if (replay.devices[i].eventCount > 0)
            return i;
    return 0;
}

} // namespace

int runDiagnose(const std::vector<std::string>& args)
{
    std::optional<int> device;
    bool json = false;
    std::string file, value;
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (a == "--json")
            json = true;
        else if (optionValue(args, i, "--device", value))
            device = parseDeviceArg(value);
        else if (!a.empty() && a[0] == '-')
            throw std::invalid_argument("unknown option '" + a + "'");
        else if (file.empty())
            file = a;
        else
            throw std::invalid_argument("diagnose takes one file, got '" + file + "' and '" + a + "'");
    }
    if (file.empty())
        throw std::invalid_argument("usage: memscope diagnose FILE [--device N] [--json]");
    auto replay = replaySnapshot(readSnapshotFile(file));
    std::optional<size_t> index;
    if (device)
        index = deviceIndex(*replay, file, device);
    auto attribution = attribute(replay);
    const FrameClassifier frames(*replay->snapshot);
    auto result = diagnose(*attribution, frames);
    if (json)
        std::cout << diagnosticsToJson(*result, *replay, frames, index);
    else
        std::cout << file << "\n\n" << diagnosticsText(*result, frames, index);
    return 0;
}

int runEstimate(const std::vector<std::string>& args)
{
    std::optional<int> device;
    std::optional<double> batch, seq, whatBatch, whatSeq, whatStates, whatBytes;
    double bytesPerParam = 4;
    bool json = false;
    std::string file, value;
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (a == "--json")
            json = true;
        else if (optionValue(args, i, "--device", value))
            device = parseDeviceArg(value);
        else if (optionValue(args, i, "--batch", value))
            batch = parsePositive("--batch", value);
        else if (optionValue(args, i, "--seq", value))
            seq = parsePositive("--seq", value);
        else if (optionValue(args, i, "--bytes-per-param", value))
            bytesPerParam = parsePositive("--bytes-per-param", value);
        else if (optionValue(args, i, "--what-if-batch", value))
            whatBatch = parsePositive("--what-if-batch", value);
        else if (optionValue(args, i, "--what-if-seq", value))
            whatSeq = parsePositive("--what-if-seq", value);
        else if (optionValue(args, i, "--what-if-states", value))
            whatStates = parseNonNegative("--what-if-states", value);
        else if (optionValue(args, i, "--what-if-bytes-per-param", value))
            whatBytes = parsePositive("--what-if-bytes-per-param", value);
        else if (!a.empty() && a[0] == '-')
            throw std::invalid_argument("unknown option '" + a + "'");
        else if (file.empty())
            file = a;
        else
            throw std::invalid_argument("estimate takes one file, got '" + file + "' and '" + a + "'");
    }
    if (file.empty())
        throw std::invalid_argument("usage: memscope estimate FILE [--device N] [--batch B] [--seq L] "
                                    "[--bytes-per-param P] [--what-if-batch B] [--what-if-seq L] [--what-if-states K] "
                                    "[--what-if-bytes-per-param P] [--json]");
    auto replay = replaySnapshot(readSnapshotFile(file));
    const size_t index = deviceIndex(*replay, file, device);
    auto attribution = attribute(replay);
    const TrainingMeasurement m = measureTraining(replay->devices[index], attribution->devices[index]);
    const EstimatorInputs recorded = inputsFromMeasurement(m, batch, seq, bytesPerParam);
    std::optional<EstimatorInputs> whatIf;
    if (whatBatch || whatSeq || whatStates || whatBytes) {
        EstimatorInputs w = recorded;
        if (whatBatch)
            w.batch = *whatBatch;
        if (whatSeq)
            w.sequence = *whatSeq;
        if (whatStates)
            w.optimizerStates = *whatStates;
        if (whatBytes) {
            // Same model, other precision: N stays, each value takes P' bytes.
            w.bytesPerParameter = *whatBytes;
        }
        whatIf = w;
    }
    const EstimateReport report = buildEstimateReport(m, recorded, whatIf);
    if (json)
        std::cout << estimateReportJson(report);
    else
        std::cout << file << ", device " << replay->devices[index].device << "\n" << estimateReportText(report);
    return 0;
}

} // namespace memscope
