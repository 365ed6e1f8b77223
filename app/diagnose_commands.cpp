#include "diagnose_commands.h"

#include "command_line.h"

#include "allocator/model_what_if.h"
#include "analysis/analysis.h"
#include "common/format_bytes.h"
#include "diagnose/estimator.h"
#include "io/diagnostics_json.h"

#include <iostream>
#include <optional>
#include <sstream>
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
    // The same what-if edited into the trace and replayed through the allocator model
    // (memscope whatif's --batch/--seq/--optimizer/--precision; docs/ALLOCATOR.md).
    std::optional<ChangeResult> replayed;
    std::string replayedAs;
    const DeviceAttribution* attribution = analysis->attribution && index < analysis->attribution->devices.size()
                                               ? &analysis->attribution->devices[index]
                                               : nullptr;
    if (whatIf && attribution) {
        ModelWhatIf model(*analysis->replay, index, *attribution);
        RecordedSetup setup = model.recorded();
        setup.batch = batch.value_or(1.0);
        setup.seq = seq.value_or(1.0);
        if (bytesPerParam == 2)
            setup.precision = Precision::Bf16;
        model.setRecorded(setup);
        ModelChanges c;
        c.batch = whatBatch;
        c.seq = whatSeq;
        if (whatStates && *whatStates == 2)
            c.optimizer = OptimizerKind::AdamW;
        else if (whatStates && *whatStates == 1)
            c.optimizer = OptimizerKind::SgdMomentum;
        else if (whatStates && *whatStates == 0)
            c.optimizer = OptimizerKind::Sgd;
        if (whatBytes && *whatBytes == 2)
            c.precision = Precision::Bf16;
        else if (whatBytes && *whatBytes == 4)
            c.precision = Precision::Fp32;
        replayed = model.simulate(c, SimulationOptions{});
        replayedAs = c.describe();
    }
    if (json) {
        std::string out = estimateReportJson(report);
        if (replayed) {
            const size_t end = out.rfind('}');
            std::ostringstream o;
            o << ",\n  \"replayed_what_if\": {\"whatif_options\": \"" << replayedAs
              << "\", \"reserved_peak_bytes\": " << replayed->result.reservedPeak
              << ", \"allocated_peak_bytes\": " << replayed->result.allocatedPeak
              << ", \"requested_peak_bytes\": " << replayed->result.requestedPeak << "}\n";
            size_t cut = end;
            while (cut > 0 && (out[cut - 1] == '\n' || out[cut - 1] == ' '))
                --cut;
            out = out.substr(0, cut) + o.str() + out.substr(end);
        }
        std::cout << out;
    } else {
        std::cout << file << ", device " << analysis->replay->devices[index].device << "\n" << estimateReportText(report);
        if (replayed)
            std::cout << "\nreplayed through the allocator model (memscope whatif " << replayedAs << "): requested peak "
                      << formatBytes(replayed->result.requestedPeak) << ", allocated peak "
                      << formatBytes(replayed->result.allocatedPeak) << ", reserved peak "
                      << formatBytes(replayed->result.reservedPeak) << "\n";
    }
    return 0;
}

} // namespace memscope
