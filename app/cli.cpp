#include "cli.h"
#include "report_command.h"

#include "command_line.h"
#include "diagnose_commands.h"
#include "diff_command.h"
#include "analysis/analysis.h"
#include "common/load_error.h"
#include "io/allocations_csv.h"
#include "io/summary_writer.h"
#include "record_command.h"
#include "whatif_command.h"

#include <cstdio>
#include <fstream>
#include <iostream>
#include <optional>

namespace memscope {

bool isHeadlessCommand(const std::string& name)
{
    if (name == "report")
        return true;
    if (name == "record")
        return true;
    if (name == "diff" || name == "check")
        return true;
    return name == "summary" || name == "allocations" || name == "diagnose" || name == "estimate" || name == "whatif";
}

int runSummary(const std::vector<std::string>& args)
{
    const CommandLine cl(args, {.command = "summary", .flags = {"--json"}, .options = {{"--device"}}});
    const std::optional<int> device = cl.device();
    const std::string file = cl.operand();
    if (file.empty())
        throw UsageError("usage: memscope summary FILE [--device N] [--json]");
    const bool json = cl.has("--json");
    const AnalysisOptions options{.until = AnalysisStage::Replayed};
    const auto analysis = analyze(AnalysisSource::file(file), options);
    if (device)
        analysis->deviceIndex(device); // throws when it has no such device
    std::cout << (json ? summaryJson(*analysis->replay, device) : summaryText(*analysis->replay, device));
    return 0;
}

int runAllocations(const std::vector<std::string>& args)
{
    const CommandLine cl(args, {.command = "allocations", .flags = {}, .options = {{"--csv"}, {"--device"}}});
    const std::optional<int> device = cl.device();
    const std::string file = cl.operand();
    const std::string csv = cl.value("--csv").value_or("");
    if (file.empty() || csv.empty())
        throw UsageError("usage: memscope allocations FILE [--device N] --csv OUT (OUT '-' is stdout)");
    const AnalysisOptions options{.until = AnalysisStage::Attributed};
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
        if (name == "record")
            return runRecord(args);
        if (name == "summary")
            return runSummary(args);
        if (name == "report")
            return runReport(args);
        if (name == "allocations")
            return runAllocations(args);
        if (name == "diagnose")
            return runDiagnose(args);
        if (name == "estimate")
            return runEstimate(args);
        if (name == "whatif")
            return runWhatIf(args);
        if (name == "diff")
            return runDiff(args);
        if (name == "check")
            return runCheck(args);
        std::cerr << "memscope: unknown command '" << name << "'\n";
        return 2;
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
