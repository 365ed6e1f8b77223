#pragma once

#include <string>
#include <vector>

namespace memscope {

// True when `memscope summary` was given a job: several files, a folder or a *.summary.json.
bool isJobSummary(const std::vector<std::string>& operands);
// memscope summary DIR|FILE… [--json]: every rank's figures (core/job/job_summary_writer.h).
int runJobSummary(const std::vector<std::string>& operands, bool json);
// memscope summarize FILE [--rank R] -o OUT: the compact summary a node writes for its rank.
int runSummarize(const std::vector<std::string>& args);
inline constexpr char kSummarizeUsage[] = "usage: memscope summarize FILE [--rank R] [--device N] -o OUT (OUT '-' is stdout; "
                                          "the job's folder of *.summary.json opens with memscope summary DIR)";

} // namespace memscope
