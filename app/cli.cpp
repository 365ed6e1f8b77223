#include "cli.h"
#include "report_command.h"

#include "command_line.h"
#include "diagnose_commands.h"
#include "diff_command.h"
#include "analysis/analysis.h"
#include "common/load_error.h"
#include "common/thread_pool.h"
#include "io/allocations_csv.h"
#include "io/summary_writer.h"
#include "job_commands.h"
#include "mcp_command.h"
#include "record_command.h"
#include "replay_serve_command.h"
#include "whatif_command.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <optional>

namespace memscope {

namespace {

constexpr char kSummaryUsage[] = "usage: memscope summary FILE [--device N] [--json]\n"
                                 "       memscope summary DIR|FILE... [--json]  (a job: one snapshot or *.summary.json per rank)";
constexpr char kAllocationsUsage[] = "usage: memscope allocations FILE [--device N] --csv OUT (OUT '-' is stdout)";

} // namespace

// The one place a headless command is registered (see cli.h).
const std::vector<HeadlessCommand>& headlessCommands()
{
    static const std::vector<HeadlessCommand> commands = {
        {"summary", runSummary, kSummaryUsage, "each device's events, peaks, OOMs and truncation; each rank of a job"},
        {"summarize", runSummarize, kSummarizeUsage, "a rank's compact summary, for a job too large to gather"},
        {"allocations", runAllocations, kAllocationsUsage, "one CSV row per allocation, with its category"},
        {"diagnose", runDiagnose, kDiagnoseUsage, "what went wrong, and the fix"},
        {"estimate", runEstimate, kEstimateUsage, "the training-memory model, predicted next to measured"},
        {"report", runReport, kReportUsage, "peak_report.png/.csv, timeline.csv and report.json at the peak"},
        {"record", runRecord, kRecordUsage, "record a program, or attach to a running agent"},
        {"replay-serve", runReplayServe, kReplayServeUsage, "serve a recording over the live protocol at a fixed event rate"},
        {"whatif", runWhatIf, kWhatIfUsage, "the caching allocator replayed under other settings, capacity or batch"},
        {"diff", runDiff, kDiffUsage, "two runs compared by iteration and phase"},
        {"check", runCheck, kCheckUsage, "the memory gate for CI: fail when a peak passes a limit"},
        {"mcp", runMcp, kMcpUsage, "an MCP server on stdio: an assistant's tools over a snapshot"},
    };
    return commands;
}

namespace {

const HeadlessCommand* findCommand(const std::string& name)
{
    for (const HeadlessCommand& c : headlessCommands())
        if (name == c.name)
            return &c;
    return nullptr;
}

// `--help` or `-h` among the command's own arguments (not those of a program after "--").
bool asksForHelp(const std::vector<std::string>& args)
{
    for (const std::string& a : args) {
        if (a == "--")
            return false;
        if (a == "--help" || a == "-h")
            return true;
    }
    return false;
}

} // namespace

bool isHeadlessCommand(const std::string& name) { return findCommand(name) != nullptr; }

std::string versionText() { return std::string("memscope ") + MEMSCOPE_VERSION; }

std::string helpText(bool gui)
{
    std::string text = versionText() + ": where does a PyTorch program's GPU memory go?\n\n";
    if (gui)
        text += "usage: memscope [FILE...]                                  open snapshots in the app\n"
                "       memscope --compare A B                              compare two runs in the app\n"
                "       memscope --attach PID|SOCKET|HOST:PORT [--token T]  watch a running agent live\n"
                "       memscope COMMAND [ARGS...]                          a headless command (no display needed)\n";
    else
        text += "Built without the GUI (MEMSCOPE_BUILD_UI=OFF): the headless commands only.\n\n"
                "usage: memscope COMMAND [ARGS...]\n";
    text += "       memscope --version | --help | COMMAND --help\n\ncommands:\n";
    for (const HeadlessCommand& c : headlessCommands()) {
        std::string name = c.name;
        name.resize(std::max<size_t>(name.size() + 2, 14), ' ');
        text += "  " + name + c.summary + "\n";
    }
    text += "\nEvery command takes --threads N: the threads it uses (default: the cores available, at most 8).\n";
    text += "\nFILE: a PyTorch CUDA allocator snapshot (.pickle, .pkl, .pickle.gz, .json).\n";
    return text;
}

bool handleTopLevelOption(int argc, char** argv, bool gui, int& status)
{
    if (argc < 2)
        return false;
    const std::string a = argv[1];
    if (a == "--version" || a == "-v") {
        std::cout << versionText() << "\n";
        status = 0;
        return true;
    }
    if (a == "--help" || a == "-h" || a == "help") {
        std::cout << helpText(gui);
        status = 0;
        return true;
    }
    return false;
}

int runSummary(const std::vector<std::string>& args)
{
    const CommandLine cl(args, {.command = "summary", .flags = {"--json"}, .options = {{"--device"}}, .maxOperands = 65536});
    const std::optional<int> device = cl.device();
    const std::string file = cl.operand();
    if (file.empty())
        throw UsageError(kSummaryUsage);
    const bool json = cl.has("--json");
    if (isJobSummary(cl.operands())) {
        if (device)
            throw UsageError("--device is for one file; a job shows each rank on its own device");
        return runJobSummary(cl.operands(), json);
    }
    AnalysisOptions options;
    options.until = AnalysisStage::Replayed;
    const auto analysis = analyze(AnalysisSource::file(file), options);
    if (device)
        analysis->deviceIndex(device); // throws when it has no such device
    std::optional<int> focus;
    if (analysis->deviceCount() > 0)
        focus = analysis->replay->devices[analysis->focusDevice()].device;
    std::cout << (json ? summaryJson(*analysis->replay, device, focus) : summaryText(*analysis->replay, device, focus));
    return 0;
}

int runAllocations(const std::vector<std::string>& args)
{
    const CommandLine cl(args, {.command = "allocations", .flags = {}, .options = {{"--csv"}, {"--device"}}});
    const std::optional<int> device = cl.device();
    const std::string file = cl.operand();
    const std::string csv = cl.value("--csv").value_or("");
    if (file.empty() || csv.empty())
        throw UsageError(kAllocationsUsage);
    AnalysisOptions options;
    options.until = AnalysisStage::Attributed;
    const auto analysis = analyze(AnalysisSource::file(file), options);
    const size_t index = analysis->deviceIndex(device);
    const Attribution* attribution = analysis->attribution.get();
    if (csv == "-") {
        writeAllocationsCsv(std::cout, *attribution, index);
        std::cout.flush();
        return std::cout ? 0 : 1;
    }
    std::ofstream out(csv, std::ios::binary | std::ios::trunc);
    if (!out)
        throw UsageError(csv + ": cannot open for writing");
    writeAllocationsCsv(out, *attribution, index);
    out.close();
    if (!out)
        throw UsageError(csv + ": write failed");
    return 0;
}

int runHeadless(const std::string& name, const std::vector<std::string>& args)
{
    try {
        const HeadlessCommand* command = findCommand(name);
        if (!command) {
            std::cerr << "memscope: unknown command '" << name << "' (memscope --help lists them)\n";
            return 2;
        }
        if (asksForHelp(args)) {
            std::cout << command->usage << "\n";
            return 0;
        }
        std::vector<std::string> rest = args;
        if (const std::optional<unsigned> threads = takeThreadsOption(rest))
            setThreadCount(*threads);
        return command->run(rest);
    } catch (const UsageError& e) {
        std::cerr << "memscope " << name << ": " << e.what() << "\n";
        return 1;
    } catch (const LoadError& e) {
        std::cerr << "memscope " << name << ": " << e.what() << "\n";
        return 1;
    } catch (const std::exception& e) {
        std::cerr << "memscope " << name << ": " << e.what() << "\n";
        return 1;
    }
}

} // namespace memscope
