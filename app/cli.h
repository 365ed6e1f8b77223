#pragma once

#include <string>
#include <vector>

namespace memscope {

/*
 * The headless commands: Qt-free (the memscope_cli library), compiled into both builds of
 * memscope, the GUI one and the one configured with -DMEMSCOPE_BUILD_UI=OFF. Each returns
 * the process exit status and writes its errors to stderr.
 *
 * A new command is one row of the table in cli.cpp (name, function, usage, one line of
 * help) and its .cpp in memscope_cli's sources (app/CMakeLists.txt); dispatch,
 * `memscope NAME --help` and `memscope --help` all read that row (docs/memscope.1.in
 * describes each command by hand).
 */
using HeadlessRun = int (*)(const std::vector<std::string>& args);

struct HeadlessCommand {
    const char* name;
    HeadlessRun run;
    const char* usage; // "usage: memscope NAME …", shown by `memscope NAME --help`
    const char* summary; // one line for `memscope --help`
};

const std::vector<HeadlessCommand>& headlessCommands();

int runSummary(const std::vector<std::string>& args);
// memscope allocations FILE [--device N] --csv OUT: one row per allocation with its category.
int runAllocations(const std::vector<std::string>& args);

// True when argv names a headless subcommand.
bool isHeadlessCommand(const std::string& name);
// Runs it; `memscope NAME --help` (or -h) prints its usage.
int runHeadless(const std::string& name, const std::vector<std::string>& args);

// "memscope 0.1.0" (agent/memscope_agent/VERSION).
std::string versionText();
// `memscope --help`: the GUI's arguments when `gui`, then every headless command.
std::string helpText(bool gui);
// The top-level options both builds answer without starting Qt: --help/-h and --version/-v.
// Returns true and sets `status` when argv[1] was one of them.
bool handleTopLevelOption(int argc, char** argv, bool gui, int& status);

} // namespace memscope
