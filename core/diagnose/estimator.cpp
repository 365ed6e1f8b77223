#include "diagnose/estimator.h"

#include "diagnose/diagnostic.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace memscope {

namespace {

using Json = nlohmann::ordered_json;

int64_t bytes(double v) { return static_cast<int64_t>(std::llround(std::max(0.0, v))); }

double round2(double v) { return std::round(v * 100.0) / 100.0; }

std::string number(double v, int decimals = 0)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

std::string count(double v)
{
    if (v >= 1e9)
        return number(v / 1e9, 2) + "B";
    if (v >= 1e6)
        return number(v / 1e6, 1) + "M";
    if (v >= 1e3)
        return number(v / 1e3, 1) + "k";
    return number(v, 0);
}

std::string column(const std::string& s, size_t width)
{
    return s.size() >= width ? s + " " : s + std::string(width - s.size(), ' ');
}

Json inputsJson(const EstimatorInputs& in)
{
    Json j;
    j["parameters"] = in.parameters;
    j["bytes_per_parameter"] = in.bytesPerParameter;
    j["optimizer_states"] = in.optimizerStates;
    j["optimizer_intermediates"] = in.optimizerIntermediates;
    j["batch"] = in.batch;
    j["sequence"] = in.sequence;
    j["activations_per_token"] = in.activationsPerToken;
    j["activations_per"] = in.tokensKnown ? "token" : "recorded step"; // A's unit: B = L = 1 when unknown
    j["training"] = in.training;
    j["tokens_known"] = in.tokensKnown;
    j["activations_measured"] = in.activationsMeasured;
    j["heuristic_activations_per_token"] = heuristicActivationsPerToken(in.parameters);
    return j;
}

Json estimateJson(const Estimate& e)
{
    Json j;
    j["inputs"] = inputsJson(e.inputs);
    j["parameters"] = e.parameters;
    j["gradients"] = e.gradients;
    j["optimizer_state"] = e.optimizerState;
    j["optimizer_intermediates"] = e.optimizerIntermediates;
    j["activations"] = e.activations;
    j["forward_backward_peak"] = e.forwardBackwardPeak;
    j["optimizer_step_peak"] = e.optimizerPeak;
    j["peak"] = e.peak;
    j["dominant"] = peakPhaseName(e.dominant);
    j["heuristic_activations"] = e.heuristicActivations;
    return j;
}

std::string inputsText(const EstimatorInputs& in)
{
    std::string s = "N = " + count(in.parameters) + " parameters x P = " + number(in.bytesPerParameter, 0) + " B";
    if (in.training)
        s += ", K = " + number(in.optimizerStates, in.optimizerStates == std::floor(in.optimizerStates) ? 0 : 2) +
             " optimizer states, I = " + number(in.optimizerIntermediates, 2);
    if (in.tokensKnown)
        s += ", B = " + number(in.batch, 0) + ", L = " + number(in.sequence, 0) + ", A = " + count(in.activationsPerToken) +
             " per token";
    else
        s += ", B = L = 1: the recorded batch, A = " + count(in.activationsPerToken) +
             " per recorded step (batch and sequence unknown; give --recorded-batch/--seq for per-token figures)" +
             std::string(in.batch != 1 || in.sequence != 1 ? " x " + number(in.batch * in.sequence, 2) : "");
    s += in.activationsMeasured ? " (A measured)" : " (A from the article's heuristic)";
    return s;
}

} // namespace

double heuristicActivationsPerToken(double parameters) { return 4.6894e-4 * parameters + 1.8494e6; }

std::string_view peakPhaseName(PeakPhase p) { return p == PeakPhase::OptimizerStep ? "optimizer_step" : "forward_backward"; }

std::string_view peakPhaseLabel(PeakPhase p) { return p == PeakPhase::OptimizerStep ? "optimizer step" : "forward/backward"; }

Estimate estimate(const EstimatorInputs& in)
{
    Estimate e;
    e.inputs = in;
    const double np = in.parameters * in.bytesPerParameter;
    e.parameters = bytes(np);
    if (in.training) {
        e.gradients = bytes(np);
        e.optimizerState = bytes(in.optimizerStates * np);
        e.optimizerIntermediates = bytes(in.optimizerIntermediates * np);
    }
    e.activations = bytes(in.activationsPerToken * in.batch * in.sequence * in.bytesPerParameter);
    e.forwardBackwardPeak = e.parameters + e.optimizerState + e.activations;
    e.optimizerPeak = in.training ? e.parameters + e.optimizerState + e.gradients + e.optimizerIntermediates : 0;
    e.dominant = e.optimizerPeak > e.forwardBackwardPeak ? PeakPhase::OptimizerStep : PeakPhase::ForwardBackward;
    e.peak = std::max(e.forwardBackwardPeak, e.optimizerPeak);
    if (in.tokensKnown)
        e.heuristicActivations = bytes(heuristicActivationsPerToken(in.parameters) * in.batch * in.sequence *
                                       in.bytesPerParameter);
    return e;
}

EstimatorInputs inputsFromMeasurement(const TrainingMeasurement& m, std::optional<double> batch, std::optional<double> sequence,
                                      double bytesPerParameter)
{
    EstimatorInputs in;
    in.bytesPerParameter = bytesPerParameter > 0 ? bytesPerParameter : 4;
    in.training = m.hasBackward || m.hasOptimizerStep;
    const double np = static_cast<double>(m.parameters);
    in.parameters = np / in.bytesPerParameter;
    if (in.training && np > 0) {
        const double k = static_cast<double>(m.optimizerState) / np;
        const double nearest = std::round(k);
        in.optimizerStates = std::fabs(k - nearest) <= 0.05 * std::max(1.0, nearest) ? nearest : round2(k);
        in.optimizerIntermediates = m.hasOptimizerStep ? round2(static_cast<double>(m.optimizerIntermediates) / np) : 1.0;
    }
    in.tokensKnown = batch.has_value() || sequence.has_value();
    in.batch = batch.value_or(1);
    in.sequence = sequence.value_or(1);
    const double tokens = std::max(1e-9, in.batch * in.sequence);
    if (m.forwardBackwardExtra > 0) {
        in.activationsPerToken = static_cast<double>(m.forwardBackwardExtra) / (tokens * in.bytesPerParameter);
        in.activationsMeasured = true;
    } else if (in.tokensKnown) {
        in.activationsPerToken = heuristicActivationsPerToken(in.parameters);
    }
    return in;
}

EstimateReport buildEstimateReport(const TrainingMeasurement& m, const EstimatorInputs& recorded,
                                   std::optional<EstimatorInputs> whatIf)
{
    EstimateReport r;
    r.measured = m;
    r.recorded = estimate(recorded);
    if (whatIf)
        r.whatIf = estimate(*whatIf);
    if (m.peakPhase == Phase::Forward || m.peakPhase == Phase::Backward)
        r.measuredDominant = PeakPhase::ForwardBackward;
    else if (m.peakPhase == Phase::OptimizerStep)
        r.measuredDominant = PeakPhase::OptimizerStep;
    const Estimate& e = r.recorded;
    const bool fb = m.hasForward || m.hasBackward;
    r.rows = {
        {"parameters", "Parameters (N x P)", e.parameters, m.parameters},
        {"gradients", "Gradients (N x P)", e.gradients, m.hasBackward ? m.gradients : -1},
        {"optimizer_state", "Optimizer state (K x N x P)", e.optimizerState, m.hasOptimizerStep ? m.optimizerState : -1},
        {"optimizer_intermediates", "Optimizer intermediates (I x N x P)", e.optimizerIntermediates,
         m.hasOptimizerStep ? m.optimizerIntermediates : -1},
        {"activations", "Activations + temporaries (A x B x L x P)", e.activations, fb ? m.forwardBackwardExtra : -1},
        {"forward_backward_peak", "Forward/backward peak", e.forwardBackwardPeak, fb ? m.forwardBackwardPeak : -1},
        {"optimizer_step_peak", "Optimizer step peak", e.optimizerPeak, m.hasOptimizerStep ? m.optimizerPeak : -1},
        {"peak", "Peak", e.peak, m.peak},
    };
    return r;
}

std::string estimateReportText(const EstimateReport& r)
{
    const Estimate& e = r.recorded;
    std::string out = "  model: " + inputsText(e.inputs) + "\n";
    out += "  the article: " + std::string(kEstimatorArticle) + "\n";
    if (e.inputs.tokensKnown)
        out += "  the article's heuristic A = " + count(heuristicActivationsPerToken(e.inputs.parameters)) +
               " per token would predict activations of " + formatBytes(e.heuristicActivations) + "\n";
    out += "  its activations term is all forward/backward holds above weights and state: saved activations (the\n"
           "  breakdown's Activations) at most " +
           formatBytes(r.measured.savedActivations) + ", the rest temporaries (Intermediates) and gradients made so far\n\n";
    const bool wi = r.whatIf.has_value();
    out += "  " + column("", 44) + column("predicted", 18) + column("measured", 18) + (wi ? "what-if" : "") + "\n";
    for (const EstimateRow& row : r.rows) {
        out += "  " + column(row.label, 44) + column(formatBytes(row.predicted), 18) +
               column(row.measured >= 0 ? formatBytes(row.measured) : std::string("-"), 18);
        if (wi) {
            const Estimate& w = *r.whatIf;
            const int64_t v = row.key == "parameters"                ? w.parameters
                              : row.key == "gradients"               ? w.gradients
                              : row.key == "optimizer_state"         ? w.optimizerState
                              : row.key == "optimizer_intermediates" ? w.optimizerIntermediates
                              : row.key == "activations"             ? w.activations
                              : row.key == "forward_backward_peak"   ? w.forwardBackwardPeak
                              : row.key == "optimizer_step_peak"     ? w.optimizerPeak
                                                                     : w.peak;
            out += formatBytes(v);
        }
        out += "\n";
    }
    out += "  " + column("Peak falls in", 44) + column(std::string(peakPhaseLabel(e.dominant)), 18) +
           column(r.measuredDominant ? std::string(peakPhaseLabel(*r.measuredDominant)) : std::string("-"), 18) +
           (wi ? std::string(peakPhaseLabel(r.whatIf->dominant)) : std::string()) + "\n";
    if (wi)
        out += "\n  what-if: " + inputsText(r.whatIf->inputs) + "\n";
    return out;
}

std::string estimateReportJson(const EstimateReport& r, int indent)
{
    Json root;
    root["model"] = "peak = parameters + optimizer_state + max(gradients + optimizer_intermediates, activations)";
    root["article"] = std::string(kEstimatorArticle);
    root["recorded"] = estimateJson(r.recorded);
    Json m;
    m["parameters"] = r.measured.parameters;
    m["gradients"] = r.measured.gradients;
    m["optimizer_state"] = r.measured.optimizerState;
    m["optimizer_intermediates"] = r.measured.optimizerIntermediates;
    m["saved_activations"] = r.measured.savedActivations;
    m["forward_backward_extra"] = r.measured.forwardBackwardExtra;
    m["forward_backward_peak"] = r.measured.forwardBackwardPeak;
    m["forward_backward_peak_event"] = r.measured.forwardBackwardPeakEvent;
    m["optimizer_step_peak"] = r.measured.optimizerPeak;
    m["optimizer_step_peak_event"] = r.measured.optimizerPeakEvent;
    m["peak"] = r.measured.peak;
    m["peak_event"] = r.measured.peakEvent;
    m["peak_phase"] = phaseName(r.measured.peakPhase);
    m["dominant"] = r.measuredDominant ? Json(peakPhaseName(*r.measuredDominant)) : Json(nullptr);
    root["measured"] = std::move(m);
    Json rows = Json::array();
    for (const EstimateRow& row : r.rows) {
        Json j;
        j["key"] = row.key;
        j["label"] = row.label;
        j["predicted"] = row.predicted;
        j["measured"] = row.measured >= 0 ? Json(row.measured) : Json(nullptr);
        rows.push_back(std::move(j));
    }
    root["rows"] = std::move(rows);
    root["what_if"] = r.whatIf ? estimateJson(*r.whatIf) : Json(nullptr);
    return root.dump(indent, ' ', false, Json::error_handler_t::replace) + "\n";
}

} // namespace memscope
