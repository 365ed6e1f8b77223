#include "job_commands.h"

#include "command_line.h"

#include "analysis/analysis.h"
#include "job/job_summary_writer.h"
#include "job/rank_discovery.h"
#include "job/rank_set.h"
#include "job/rank_summary.h"

#include <filesystem>
#include <fstream>
#include <iostream>

namespace memscope {

bool isJobSummary(const std::vector<std::string>& operands)
{
    if (operands.size() > 1)
        return true;
    std::error_code ec;
    return operands.size() == 1 && (std::filesystem::is_directory(operands.front(), ec) || isSummaryFileName(operands.front()));
}

int runJobSummary(const std::vector<std::string>& operands, bool json)
{
    const auto set = RankSet::open(operands);
    std::cout << (json ? jobSummaryJson(*set) : jobSummaryText(*set));
    for (const RankEntry& e : set->ranks())
        if (!e.ok())
            return 1;
    return 0;
}

int runSummarize(const std::vector<std::string>& args)
{
    const CommandLine cl(args, {.command = "summarize", .flags = {}, .options = {{"--output", "-o"}, {"--rank"}, {"--device"}}});
    const std::string file = cl.operand();
    const std::string out = cl.value("--output").value_or("");
    if (file.empty() || out.empty())
        throw UsageError(kSummarizeUsage);
    std::optional<int> rank;
    if (auto r = cl.value("--rank")) {
        size_t used = 0;
        int value = -1;
        try {
            value = std::stoi(*r, &used);
        } catch (...) {
        }
        if (used != r->size() || value < 0)
            throw UsageError("--rank takes a rank number (0, 1, …), got '" + *r + "'");
        rank = value;
    }
    rank = rank ? rank : rankFromFileName(std::filesystem::path(file).filename().string());
    AnalysisOptions options;
    options.until = AnalysisStage::Attributed;
    const auto analysis = analyze(AnalysisSource::file(file), options);
    const size_t index = analysis->deviceIndex(cl.device());
    const std::string text = rankSummaryJson(summarizeRank(*analysis, index, rank.value_or(-1)));
    if (out == "-") {
        std::cout << text;
        std::cout.flush();
        return std::cout ? 0 : 1;
    }
    std::ofstream o(out, std::ios::binary | std::ios::trunc);
    if (!o)
        throw UsageError(out + ": cannot open for writing");
    o << text;
    o.close();
    if (!o)
        throw UsageError(out + ": write failed");
    return 0;
}

} // namespace memscope
