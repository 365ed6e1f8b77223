#pragma once

#include "attribute/attribution.h"

#include <array>
#include <span>
#include <string>
#include <vector>

namespace memscope {

// One row of a labelled run's NAME.labels.csv (t_us,ptr,nbytes,label).
struct OracleLabel {
    int64_t timeUs = 0;
    uint64_t ptr = 0;
    uint64_t bytes = 0;
    Category category = Category::Intermediate;
};

// Reads NAME.labels.csv; throws LoadError (file, line) on a malformed row.
std::vector<OracleLabel> readOracleLabels(const std::string& path);

/*
 * The exact category of every allocation of a device (indexed by AllocationId), by the join
 * rule of samples/RECORDING.md: a label (t, ptr) belongs to the allocation at ptr whose alloc
 * came last at or before t + 200 us (a block alive before the trace counts as allocated at
 * the beginning of time); several labels resolve in the order PARAMETER, OPTIMIZER_STATE,
 * GRADIENT, INPUT, ACTIVATION; no label means INTERMEDIATE.
 */
std::vector<Category> joinOracleLabels(const Snapshot& snapshot, const DeviceReplay& device, std::span<const OracleLabel> labels);

// How far an attribution agrees with the oracle.
struct OracleAgreement {
    int64_t peakEvent = -1;
    int64_t peakBytes = 0;
    // At the requested peak: sum over categories of min(ours, oracle) / live bytes.
    double atPeak = 0;
    // Share of size x lifetime (microseconds; events) whose category is the oracle's.
    double lifetimeTime = 0;
    double lifetimeEvents = 0;
    // Bytes live at the peak, [oracle][ours]; size x lifetime (us), [oracle][ours].
    std::array<std::array<int64_t, kCategoryCount>, kCategoryCount> peakConfusion{};
    std::array<std::array<double, kCategoryCount>, kCategoryCount> lifetimeConfusion{};

    // A table of both confusions, for a test's output.
    std::string report() const;
};

OracleAgreement compareWithOracle(const Snapshot& snapshot, const DeviceReplay& device, const DeviceAttribution& attribution,
                                  const std::vector<Category>& oracle);

} // namespace memscope
