#pragma once

#include "compare/comparison.h"

#include <ostream>
#include <string>

namespace memscope {

/*
 * `memscope diff` output, and the comparison tab's exports.
 *
 * JSON (comparisonJson):
 *   a, b         file, device, events, iterations, peak (report.json's "peak" object of that
 *                file, field for field), peak_position (on the normalised axis), phases
 *                {forward: {bytes, event_index, iteration, by_category} | null, …},
 *                allocated_by_phase {forward: {PARAMETER: bytes, …}, …} (allocated over the trace)
 *   delta        bytes, by_category (B − A at each run's peak), peak_phase {a, b},
 *                phases {forward: {bytes, by_category} | null (absent in a run), …},
 *                allocated_by_phase (B − A)
 *   call_sites   at_peak: the sites whose bytes at the peak changed most, each with change
 *                (added, removed, grown, shrunk), bytes_a, bytes_b, delta, count_a, count_b,
 *                matched (allocations paired by size), category, top_frame, op, module, stack;
 *                by_lifetime: the same fields with byte_iterations_a/_b/delta, largest |delta| first
 *   gate         when rules are given: the rules' results (gateResultsJson) and pass
 *
 * Table CSV (writeComparisonCsv), one row per figure, RFC 4180 quoted:
 *   section,name,phase_a,phase_b,a,b,delta
 *   section: peak, category, phase_peak, allocated (name: a category, phase: where it was
 *   allocated), call_site (bytes at the peak), call_site_lifetime (byte-iterations)
 *
 * Curves CSV (writeComparisonCurvesCsv), one row per bin of the normalised axis:
 *   x,a_total,b_total,delta_total,a_PARAMETER,…,b_PARAMETER,…,delta_PARAMETER,…
 */
struct ComparisonWriteOptions {
    size_t callSites = 15; // rows of each call-site table (text and JSON)
    std::string gateJson; // gateResultsJson(...), "" when no rule was given
    bool gatePass = true;
};

std::string comparisonText(const Comparison& comparison, const ComparisonWriteOptions& options = {});
std::string comparisonJson(const Comparison& comparison, const ComparisonWriteOptions& options = {});
void writeComparisonCsv(std::ostream& out, const Comparison& comparison);
void writeComparisonCurvesCsv(std::ostream& out, const Comparison& comparison);

} // namespace memscope
