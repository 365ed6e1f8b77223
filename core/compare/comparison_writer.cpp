#include "compare/comparison_writer.h"
#include "common/format_number.h"

#include "common/format_bytes.h"
#include "io/csv_field.h"
#include "io/report_json_writer.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <sstream>

namespace memscope {

namespace {

using Json = nlohmann::ordered_json;

Json byCategory(const std::array<int64_t, kCategoryCount>& bytes)
{
    Json j = Json::object();
    for (Category c : kAllCategories)
        j[std::string(categoryName(c))] = bytes[static_cast<size_t>(c)];
    return j;
}

std::array<int64_t, kCategoryCount> minus(const std::array<int64_t, kCategoryCount>& b,
                                          const std::array<int64_t, kCategoryCount>& a)
{
    std::array<int64_t, kCategoryCount> d{};
    for (size_t c = 0; c < kCategoryCount; ++c)
        d[c] = b[c] - a[c];
    return d;
}

Json runJson(const ComparedRun& r)
{
    Json j;
    j["file"] = r.name;
    j["device"] = r.device;
    j["events"] = r.events;
    j["iterations"] = r.iterations;
    j["peak"] = Json::parse(reportPointJson(*r.analysis->attribution, r.peak));
    j["peak_position"] = r.peakPosition;
    Json phases = Json::object();
    for (Phase p : kAllPhases) {
        const PhasePeak& pp = r.phases[static_cast<size_t>(p)];
        if (!pp.present) {
            phases[std::string(phaseName(p))] = nullptr;
            continue;
        }
        Json q;
        q["bytes"] = pp.bytes;
        q["event_index"] = pp.event;
        q["iteration"] = pp.iteration >= 0 ? pp.iteration + 1 : -1; // from 1, as report.json
        q["by_category"] = byCategory(pp.byCategory);
        phases[std::string(phaseName(p))] = std::move(q);
    }
    j["phases"] = std::move(phases);
    Json allocated = Json::object();
    for (Phase p : kAllPhases)
        allocated[std::string(phaseName(p))] = byCategory(r.allocated[static_cast<size_t>(p)]);
    j["allocated_by_phase"] = std::move(allocated);
    return j;
}

Json siteJson(const CallSiteDelta& s, bool lifetime)
{
    Json j;
    j["change"] = siteChangeName(s.change);
    j["category"] = categoryName(s.category);
    j["bytes_a"] = s.bytesA;
    j["bytes_b"] = s.bytesB;
    j["delta"] = s.delta();
    j["count_a"] = s.countA;
    j["count_b"] = s.countB;
    j["matched"] = s.matched;
    if (lifetime) {
        j["byte_iterations_a"] = s.byteIterationsA;
        j["byte_iterations_b"] = s.byteIterationsB;
        j["byte_iterations_delta"] = s.lifetimeDelta();
    }
    j["top_frame"] = s.topFrame;
    j["op"] = s.op;
    j["module"] = s.module;
    j["stack"] = s.summary;
    return j;
}

std::string signedBytes(int64_t b)
{
    if (b == 0)
        return "0 B";
    return (b > 0 ? "+" : "-") + formatBytes(b > 0 ? b : -b);
}

std::string pad(std::string s, size_t width, bool right = false)
{
    // Width in characters: UTF-8 continuation bytes take no column.
    size_t chars = 0;
    for (char ch : s)
        chars += (static_cast<unsigned char>(ch) & 0xC0) != 0x80;
    if (chars >= width)
        return s;
    const std::string fill(width - chars, ' ');
    return right ? fill + s : s + fill;
}

std::string where(Phase phase, int iteration)
{
    std::string out(phaseName(phase));
    if (iteration >= 0)
        out += ", iteration " + std::to_string(iteration);
    return out;
}

std::string percent(int64_t delta, int64_t base)
{
    if (base == 0)
        return delta == 0 ? "" : "(new)";
    const double p = 100.0 * static_cast<double>(delta) / static_cast<double>(base);
    return std::string("(") + (p >= 0 ? "+" : "") + formatFixed(p, 1) + "%)";
}

std::string byteIterations(double v) { return formatBytes(static_cast<int64_t>(std::llround(v))) + "·it"; }

} // namespace

std::string comparisonText(const Comparison& c, const ComparisonWriteOptions& options)
{
    std::ostringstream o;
    const ComparedRun& a = c.a();
    const ComparedRun& b = c.b();
    o << "A  " << a.name << ", device " << a.device << ": " << a.events << " events, " << a.iterations << " iterations\n";
    o << "B  " << b.name << ", device " << b.device << ": " << b.events << " events, " << b.iterations << " iterations\n\n";

    o << "Peak (requested)\n";
    o << "  A  " << pad(formatBytes(a.peak.requested), 12, true) << "  " << where(a.peak.phase, a.peak.iteration) << "\n";
    o << "  B  " << pad(formatBytes(b.peak.requested), 12, true) << "  " << where(b.peak.phase, b.peak.iteration) << "\n";
    o << "  Δ  " << pad(signedBytes(c.peakDelta()), 12, true) << "  " << percent(c.peakDelta(), a.peak.requested);
    if (a.peak.phase != b.peak.phase)
        o << "  the peak moved from " << phaseName(a.peak.phase) << " to " << phaseName(b.peak.phase);
    o << "\n\n";

    o << "At the peak, by category\n";
    o << "  " << pad("", 18) << pad("A", 12, true) << pad("B", 12, true) << pad("B - A", 14, true) << "\n";
    for (Category cat : kAllCategories) {
        const size_t i = static_cast<size_t>(cat);
        const int64_t va = a.peak.byCategory[i], vb = b.peak.byCategory[i];
        if (va == 0 && vb == 0)
            continue;
        o << "  " << pad(std::string(categoryLabel(cat)), 18) << pad(formatBytes(va), 12, true) << pad(formatBytes(vb), 12, true)
          << pad(signedBytes(vb - va), 14, true) << "  " << percent(vb - va, va) << "\n";
    }
    o << "\n";

    o << "Peak of each phase\n";
    o << "  " << pad("", 16) << pad("A", 12, true) << pad("B", 12, true) << pad("B - A", 14, true) << "\n";
    for (Phase p : kAllPhases) {
        const PhasePeak& pa = a.phases[static_cast<size_t>(p)];
        const PhasePeak& pb = b.phases[static_cast<size_t>(p)];
        if (!pa.present && !pb.present)
            continue;
        o << "  " << pad(std::string(phaseLabel(p)), 16) << pad(pa.present ? formatBytes(pa.bytes) : "—", 12, true)
          << pad(pb.present ? formatBytes(pb.bytes) : "—", 12, true)
          << pad(pa.present && pb.present ? signedBytes(pb.bytes - pa.bytes) : "", 14, true) << "\n";
    }
    o << "\n";

    o << "Allocated in each phase (all iterations), by category, B - A\n";
    for (Phase p : kAllPhases) {
        const size_t pi = static_cast<size_t>(p);
        const int64_t ta = a.allocatedIn(p), tb = b.allocatedIn(p);
        if (ta == 0 && tb == 0)
            continue;
        o << "  " << pad(std::string(phaseLabel(p)), 16) << pad(formatBytes(ta), 12, true) << pad(formatBytes(tb), 12, true)
          << pad(signedBytes(tb - ta), 14, true) << " ";
        for (Category cat : kAllCategories) {
            const int64_t d = b.allocated[pi][static_cast<size_t>(cat)] - a.allocated[pi][static_cast<size_t>(cat)];
            if (d != 0)
                o << "  " << categoryName(cat) << " " << signedBytes(d);
        }
        o << "\n";
    }
    o << "\n";

    auto siteLine = [&](const CallSiteDelta& s, bool lifetime) {
        o << "  " << pad(siteChangeName(s.change), 8)
          << pad(lifetime ? byteIterations(s.lifetimeDelta()) : signedBytes(s.delta()), 14, true) << "  "
          << pad(std::string(categoryName(s.category)), 16) << (s.summary.empty() ? s.topFrame : s.summary);
        if (!lifetime && (s.countA || s.countB))
            o << "  [" << s.countA << " → " << s.countB << ", " << s.matched << " same size]";
        o << "\n";
    };
    o << "Call sites at the peak, by change in bytes\n";
    size_t shown = 0;
    for (const CallSiteDelta& s : c.sites) {
        if (shown == options.callSites || s.delta() == 0)
            break;
        siteLine(s, false);
        ++shown;
    }
    if (!shown)
        o << "  (no change)\n";
    o << "\nCall sites by bytes × lifetime (byte-iterations on the aligned axis)\n";
    shown = 0;
    for (size_t i : c.sitesByLifetime()) {
        const CallSiteDelta& s = c.sites[i];
        if (shown == options.callSites || std::llround(s.lifetimeDelta()) == 0)
            break;
        siteLine(s, true);
        ++shown;
    }
    if (!shown)
        o << "  (no change)\n";
    return o.str();
}

std::string comparisonJson(const Comparison& c, const ComparisonWriteOptions& options)
{
    Json root;
    root["a"] = runJson(c.a());
    root["b"] = runJson(c.b());
    Json delta;
    delta["bytes"] = c.peakDelta();
    delta["by_category"] = byCategory(minus(c.b().peak.byCategory, c.a().peak.byCategory));
    delta["peak_phase"] = {{"a", phaseName(c.a().peak.phase)}, {"b", phaseName(c.b().peak.phase)}};
    Json phases = Json::object();
    for (Phase p : kAllPhases) {
        const PhasePeak& pa = c.a().phases[static_cast<size_t>(p)];
        const PhasePeak& pb = c.b().phases[static_cast<size_t>(p)];
        if (!pa.present || !pb.present) {
            phases[std::string(phaseName(p))] = nullptr;
            continue;
        }
        phases[std::string(phaseName(p))] = {{"bytes", pb.bytes - pa.bytes},
                                             {"by_category", byCategory(minus(pb.byCategory, pa.byCategory))}};
    }
    delta["phases"] = std::move(phases);
    Json allocated = Json::object();
    for (Phase p : kAllPhases) {
        const size_t pi = static_cast<size_t>(p);
        allocated[std::string(phaseName(p))] = byCategory(minus(c.b().allocated[pi], c.a().allocated[pi]));
    }
    delta["allocated_by_phase"] = std::move(allocated);
    root["delta"] = std::move(delta);

    Json atPeak = Json::array();
    for (const CallSiteDelta& s : c.sites) {
        if (atPeak.size() == options.callSites || s.delta() == 0)
            break;
        atPeak.push_back(siteJson(s, false));
    }
    Json byLifetime = Json::array();
    for (size_t i : c.sitesByLifetime()) {
        const CallSiteDelta& s = c.sites[i];
        if (byLifetime.size() == options.callSites || std::llround(s.lifetimeDelta()) == 0)
            break;
        byLifetime.push_back(siteJson(s, true));
    }
    root["call_sites"] = {{"at_peak", std::move(atPeak)}, {"by_lifetime", std::move(byLifetime)}};
    if (!options.gateJson.empty())
        root["gate"] = {{"pass", options.gatePass}, {"rules", Json::parse(options.gateJson)}};
    return root.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

void writeComparisonCsv(std::ostream& out, const Comparison& c)
{
    const ComparedRun& a = c.a();
    const ComparedRun& b = c.b();
    out << "section,name,phase_a,phase_b,a,b,delta\n";
    auto row = [&](std::string_view section, std::string_view name, std::string_view pa, std::string_view pb,
                   const std::string& va, const std::string& vb, const std::string& d) {
        out << section << ',' << csvField(name) << ',' << pa << ',' << pb << ',' << va << ',' << vb << ',' << d << '\n';
    };
    row("peak", "requested", phaseName(a.peak.phase), phaseName(b.peak.phase), std::to_string(a.peak.requested),
        std::to_string(b.peak.requested), std::to_string(c.peakDelta()));
    for (Category cat : kAllCategories) {
        const size_t i = static_cast<size_t>(cat);
        row("category", categoryName(cat), phaseName(a.peak.phase), phaseName(b.peak.phase), std::to_string(a.peak.byCategory[i]),
            std::to_string(b.peak.byCategory[i]), std::to_string(c.categoryDelta(cat)));
    }
    for (Phase p : kAllPhases) {
        const PhasePeak& pa = a.phases[static_cast<size_t>(p)];
        const PhasePeak& pb = b.phases[static_cast<size_t>(p)];
        if (!pa.present && !pb.present)
            continue;
        row("phase_peak", phaseName(p), phaseName(p), phaseName(p), pa.present ? std::to_string(pa.bytes) : "",
            pb.present ? std::to_string(pb.bytes) : "", pa.present && pb.present ? std::to_string(pb.bytes - pa.bytes) : "");
    }
    for (Phase p : kAllPhases) {
        const size_t pi = static_cast<size_t>(p);
        for (Category cat : kAllCategories) {
            const int64_t va = a.allocated[pi][static_cast<size_t>(cat)], vb = b.allocated[pi][static_cast<size_t>(cat)];
            if (va || vb)
                row("allocated", categoryName(cat), phaseName(p), phaseName(p), std::to_string(va), std::to_string(vb),
                    std::to_string(vb - va));
        }
    }
    for (const CallSiteDelta& s : c.sites)
        if (s.countA || s.countB)
            row("call_site", s.summary.empty() ? s.topFrame : s.summary, "", "", std::to_string(s.bytesA),
                std::to_string(s.bytesB), std::to_string(s.delta()));
    for (size_t i : c.sitesByLifetime()) {
        const CallSiteDelta& s = c.sites[i];
        row("call_site_lifetime", s.summary.empty() ? s.topFrame : s.summary, "", "", formatFixed(s.byteIterationsA, 0),
            formatFixed(s.byteIterationsB, 0), formatFixed(s.lifetimeDelta(), 0));
    }
}

void writeComparisonCurvesCsv(std::ostream& out, const Comparison& c)
{
    const AlignedCurves& k = c.curves;
    out << "x,a_total,b_total,delta_total";
    for (const char* side : {"a_", "b_", "delta_"})
        for (Category cat : kAllCategories)
            out << ',' << side << categoryName(cat);
    out << '\n';
    for (size_t i = 0; i < k.bins; ++i) {
        out << formatFixed(k.x(i), 4) << ',' << k.total[0][i] << ',' << k.total[1][i] << ',' << k.deltaTotal(i);
        for (size_t side = 0; side < 2; ++side)
            for (size_t cat = 0; cat < kCategoryCount; ++cat)
                out << ',' << k.byCategory[side][cat][i];
        for (Category cat : kAllCategories)
            out << ',' << k.deltaCategory(cat, i);
        out << '\n';
    }
}

} // namespace memscope
