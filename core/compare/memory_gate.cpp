#include "compare/memory_gate.h"

#include "common/format_bytes.h"
#include "io/report_json_writer.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <sstream>

namespace memscope {

namespace {

std::string trim(std::string_view s)
{
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())))
        s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
        s.remove_suffix(1);
    return std::string(s);
}

std::string lower(std::string s)
{
    for (char& ch : s)
        ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    return s;
}

std::string upper(std::string s)
{
    for (char& ch : s)
        ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    return s;
}

// A finite number >= 0 that fills `text`.
std::optional<double> number(std::string_view text)
{
    if (text.empty() || text.front() == '-' || text.front() == '+')
        return std::nullopt;
    double v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(v) || v < 0)
        return std::nullopt;
    return v;
}

std::string categoryList()
{
    std::string out;
    for (Category c : kAllCategories) {
        if (!out.empty())
            out += ", ";
        out += categoryName(c);
    }
    return out;
}

std::string ruleText(const GateRule& r) { return r.option + " " + r.text; }

std::string limitText(const GateRule& r, int64_t limit)
{
    if (r.percent) {
        std::ostringstream s;
        s << *r.percent << "% (" << formatBytes(limit) << ")";
        return s.str();
    }
    return formatBytes(limit);
}

std::string signedBytes(int64_t b) { return (b >= 0 ? "+" : "-") + formatBytes(b >= 0 ? b : -b); }

} // namespace

std::optional<int64_t> parseByteSize(std::string_view text)
{
    const std::string t = trim(text);
    size_t unitAt = t.size();
    while (unitAt > 0 && std::isalpha(static_cast<unsigned char>(t[unitAt - 1])))
        --unitAt;
    const std::optional<double> v = number(trim(std::string_view(t).substr(0, unitAt)));
    if (!v)
        return std::nullopt;
    const std::string unit = lower(t.substr(unitAt));
    static const std::pair<const char*, double> kUnits[] = {
        {"", 1},     {"b", 1},    {"kib", 1024.0}, {"mib", 1048576.0}, {"gib", 1073741824.0}, {"tib", 1099511627776.0},
        {"kb", 1e3}, {"mb", 1e6}, {"gb", 1e9},     {"tb", 1e12}};
    for (const auto& [name, scale] : kUnits)
        if (unit == name) {
            const double bytes = std::round(*v * scale);
            if (bytes > 9.2e18)
                return std::nullopt;
            return static_cast<int64_t>(bytes);
        }
    return std::nullopt;
}

GateRule parseGateRule(GateRule::Kind kind, std::string_view option, std::string_view text)
{
    GateRule r;
    r.kind = kind;
    r.option = std::string(option);
    r.text = std::string(text);
    std::string_view limit = text;
    if (kind == GateRule::Kind::MaxCategory || kind == GateRule::Kind::CategoryGrowth) {
        const size_t eq = text.find('=');
        if (eq == std::string_view::npos)
            throw GateRuleError(r.option + " takes CATEGORY=" + (r.growth() ? "LIMIT" : "SIZE") + ", got '" + r.text + "'");
        const std::string name = upper(trim(text.substr(0, eq)));
        r.category = categoryFromName(name);
        if (!r.category)
            throw GateRuleError(r.option + ": unknown category '" + trim(text.substr(0, eq)) + "' (one of " + categoryList() +
                                ")");
        limit = text.substr(eq + 1);
    }
    const std::string l = trim(limit);
    if (r.growth() && !l.empty() && l.back() == '%') {
        r.percent = number(trim(std::string_view(l).substr(0, l.size() - 1)));
        if (!r.percent)
            throw GateRuleError(r.option + ": '" + l + "' is not a percentage (5%, 12.5%)");
        return r;
    }
    const std::optional<int64_t> bytes = parseByteSize(l);
    if (!bytes)
        throw GateRuleError(r.option + ": '" + l + "' is not a size (a number with B, KiB, MiB, GiB, KB, MB or GB" +
                            (r.growth() ? ", or a percentage such as 5%)" : ")"));
    r.bytes = *bytes;
    return r;
}

std::vector<GateResult> checkPeak(const PointReport& peak, const std::vector<GateRule>& rules)
{
    std::vector<GateResult> out;
    for (const GateRule& rule : rules) {
        if (rule.growth())
            throw GateRuleError(rule.option + " compares two runs: use it with memscope diff");
        GateResult g;
        g.rule = rule;
        g.limit = rule.bytes;
        std::string what;
        if (rule.kind == GateRule::Kind::MaxPeak) {
            g.value = peak.requested;
            what = "peak";
        } else {
            g.value = peak.byCategory[static_cast<size_t>(*rule.category)];
            what = std::string(categoryName(*rule.category)) + " at the peak";
        }
        g.ok = g.value <= g.limit;
        g.message = what + " " + formatBytes(g.value) + (g.ok ? " <= " : " > ") + formatBytes(g.limit) + " (" + ruleText(rule) +
                    ")";
        out.push_back(std::move(g));
    }
    return out;
}

std::vector<GateResult> checkGrowth(const Comparison& comparison, const std::vector<GateRule>& rules)
{
    std::vector<GateResult> out;
    for (const GateRule& rule : rules) {
        if (!rule.growth())
            throw GateRuleError(rule.option + " checks one run: use it with memscope check");
        GateResult g;
        g.rule = rule;
        std::string what;
        if (rule.kind == GateRule::Kind::PeakGrowth) {
            g.base = comparison.a().peak.requested;
            g.value = comparison.peakDelta();
            what = "peak";
        } else {
            const size_t c = static_cast<size_t>(*rule.category);
            g.base = comparison.a().peak.byCategory[c];
            g.value = comparison.categoryDelta(*rule.category);
            what = std::string(categoryName(*rule.category)) + " at the peak";
        }
        if (rule.percent) {
            g.limit = static_cast<int64_t>(std::floor(static_cast<double>(g.base) * *rule.percent / 100.0));
            // Integer bytes against a fraction: value > base·p/100 exactly, without rounding the limit.
            g.ok = static_cast<long double>(g.value) * 100.0L <= static_cast<long double>(g.base) * *rule.percent;
        } else {
            g.limit = rule.bytes;
            g.ok = g.value <= g.limit;
        }
        g.message = what + " grew " + signedBytes(g.value) + " from " + formatBytes(g.base) + (g.ok ? ", within " : ", over ") +
                    limitText(rule, g.limit) + " (" + ruleText(rule) + ")";
        out.push_back(std::move(g));
    }
    return out;
}

bool allPass(const std::vector<GateResult>& results)
{
    return std::all_of(results.begin(), results.end(), [](const GateResult& g) { return g.ok; });
}

std::string failureLine(const std::vector<GateResult>& results)
{
    std::string out;
    for (const GateResult& g : results)
        if (!g.ok)
            out += (out.empty() ? "" : "; ") + g.message;
    return out;
}

std::string gateResultsJson(const std::vector<GateResult>& results)
{
    nlohmann::ordered_json arr = nlohmann::ordered_json::array();
    for (const GateResult& g : results) {
        nlohmann::ordered_json j;
        j["rule"] = g.rule.option;
        j["argument"] = g.rule.text;
        if (g.rule.category)
            j["category"] = categoryName(*g.rule.category);
        j["ok"] = g.ok;
        j["value"] = g.value;
        j["limit"] = g.limit;
        if (g.rule.percent)
            j["percent"] = *g.rule.percent;
        if (g.rule.growth())
            j["base"] = g.base;
        j["message"] = g.message;
        arr.push_back(std::move(j));
    }
    return arr.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

std::string checkJson(const Attribution& attribution, const PointReport& peak, const std::vector<GateResult>& results)
{
    nlohmann::ordered_json root;
    root["file"] = attribution.replay->snapshot->path;
    root["device"] = peak.device;
    root["peak"] = nlohmann::ordered_json::parse(reportPointJson(attribution, peak));
    root["pass"] = allPass(results);
    root["rules"] = nlohmann::ordered_json::parse(gateResultsJson(results));
    return root.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

} // namespace memscope
