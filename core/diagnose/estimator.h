#pragma once

#include "diagnose/training_measurement.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace memscope {

/*
 * The model of training memory of Hugging Face's blog post "Visualize and understand GPU
 * memory in PyTorch" (Quentin Gallouédec, December 2024, https://huggingface.co/blog/train_memory),
 * "the article" below:
 *
 *   peak = parameters + optimizer state + max(gradients + optimizer intermediates, activations)
 *
 *   parameters               N x P
 *   gradients                N x P
 *   optimizer state          K x N x P      (K: tensors the optimizer keeps per parameter; Adam 2)
 *   optimizer intermediates  I x N x P      (the step's temporaries; foreach Adam about 1)
 *   activations              A x B x L x P  (A: values held per token of the batch)
 *
 * Its activations term is all the forward/backward holds on top of the weights and the
 * optimizer state: the saved activations (the breakdown's Activations category) and the
 * temporaries (Intermediates) and gradients made so far. The report says so and gives the
 * saved activations beside it, so its figure is not read as the category's.
 *
 * with the article's heuristic A = 4.6894e-4 x N + 1.8494e6 when A is unknown. The first
 * term of max() is the optimizer-step peak, the second the forward/backward one; the larger
 * says which phase the peak falls in.
 *
 * Filled from a snapshot (inputsFromMeasurement): N x P is the measured parameter bytes
 * (N = bytes / P, P = 4 unless told), K the measured optimizer state over N x P (an integer
 * when within 5% of one), I the measured step temporaries over N x P, and A the measured
 * forward/backward extra (TrainingMeasurement::forwardBackwardExtra) over B x L x P. The
 * run's B and L are not in a snapshot: when they are not given, B = L = 1 stands for "the
 * recorded batch", A is per recorded step (not per token) and what-if edits of B and L are
 * ratios to it. Editing any input and
 * calling estimate() again answers what-if questions ("batch 2 instead of 16").
 */
struct EstimatorInputs {
    double parameters = 0; // N
    double bytesPerParameter = 4; // P
    double optimizerStates = 0; // K
    double optimizerIntermediates = 0; // I
    double batch = 1; // B
    double sequence = 1; // L
    double activationsPerToken = 0; // A
    bool training = true; // gradients and the optimizer step exist
    bool tokensKnown = false; // B and L are the run's (else 1 = the recorded batch)
    bool activationsMeasured = false; // A came from the snapshot (else the heuristic)
};

// 4.6894e-4 x N + 1.8494e6
double heuristicActivationsPerToken(double parameters);

enum class PeakPhase : uint8_t { ForwardBackward, OptimizerStep };
std::string_view peakPhaseName(PeakPhase p); // "forward_backward", "optimizer_step"
std::string_view peakPhaseLabel(PeakPhase p); // "forward/backward", "optimizer step"

struct Estimate {
    EstimatorInputs inputs;
    int64_t parameters = 0;
    int64_t gradients = 0;
    int64_t optimizerState = 0;
    int64_t optimizerIntermediates = 0;
    int64_t activations = 0;
    int64_t forwardBackwardPeak = 0; // parameters + optimizer state + activations
    int64_t optimizerPeak = 0; // parameters + optimizer state + gradients + intermediates
    int64_t peak = 0;
    PeakPhase dominant = PeakPhase::ForwardBackward;
    // What the heuristic A would predict for the activations at this B and L (0 without them).
    int64_t heuristicActivations = 0;
};

Estimate estimate(const EstimatorInputs& in);

// The article, named, for reports.
inline constexpr std::string_view kEstimatorArticle =
    "Hugging Face's \"Visualize and understand GPU memory in PyTorch\" (Gallouédec, 2024)";

// The model's inputs read off a snapshot's measurement (see above). `batch` and `sequence`
// are the recorded run's, when known.
EstimatorInputs inputsFromMeasurement(const TrainingMeasurement& m, std::optional<double> batch = {},
                                      std::optional<double> sequence = {}, double bytesPerParameter = 4);

// One row of predicted next to measured; measured < 0: not measurable from the snapshot.
struct EstimateRow {
    std::string key; // "parameters", "gradients", "optimizer_state", "optimizer_intermediates",
                     // "activations", "forward_backward_peak", "optimizer_step_peak", "peak"
    std::string label;
    int64_t predicted = 0;
    int64_t measured = -1;
};

struct EstimateReport {
    Estimate recorded; // the model filled from the snapshot
    std::optional<Estimate> whatIf; // the model with the user's edits
    TrainingMeasurement measured;
    std::optional<PeakPhase> measuredDominant; // from the phase of the measured peak
    std::vector<EstimateRow> rows; // recorded model vs measured
};

EstimateReport buildEstimateReport(const TrainingMeasurement& m, const EstimatorInputs& recorded,
                                   std::optional<EstimatorInputs> whatIf = {});

std::string estimateReportText(const EstimateReport& r);
std::string estimateReportJson(const EstimateReport& r, int indent = 2);

} // namespace memscope
