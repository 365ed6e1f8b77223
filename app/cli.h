#pragma once

#include <string>
#include <vector>

namespace memscope {

// Headless subcommands. Each returns the process exit status; errors go to stderr.
int runSummary(const std::vector<std::string>& args);
// memscope allocations FILE [--device N] --csv OUT: one row per allocation with its category.
int runAllocations(const std::vector<std::string>& args);

// True when argv names a headless subcommand.
bool isHeadlessCommand(const std::string& name);
int runHeadless(const std::string& name, const std::vector<std::string>& args);

} // namespace memscope
