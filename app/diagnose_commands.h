#pragma once

#include <string>
#include <vector>

namespace memscope {

inline constexpr char kDiagnoseUsage[] = "usage: memscope diagnose FILE [--device N] [--json]";
inline constexpr char kEstimateUsage[] =
    "usage: memscope estimate FILE [--device N] [--recorded-batch B] [--seq L] [--bytes-per-param P]\n"
    "                         [--what-if-batch B] [--what-if-seq L] [--what-if-states K]\n"
    "                         [--what-if-bytes-per-param P] [--json]";

// `memscope diagnose FILE [--device N] [--json]`: the findings of core/diagnose.
int runDiagnose(const std::vector<std::string>& args);

// `memscope estimate FILE [--device N] [--recorded-batch B] [--seq L] [--bytes-per-param P]
//  [--what-if-batch B] [--what-if-seq L] [--what-if-states K] [--what-if-bytes-per-param P] [--json]`:
// the training-memory model filled from the snapshot, predicted next to measured.
// --recorded-batch/--seq are the recorded run's (--batch: the old name of --recorded-batch, still
// accepted); the --what-if-* edits give a third column.
int runEstimate(const std::vector<std::string>& args);

} // namespace memscope
