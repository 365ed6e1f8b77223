#include "support/oracle_labels.h"

#include "common/load_error.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>

namespace memscope {

namespace {

template <class T>
bool parseNumber(std::string_view s, T& out)
{
    while (!s.empty() && (s.back() == '\r' || s.back() == ' '))
        s.remove_suffix(1);
    const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return ec == std::errc() && p == s.data() + s.size();
}

int rank(Category c)
{
    switch (c) {
    case Category::Parameter: return 0;
    case Category::OptimizerState: return 1;
    case Category::Gradient: return 2;
    case Category::Input: return 3;
    case Category::Activation: return 4;
    default: return 5;
    }
}

} // namespace

std::vector<OracleLabel> readOracleLabels(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw LoadError(path, -1, {}, "cannot open the labels file");
    std::vector<OracleLabel> out;
    std::string line;
    int64_t offset = 0;
    int lineNo = 0;
    while (std::getline(in, line)) {
        ++lineNo;
        const int64_t at = offset;
        offset += static_cast<int64_t>(line.size()) + 1;
        if (lineNo == 1 || line.empty() || line == "\r")
            continue; // header t_us,ptr,nbytes,label
        std::string_view f[4];
        std::string_view rest(line);
        int k = 0;
        for (; k < 4 && !rest.empty(); ++k) {
            const size_t comma = rest.find(',');
            f[k] = rest.substr(0, comma);
            rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
        }
        OracleLabel l;
        std::string_view name = f[3];
        while (!name.empty() && (name.back() == '\r' || name.back() == ' '))
            name.remove_suffix(1);
        const auto cat = categoryFromName(name);
        if (k != 4 || !parseNumber(f[0], l.timeUs) || !parseNumber(f[1], l.ptr) || !parseNumber(f[2], l.bytes) || !cat)
            throw LoadError(path, at, "line " + std::to_string(lineNo),
                            "expected t_us,ptr,nbytes,LABEL with a category name, got '" + line + "'");
        l.category = *cat;
        out.push_back(l);
    }
    return out;
}

std::vector<Category> joinOracleLabels(const Snapshot& snapshot, const DeviceReplay& d, std::span<const OracleLabel> labels)
{
    const DeviceTrace* trace = snapshot.device(d.device);
    struct Key {
        uint64_t addr;
        int64_t time;
        int64_t event;
        int32_t id;
    };
    std::vector<Key> keys;
    keys.reserve(d.allocations.size());
    for (size_t j = 0; j < d.allocations.size(); ++j) {
        const Allocation& a = d.allocations[j];
        const int64_t t = a.preexisting() || !trace ? std::numeric_limits<int64_t>::min()
                                                    : trace->events.timeUs[static_cast<size_t>(a.allocEvent.value)];
        keys.push_back({a.addr, t, a.preexisting() ? -1 : a.allocEvent.value, static_cast<int32_t>(j)});
    }
    std::sort(keys.begin(), keys.end(),
              [](const Key& x, const Key& y) { return std::tie(x.addr, x.time, x.event) < std::tie(y.addr, y.time, y.event); });
    std::vector<int> best(d.allocations.size(), rank(Category::Intermediate));
    for (const OracleLabel& l : labels) {
        const int64_t limit = l.timeUs + 200;
        // The last key at this address whose alloc time is <= limit.
        auto hi = std::upper_bound(keys.begin(), keys.end(), std::pair<uint64_t, int64_t>{l.ptr, limit},
                                   [](const std::pair<uint64_t, int64_t>& v, const Key& k) {
            return v.first < k.addr || (v.first == k.addr && v.second < k.time);
        });
        if (hi == keys.begin())
            continue;
        --hi;
        if (hi->addr != l.ptr)
            continue;
        int& b = best[static_cast<size_t>(hi->id)];
        b = std::min(b, rank(l.category));
    }
    static constexpr Category byRank[] = {Category::Parameter, Category::OptimizerState, Category::Gradient,
                                          Category::Input,     Category::Activation,     Category::Intermediate};
    std::vector<Category> out(d.allocations.size());
    for (size_t j = 0; j < out.size(); ++j)
        out[j] = byRank[best[j]];
    return out;
}

OracleAgreement compareWithOracle(const Snapshot& snapshot, const DeviceReplay& d, const DeviceAttribution& a,
                                  const std::vector<Category>& oracle)
{
    OracleAgreement r;
    const DeviceTrace* trace = snapshot.device(d.device);
    const int64_t n = d.eventCount;
    r.peakEvent = d.peakRequested.event.valid() ? d.peakRequested.event.value : -1;
    r.peakBytes = d.peakRequested.bytes;
    auto timeAt = [&](int64_t e) {
        return trace && n > 0 ? trace->events.timeUs[static_cast<size_t>(std::clamp<int64_t>(e, 0, n - 1))] : 0;
    };

    std::array<int64_t, kCategoryCount> ours{}, theirs{};
    double totalTime = 0, agreeTime = 0, totalEvents = 0, agreeEvents = 0;
    for (size_t j = 0; j < d.allocations.size(); ++j) {
        const Allocation& al = d.allocations[j];
        const size_t o = static_cast<size_t>(oracle[j]);
        const size_t m = static_cast<size_t>(a.allocationCategory[j]);
        const int64_t size = static_cast<int64_t>(al.size);
        if (al.activeAfter(r.peakEvent)) {
            r.peakConfusion[o][m] += size;
            ours[m] += size;
            theirs[o] += size;
        }
        const int64_t from = al.preexisting() ? -1 : al.allocEvent.value;
        const int64_t to = al.freeEvent.valid() ? al.freeEvent.value : n;
        const double us = std::max<double>(1.0, static_cast<double>(timeAt(to) - timeAt(from)));
        const double wt = static_cast<double>(size) * us;
        const double we = static_cast<double>(size) * static_cast<double>(std::max<int64_t>(1, to - from));
        r.lifetimeConfusion[o][m] += wt;
        totalTime += wt;
        totalEvents += we;
        if (o == m) {
            agreeTime += wt;
            agreeEvents += we;
        }
    }
    int64_t common = 0, total = 0;
    for (size_t c = 0; c < ours.size(); ++c) {
        common += std::min(ours[c], theirs[c]);
        total += theirs[c];
    }
    r.atPeak = total > 0 ? static_cast<double>(common) / static_cast<double>(total) : 1.0;
    r.lifetimeTime = totalTime > 0 ? agreeTime / totalTime : 1.0;
    r.lifetimeEvents = totalEvents > 0 ? agreeEvents / totalEvents : 1.0;
    for (auto& row : r.lifetimeConfusion)
        for (double& v : row)
            v = totalTime > 0 ? v / totalTime : 0;
    return r;
}

std::string OracleAgreement::report() const
{
    std::ostringstream s;
    char buf[160];
    std::snprintf(buf, sizeof buf,
                  "at the peak (event %lld, %.1f MiB): %.2f%% agree; lifetime-weighted: %.2f%% (time), %.2f%% (events)\n",
                  static_cast<long long>(peakEvent), static_cast<double>(peakBytes) / 1048576.0, 100 * atPeak, 100 * lifetimeTime,
                  100 * lifetimeEvents);
    s << buf;
    s << "  oracle -> ours             MiB at peak   share of byte-lifetime\n";
    for (Category o : kAllCategories)
        for (Category m : kAllCategories) {
            const int64_t b = peakConfusion[static_cast<size_t>(o)][static_cast<size_t>(m)];
            const double l = lifetimeConfusion[static_cast<size_t>(o)][static_cast<size_t>(m)];
            if (b == 0 && l < 1e-6)
                continue;
            std::snprintf(buf, sizeof buf, "  %-15s -> %-15s %10.1f %9.3f%%%s\n", std::string(categoryName(o)).c_str(),
                          std::string(categoryName(m)).c_str(), static_cast<double>(b) / 1048576.0, 100 * l,
                          o == m ? "" : "   <- disagree");
            s << buf;
        }
    return s.str();
}

} // namespace memscope
