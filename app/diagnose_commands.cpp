#include "diagnose_commands.h"

#include "command_line.h"
#include "whatif_command.h"

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
                                            {"--recorded-seq", "--seq"},
                                            {"--bytes-per-param"},
                                            {"--recorded-precision"},
                                            {"--recorded-optimizer"},
                                            {"--what-if-batch"},
                                            {"--what-if-seq"},
                                            {"--what-if-states"},
                                            {"--what-if-bytes-per-param"},
                                            {"--checkpoint"},
                                            {"--precision"},
                                            {"--optimizer"},
                                            {"--accumulate"}}});
    const std::optional<int> device = cl.device();
    // --recorded-batch / --recorded-seq are the recorded run's (the names `memscope whatif`
    // uses; --batch and --seq are their older names, still accepted).
    const std::optional<double> batch = cl.positive("--recorded-batch");
    const std::optional<double> seq = cl.positive("--recorded-seq");
    const double bytesPerParam = cl.positive("--bytes-per-param").value_or(4);
    // The what-if is `memscope whatif`'s model-level changes (docs/ALLOCATOR.md, "One model
    // behind estimate and whatif"): --what-if-batch/--what-if-seq are whatif's --batch/--seq,
    // --what-if-bytes-per-param P its --precision (4 fp32, 2 bf16) and --what-if-states K its
    // --optimizer (2 adamw, 1 sgd-momentum, 0 sgd); --checkpoint, --precision, --optimizer and
    // --accumulate are whatif's own.
    ModelChanges changes = parseModelChanges(cl);
    changes.batch = cl.positive("--what-if-batch");
    changes.seq = cl.positive("--what-if-seq");
    if (auto p = cl.positive("--what-if-bytes-per-param")) {
        if (changes.precision)
            throw UsageError("--what-if-bytes-per-param is an alias of --precision: give one of them");
        if (*p == 4)
            changes.precision = Precision::Fp32;
        else if (*p == 2)
            changes.precision = Precision::Bf16;
        else
            throw UsageError("--what-if-bytes-per-param is an alias of --precision: 4 (fp32) or 2 (bf16), got '" +
                             cl.value("--what-if-bytes-per-param").value_or("") + "'");
    }
    if (auto k = cl.nonNegative("--what-if-states")) {
        if (changes.optimizer)
            throw UsageError("--what-if-states is an alias of --optimizer: give one of them");
        if (*k == 2)
            changes.optimizer = OptimizerKind::AdamW;
        else if (*k == 1)
            changes.optimizer = OptimizerKind::SgdMomentum;
        else if (*k == 0)
            changes.optimizer = OptimizerKind::Sgd;
        else
            throw UsageError("--what-if-states is an alias of --optimizer: 2 (adamw), 1 (sgd-momentum) or 0 (sgd), got '" +
                             cl.value("--what-if-states").value_or("") + "'");
    }
    std::optional<Precision> recordedPrecision;
    if (auto v = cl.value("--recorded-precision")) {
        recordedPrecision = precisionFromName(*v);
        if (!recordedPrecision)
            throw UsageError("--recorded-precision takes fp32, bf16, fp16, amp-bf16 or amp-fp16, got '" + *v + "'");
    } else if (bytesPerParam == 2) {
        recordedPrecision = Precision::Bf16;
    }
    std::optional<OptimizerKind> recordedOptimizer;
    if (auto v = cl.value("--recorded-optimizer")) {
        recordedOptimizer = optimizerFromName(*v);
        if (!recordedOptimizer)
            throw UsageError(
                "--recorded-optimizer takes adamw, adam, sgd, sgd-momentum, adafactor, adamw-8bit or adamw-fused, got '" + *v +
                "'");
    }
    const bool json = cl.has("--json");
    const std::string file = cl.operand();
    if (file.empty())
        throw UsageError(kEstimateUsage);
    const auto analysis = analyze(AnalysisSource::file(file));
    const size_t index = analysis->deviceIndex(device);
    const TrainingMeasurement& m = analysis->training.at(index);
    const EstimatorInputs recorded = inputsFromMeasurement(m, batch, seq, bytesPerParam);
    std::optional<EstimatorInputs> whatIf;
    if (!changes.empty()) {
        // The article's formula under the same changes: P from the precision's weights (amp
        // keeps fp32 weights), K and I from the optimizer.
        EstimatorInputs w = recorded;
        if (changes.batch)
            w.batch = *changes.batch;
        if (changes.seq)
            w.sequence = *changes.seq;
        if (changes.precision)
            w.bytesPerParameter = *changes.precision == Precision::Bf16 || *changes.precision == Precision::Fp16 ? 2 : 4;
        if (changes.optimizer) {
            w.optimizerStates = optimizerStateRatio(*changes.optimizer);
            if (!optimizerHasStepTemporaries(*changes.optimizer))
                w.optimizerIntermediates = 0;
            else if (w.optimizerIntermediates == 0)
                w.optimizerIntermediates = 1;
        }
        whatIf = w;
    }
    const EstimateReport report = buildEstimateReport(m, recorded, whatIf);
    // The prediction: the same changes edited into the trace and replayed through the
    // allocator model, as `memscope whatif` does.
    std::optional<ChangeResult> replayed;
    std::string replayedAs;
    const DeviceAttribution* attribution = analysis->attribution && index < analysis->attribution->devices.size()
                                               ? &analysis->attribution->devices[index]
                                               : nullptr;
    if (whatIf && attribution) {
        ModelWhatIf model(*analysis->replay, index, *attribution);
        RecordedSetup setup = model.recorded();
        setup.batch = batch.value_or(1.0);
        setup.batchKnown = batch.has_value();
        setup.seq = seq.value_or(1.0);
        setup.seqKnown = seq.has_value();
        if (recordedPrecision) {
            setup.precision = *recordedPrecision;
            setup.precisionEvidence = "given";
        }
        if (recordedOptimizer) {
            setup.optimizer = *recordedOptimizer;
            setup.optimizerStates = optimizerStateRatio(*recordedOptimizer);
            setup.optimizerEvidence = "given";
        }
        model.setRecorded(setup);
        SimulationOptions options;
        options.settings = AllocatorSettings::fromSnapshot(analysis->snapshot->allocatorSettings);
        replayed = model.simulate(changes, options);
        std::ostringstream as;
        as << changes.describe();
        if (batch && changes.batch)
            as << " --recorded-batch " << *batch;
        if (changes.seq)
            as << " --recorded-seq " << seq.value_or(1.0);
        replayedAs = as.str();
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
