#pragma once

#include "attribute/attribution.h"

#include <cstdint>

namespace memscope {

/*
 * The components of the training-memory model, measured on one device from the
 * attribution's category curves and phases:
 *
 *   parameters, gradients, optimizerState, savedActivations
 *        the maximum over the trace of each category's live bytes (the full set of
 *        gradients exists after backward; optimizer state once the first step made it)
 *   forwardBackwardExtra
 *        the maximum, over forward and backward events, of requested bytes minus the
 *        parameters and optimizer state live at that event: what the forward/backward needs
 *        on top of weights and state (saved activations, temporaries, the gradients made so far)
 *   optimizerExtra
 *        the same over optimizer-step events: gradients plus the step's temporaries
 *   optimizerIntermediates
 *        optimizerExtra minus the gradients live at that event
 *
 * so that the measured peaks are parameters + optimizer state + max(forwardBackwardExtra,
 * optimizerExtra): the article's model, term by term.
 */
struct TrainingMeasurement {
    int64_t parameters = 0;
    int64_t gradients = 0;
    int64_t optimizerState = 0;
    int64_t savedActivations = 0;

    int64_t forwardBackwardPeak = 0; // max requested over forward/backward events
    int64_t forwardBackwardPeakEvent = -1;
    int64_t forwardBackwardExtra = 0;
    int64_t optimizerPeak = 0; // max requested over optimizer-step events
    int64_t optimizerPeakEvent = -1;
    int64_t optimizerExtra = 0;
    int64_t optimizerIntermediates = 0;

    int64_t peak = 0; // the global requested peak
    int64_t peakEvent = -1;
    Phase peakPhase = Phase::Other;

    bool hasForward = false;
    bool hasBackward = false;
    bool hasOptimizerStep = false;
};

TrainingMeasurement measureTraining(const DeviceReplay& replay, const DeviceAttribution& attribution);

} // namespace memscope
