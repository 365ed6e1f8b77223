#pragma once

#include "attribute/category.h"
#include "compare/comparison.h"
#include "query/point_report.h"

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace memscope {

/*
 * A memory gate for CI: rules on one run's peak (`memscope check`) or on the growth from a
 * baseline A to a candidate B (`memscope diff --fail-if-…`). Every figure is report.json's:
 * the global requested peak and each category's bytes at that peak.
 *
 *   --max-peak SIZE                    peak bytes <= SIZE
 *   --max-category CAT=SIZE            CAT's bytes at the peak <= SIZE
 *   --fail-if-peak-grows LIMIT         B's peak − A's peak <= LIMIT
 *   --fail-if-category-grows CAT=LIMIT B's CAT − A's CAT (at each one's peak) <= LIMIT
 *
 * SIZE: a number with B, KiB, MiB, GiB, TiB (1024) or KB, MB, GB, TB (1000), or none
 * (bytes); "1.5GiB" is rounded to the nearest byte. LIMIT: a SIZE, or a percentage of A's
 * figure ("5%"); when A's figure is 0 any growth fails a percentage. CAT: a category's
 * machine name (ACTIVATION, OPTIMIZER_STATE, …), in any case.
 */

// A rule or a size that cannot be read; the message names the argument and what was expected.
struct GateRuleError : std::invalid_argument {
    using std::invalid_argument::invalid_argument;
};

// Bytes of "40GiB", "512", "1.5 MB"; nullopt when it is not a size.
std::optional<int64_t> parseByteSize(std::string_view text);

struct GateRule {
    enum class Kind { MaxPeak, MaxCategory, PeakGrowth, CategoryGrowth };
    Kind kind = Kind::MaxPeak;
    std::optional<Category> category;
    int64_t bytes = 0; // the limit in bytes, unless `percent`
    std::optional<double> percent;
    std::string option; // "--max-peak"
    std::string text; // the argument as given: "ACTIVATION=20GiB"
    bool growth() const { return kind == Kind::PeakGrowth || kind == Kind::CategoryGrowth; }
};

// Reads one rule's argument; throws GateRuleError.
GateRule parseGateRule(GateRule::Kind kind, std::string_view option, std::string_view text);

struct GateResult {
    GateRule rule;
    bool ok = true;
    int64_t value = 0; // the figure checked: bytes at the peak, or growth in bytes
    int64_t limit = 0; // in bytes (a percentage turned into bytes of A's figure)
    int64_t base = 0; // A's figure, for growth rules
    std::string message; // "ACTIVATION at the peak 3.17 GiB > 2 GiB (--max-category ACTIVATION=2GiB)"
};

// Rules on one run's peak (growth rules are refused with GateRuleError).
std::vector<GateResult> checkPeak(const PointReport& peak, const std::vector<GateRule>& rules);
// Growth rules between the comparison's runs (A the baseline).
std::vector<GateResult> checkGrowth(const Comparison& comparison, const std::vector<GateRule>& rules);

bool allPass(const std::vector<GateResult>& results);
// The failed rules' messages joined by "; " on one line ("" when all hold).
std::string failureLine(const std::vector<GateResult>& results);
// [{"rule": "--max-peak", "argument": "40GiB", "ok": true, "value": …, "limit": …, "base": …, "message": …}]
std::string gateResultsJson(const std::vector<GateResult>& results);
// `memscope check --json`: file, device, peak (report.json's "peak" object), pass, rules.
std::string checkJson(const Attribution& attribution, const PointReport& peak, const std::vector<GateResult>& results);

} // namespace memscope
