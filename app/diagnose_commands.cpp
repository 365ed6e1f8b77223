#include "diagnose_commands.h"

#include "command_line.h"

#include "analysis/analysis.h"
#include "diagnose/estimator.h"
#include "io/diagnostics_json.h"

#include <iostream>
#include <optional>
#include <stdexcept>

namespace memscope {

int runDiagnose(const std::vector<std::string>& args)
{
    const CommandLine cl(args, {.command = "diagnose", .flags = {"--json"}, .options = {{"--device"}}});
    const std::optional<int> device = cl.device();
    const bool json = cl.has("--json");
    const std::string file = cl.operand();
    if (file.empty())
        throw UsageError(kDiagnoseUsage);
    const auto analysis = analyze(AnalysisSource::file(file));
    std::optional<size_t> index;
    if (device)
        index = analysis->deviceIndex(device);
    // Every device's findings, the one that went wrong (Analysis::focusDevice()) first.
    const Diagnostics findings = analysis->findingsFocusFirst();
    if (json) {
        std::cout << diagnosticsToJson(findings, *analysis->replay, *analysis->frames, index);
    } else {
        std::cout << file << "\n";
        if (!index && analysis->deviceCount() > 1) {
            const size_t focus = analysis->focusDevice();
            std::cout << "device " << analysis->replay->devices[focus].device << " first (" << analysis->focusReason() << ")\n";
        }
        std::cout << "\n" << diagnosticsText(findings, *analysis->frames, index);
    }
    return 0;
}

int runEstimate(const std::vector<std::string>& args)
{
    const CommandLine cl(args, {.command = "estimate",
                                .flags = {"--json"},
                                .options = {{"--device"},
                                            {"--recorded-batch", "--batch"},
                                            {"--seq"},
                                            {"--bytes-per-param"},
                                            {"--what-if-batch"},
                                            {"--what-if-seq"},
                                            {"--what-if-states"},
                                            {"--what-if-bytes-per-param"}}});
    const std::optional<int> device = cl.device();
    // --recorded-batch is the recorded run's batch (the name `memscope whatif` uses too);
    // --batch is its deprecated alias.
    const std::optional<double> batch = cl.positive("--recorded-batch");
    const std::optional<double> seq = cl.positive("--seq");
    const double bytesPerParam = cl.positive("--bytes-per-param").value_or(4);
    const std::optional<double> whatBatch = cl.positive("--what-if-batch");
    const std::optional<double> whatSeq = cl.positive("--what-if-seq");
    const std::optional<double> whatStates = cl.nonNegative("--what-if-states");
    const std::optional<double> whatBytes = cl.positive("--what-if-bytes-per-param");
    const bool json = cl.has("--json");
    const std::string file = cl.operand();
    if (file.empty())
        throw UsageError(kEstimateUsage);
    const auto analysis = analyze(AnalysisSource::file(file));
    const size_t index = analysis->deviceIndex(device);
    const TrainingMeasurement& m = analysis->training.at(index);
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
        std::cout << file << ", device " << analysis->replay->devices[index].device << "\n" << estimateReportText(report);
    return 0;
}

} // namespace memscope
