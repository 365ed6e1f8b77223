#include "diff_command.h"

#include "command_line.h"

#include "analysis/analysis.h"
#include "common/format_bytes.h"
#include "common/load_error.h"
#include "compare/comparison.h"
#include "compare/comparison_writer.h"
#include "compare/memory_gate.h"

#include <functional>
#include <future>
#include <iostream>
#include <optional>
#include <stdexcept>

namespace memscope {

namespace {

// Usage and input errors exit 2; a rule that fails exits 1. Every message is one line.
int guarded(const char* command, const std::function<int()>& body)
{
    try {
        return body();
    } catch (const LoadError& e) {
        std::cerr << "memscope " << command << ": " << e.what() << "\n";
    } catch (const std::exception& e) {
        std::cerr << "memscope " << command << ": " << e.what() << "\n";
    }
    return 2;
}

std::shared_ptr<const Analysis> load(const std::string& file)
{
    // Attributed is all a comparison needs; the detectors are not run.
    return analyze(AnalysisSource::file(file), {.load = {}, .until = AnalysisStage::Attributed});
}

int gateExit(const char* command, const std::vector<GateResult>& results)
{
    if (allPass(results))
        return 0;
    std::cerr << "memscope " << command << ": FAIL: " << failureLine(results) << "\n";
    return 1;
}

} // namespace

int runDiff(const std::vector<std::string>& args)
{
    return guarded("diff", [&] {
        const CommandLine cl(args, {.command = "diff",
                                    .flags = {"--json", "--csv", "--help", "-h"},
                                    .options = {{"--device"}, {"--fail-if-peak-grows"}, {"--fail-if-category-grows"}},
                                    .maxOperands = 2});
        if (cl.has("--help") || cl.has("-h")) {
            std::cout << kDiffUsage << "\n";
            return 0;
        }
        const std::optional<int> device = cl.device();
        if (cl.operands().size() != 2)
            throw UsageError(kDiffUsage);
        if (cl.has("--json") && cl.has("--csv"))
            throw UsageError("give --json or --csv, not both");
        std::vector<GateRule> rules;
        for (const std::string& v : cl.values("--fail-if-peak-grows"))
            rules.push_back(parseGateRule(GateRule::Kind::PeakGrowth, "--fail-if-peak-grows", v));
        for (const std::string& v : cl.values("--fail-if-category-grows"))
            rules.push_back(parseGateRule(GateRule::Kind::CategoryGrowth, "--fail-if-category-grows", v));

        // The two files load at once, on two threads.
        auto pending = std::async(std::launch::async, [&] { return load(cl.operands()[0]); });
        const auto b = load(cl.operands()[1]);
        const auto a = pending.get();
        const auto comparison = compareRuns(a, b, {.device = device});
        const std::vector<GateResult> results = checkGrowth(*comparison, rules);
        ComparisonWriteOptions options;
        if (!rules.empty()) {
            options.gateJson = gateResultsJson(results);
            options.gatePass = allPass(results);
        }
        if (cl.has("--json")) {
            std::cout << comparisonJson(*comparison, options);
        } else if (cl.has("--csv")) {
            writeComparisonCsv(std::cout, *comparison);
        } else {
            std::cout << comparisonText(*comparison, options);
            if (!results.empty()) {
                std::cout << "\nGate\n";
                for (const GateResult& g : results)
                    std::cout << "  " << (g.ok ? "ok    " : "FAIL  ") << g.message << "\n";
            }
        }
        std::cout.flush();
        return gateExit("diff", results);
    });
}

int runCheck(const std::vector<std::string>& args)
{
    return guarded("check", [&] {
        const CommandLine cl(args, {.command = "check",
                                    .flags = {"--json", "--help", "-h"},
                                    .options = {{"--device"}, {"--max-peak"}, {"--max-category"}}});
        if (cl.has("--help") || cl.has("-h")) {
            std::cout << kCheckUsage << "\n";
            return 0;
        }
        const std::optional<int> device = cl.device();
        const std::string file = cl.operand();
        if (file.empty())
            throw UsageError(kCheckUsage);
        std::vector<GateRule> rules;
        for (const std::string& v : cl.values("--max-peak"))
            rules.push_back(parseGateRule(GateRule::Kind::MaxPeak, "--max-peak", v));
        for (const std::string& v : cl.values("--max-category"))
            rules.push_back(parseGateRule(GateRule::Kind::MaxCategory, "--max-category", v));
        if (rules.empty())
            throw UsageError("check needs a rule: --max-peak SIZE or --max-category CATEGORY=SIZE");

        const auto analysis = load(file);
        const size_t index = analysis->deviceIndex(device);
        const DeviceReplay& d = analysis->replay->devices.at(index);
        const PointReport peak = buildPointReport(*analysis->attribution, index, peakEvent(d));
        const std::vector<GateResult> results = checkPeak(peak, rules);
        if (cl.has("--json")) {
            std::cout << checkJson(*analysis->attribution, peak, results);
        } else {
            std::cout << file << ", device " << d.device << ": peak " << formatBytes(peak.requested) << " ("
                      << phaseName(peak.phase);
            if (peak.iteration >= 0)
                std::cout << ", iteration " << peak.iteration;
            std::cout << ")\n";
            for (const GateResult& g : results)
                std::cout << "  " << (g.ok ? "ok    " : "FAIL  ") << g.message << "\n";
        }
        std::cout.flush();
        return gateExit("check", results);
    });
}

} // namespace memscope
