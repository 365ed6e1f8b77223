#include "diagnose/training_measurement.h"

#include <algorithm>

namespace memscope {

namespace {

int64_t curveMax(const DeviceAttribution& a, Category c)
{
    const auto& v = a.categoryBytes[static_cast<size_t>(c)];
    int64_t m = a.categoryAtStart[static_cast<size_t>(c)];
    for (int64_t x : v)
        m = std::max(m, x);
    return m;
}

int64_t at(const DeviceAttribution& a, Category c, int64_t i)
{
    const auto& v = a.categoryBytes[static_cast<size_t>(c)];
    if (i < 0 || static_cast<size_t>(i) >= v.size())
        return a.categoryAtStart[static_cast<size_t>(c)];
    return v[static_cast<size_t>(i)];
}

} // namespace

TrainingMeasurement measureTraining(const DeviceReplay& replay, const DeviceAttribution& a)
{
    TrainingMeasurement m;
    m.parameters = curveMax(a, Category::Parameter);
    m.gradients = curveMax(a, Category::Gradient);
    m.optimizerState = curveMax(a, Category::OptimizerState);
    m.savedActivations = curveMax(a, Category::Activation);
    m.peak = replay.peakRequested.bytes;
    m.peakEvent = replay.peakRequested.event.valid() ? replay.peakRequested.event.value : -1;
    m.peakPhase = a.peakPhase;

    const int64_t n = std::min<int64_t>(replay.eventCount, static_cast<int64_t>(a.eventPhase.size()));
    for (int64_t i = 0; i < n; ++i) {
        const Phase p = a.eventPhase[static_cast<size_t>(i)];
        const int64_t req = replay.requested[static_cast<size_t>(i)];
        const bool fb = p == Phase::Forward || p == Phase::Backward;
        const bool opt = p == Phase::OptimizerStep;
        m.hasForward = m.hasForward || p == Phase::Forward;
        m.hasBackward = m.hasBackward || p == Phase::Backward;
        m.hasOptimizerStep = m.hasOptimizerStep || opt;
        if (!fb && !opt)
            continue;
        const int64_t extra = req - at(a, Category::Parameter, i) - at(a, Category::OptimizerState, i);
        if (fb) {
            if (req > m.forwardBackwardPeak) {
                m.forwardBackwardPeak = req;
                m.forwardBackwardPeakEvent = i;
            }
            m.forwardBackwardExtra = std::max(m.forwardBackwardExtra, extra);
        } else {
            if (req > m.optimizerPeak) {
                m.optimizerPeak = req;
                m.optimizerPeakEvent = i;
            }
            if (extra > m.optimizerExtra) {
                m.optimizerExtra = extra;
                m.optimizerIntermediates = std::max<int64_t>(0, extra - at(a, Category::Gradient, i));
            }
        }
    }
    return m;
}

} // namespace memscope
