#pragma once

#include <string>
#include <vector>

namespace memscope {

inline constexpr char kDiagnoseUsage[] = "usage: memscope diagnose FILE [--device N] [--json]";
inline constexpr char kEstimateUsage[] =
    "usage: memscope estimate FILE [--device N] [--recorded-batch B] [--recorded-seq L] [--bytes-per-param P]\n"
    "                         [--recorded-precision P] [--recorded-optimizer O]\n"
    "                         [--what-if-batch B] [--what-if-seq L] [--checkpoint all|N] [--precision P]\n"
    "                         [--optimizer O] [--accumulate K] [--what-if-states K] [--what-if-bytes-per-param P]\n"
    "                         [--json]";

// `memscope diagnose FILE [--device N] [--json]`: the findings of core/diagnose.
int runDiagnose(const std::vector<std::string>& args);

// `memscope estimate FILE [--device N] [--recorded-batch B] [--seq L] [--bytes-per-param P]
//  [--what-if-batch B] [--what-if-seq L] [--what-if-states K] [--what-if-bytes-per-param P] [--json]`:
// the training-memory model filled from the snapshot, predicted next to measured.
// --recorded-batch/--recorded-seq are the recorded run's (--batch, --seq: their old names, still
// accepted). The what-if options are `memscope whatif`'s changes (--what-if-batch/--what-if-seq
// its --batch/--seq, --what-if-bytes-per-param 4|2 its --precision fp32|bf16, --what-if-states
// 2|1|0 its --optimizer adamw|sgd-momentum|sgd): the formula's third column under them, and
// the same changes replayed through the allocator model, as whatif prints them.
int runEstimate(const std::vector<std::string>& args);

} // namespace memscope
