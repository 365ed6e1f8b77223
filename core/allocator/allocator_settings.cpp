#include "allocator/allocator_settings.h"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdlib>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace memscope {

namespace {

constexpr uint64_t kMiB = 1ull << 20;

std::string lower(std::string_view s)
{
    std::string r(s);
    for (char& c : r)
        c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    return r;
}

bool parseBool(const std::string& key, const std::string& v)
{
    const std::string l = lower(v);
    if (l == "true" || l == "1")
        return true;
    if (l == "false" || l == "0")
        return false;
    throw std::invalid_argument(key + ": expected True or False, got '" + v + "'");
}

uint64_t parseUnsigned(const std::string& key, const std::string& v)
{
    if (v.empty() || v.find_first_not_of("0123456789") != std::string::npos)
        throw std::invalid_argument(key + ": expected a whole number, got '" + v + "'");
    errno = 0;
    const unsigned long long x = std::strtoull(v.c_str(), nullptr, 10);
    if (errno == ERANGE)
        throw std::invalid_argument(key + ": '" + v + "' is too large");
    return x;
}

double parseDouble(const std::string& key, const std::string& v)
{
    char* end = nullptr;
    const double x = std::strtod(v.c_str(), &end);
    if (v.empty() || end != v.c_str() + v.size())
        throw std::invalid_argument(key + ": expected a number, got '" + v + "'");
    return x;
}

uint64_t megabytes(const std::string& key, const std::string& v)
{
    const uint64_t mb = parseUnsigned(key, v);
    if (mb < 20)
        throw std::invalid_argument(key + ": must be >= 20 (MiB), got " + v);
    return mb > AllocatorSettings::kNoLimit / kMiB ? AllocatorSettings::kNoLimit : mb * kMiB;
}

void checkDivisions(const std::string& key, uint64_t value)
{
    if (value != 0 && !std::has_single_bit(value))
        throw std::invalid_argument(key + ": divisions must be a power of 2 or 0, got " + std::to_string(value));
}

// torch's tokenizer: ',', ':', '[' and ']' are tokens of their own; spaces are kept in words.
std::vector<std::string> tokens(std::string_view conf)
{
    std::vector<std::string> out;
    std::string word;
    for (char c : conf) {
        if (c == ',' || c == ':' || c == '[' || c == ']') {
            if (!word.empty())
                out.push_back(word);
            word.clear();
            out.emplace_back(1, c);
        } else if (c != ' ') {
            word.push_back(c);
        }
    }
    if (!word.empty())
        out.push_back(word);
    return out;
}

} // namespace

uint64_t AllocatorSettings::divisionsFor(uint64_t size) const
{
    const int logSize = size == 0 ? 0 : 63 - std::countl_zero(size);
    const int index = std::clamp(logSize - 20, 0, static_cast<int>(kRoundupIntervals) - 1);
    return roundupPower2Divisions[static_cast<size_t>(index)];
}

AllocatorSettings AllocatorSettings::fromSnapshot(const std::map<std::string, std::string>& recorded)
{
    AllocatorSettings s;
    auto get = [&](const std::string& key) -> const std::string* {
        auto it = recorded.find(key);
        return it == recorded.end() ? nullptr : &it->second;
    };
    // The conf text first: it is the only place max_non_split_rounding_mb is kept.
    if (const std::string* conf = get("PYTORCH_CUDA_ALLOC_CONF")) {
        try {
            s.apply(*conf);
        } catch (const std::invalid_argument&) {
            // what torch accepted we may not; the parsed fields below still hold
        }
    }
    if (const std::string* v = get("max_split_size")) {
        char* end = nullptr;
        const long long x = std::strtoll(v->c_str(), &end, 10);
        s.maxSplitSize = (x <= 0 || end == v->c_str()) ? kNoLimit : static_cast<uint64_t>(x);
    }
    if (const std::string* v = get("garbage_collection_threshold"))
        s.garbageCollectionThreshold = std::strtod(v->c_str(), nullptr);
    if (const std::string* v = get("expandable_segments"))
        s.expandableSegments = lower(*v) == "true" || *v == "1";
    for (size_t i = 0; i < kRoundupIntervals; ++i)
        if (const std::string* v = get("roundup_power2_divisions." + std::to_string(1ull << i)))
            s.roundupPower2Divisions[i] = std::strtoull(v->c_str(), nullptr, 10);
    return s;
}

void AllocatorSettings::apply(std::string_view conf)
{
    const std::vector<std::string> t = tokens(conf);
    auto at = [&](size_t i, const std::string& key) -> const std::string& {
        if (i >= t.size())
            throw std::invalid_argument(key + ": the value is missing");
        return t[i];
    };
    auto expect = [&](size_t i, const std::string& key, const char* token) {
        if (at(i, key) != token)
            throw std::invalid_argument(key + ": expected '" + token + "', got '" + t[i] + "'");
    };
    for (size_t i = 0; i < t.size(); ++i) {
        const std::string key = t[i];
        if (key == ",")
            continue;
        expect(i + 1, key, ":");
        i += 2;
        if (key == "max_split_size_mb") {
            maxSplitSize = megabytes(key, at(i, key));
        } else if (key == "max_non_split_rounding_mb") {
            maxNonSplitRoundingSize = megabytes(key, at(i, key));
        } else if (key == "garbage_collection_threshold") {
            const double x = parseDouble(key, at(i, key));
            if (!(x > 0.0 && x < 1.0))
                throw std::invalid_argument(key + ": must lie in (0, 1), got " + t[i]);
            garbageCollectionThreshold = x;
        } else if (key == "expandable_segments") {
            expandableSegments = parseBool(key, at(i, key));
        } else if (key == "roundup_power2_divisions") {
            if (at(i, key) == "[") {
                bool first = true;
                size_t lastIndex = 0;
                while (++i < t.size() && t[i] != "]") {
                    const std::string bound = t[i];
                    expect(i + 1, key, ":");
                    const uint64_t value = parseUnsigned(key, at(i + 2, key));
                    i += 2;
                    checkDivisions(key, value);
                    if (bound == ">") {
                        std::fill(roundupPower2Divisions.begin() +
                                      static_cast<std::ptrdiff_t>(std::min(lastIndex + 1, kRoundupIntervals)),
                                  roundupPower2Divisions.end(), value);
                    } else {
                        const uint64_t b = parseUnsigned(key, bound);
                        if (!std::has_single_bit(b))
                            throw std::invalid_argument(key + ": interval bounds must be powers of 2 (MiB), got " + bound);
                        const size_t index = std::min<size_t>(static_cast<size_t>(std::countr_zero(b)), kRoundupIntervals - 1);
                        if (first) {
                            std::fill(roundupPower2Divisions.begin(),
                                      roundupPower2Divisions.begin() + static_cast<std::ptrdiff_t>(index), value);
                            first = false;
                        }
                        roundupPower2Divisions[index] = value;
                        lastIndex = index;
                    }
                    if (i + 1 < t.size() && t[i + 1] == ",")
                        ++i;
                }
                if (i >= t.size())
                    throw std::invalid_argument(key + ": expected ']' before the end");
            } else {
                const uint64_t value = parseUnsigned(key, t[i]);
                checkDivisions(key, value);
                roundupPower2Divisions.fill(value);
            }
        } else if (key == "pinned_num_register_threads" || key == "pinned_use_cuda_host_register" ||
                   key == "pinned_use_background_threads" || key == "release_lock_on_cudamalloc" || key == "backend" ||
                   key == "graph_capture_record_stream_reuse" || key == "pinned_reserve_segment_size_mb" ||
                   key == "per_process_memory_fraction") {
            (void)at(i, key); // does not change where device memory goes
        } else {
            throw std::invalid_argument("unknown allocator setting '" + key +
                                        "' (known: expandable_segments, max_split_size_mb, "
                                        "max_non_split_rounding_mb, roundup_power2_divisions, "
                                        "garbage_collection_threshold)");
        }
        if (i + 1 < t.size() && t[i + 1] != ",")
            throw std::invalid_argument(key + ": expected ',' after its value, got '" + t[i + 1] + "'");
    }
}

std::string AllocatorSettings::toConf() const
{
    std::ostringstream out;
    const char* sep = "";
    if (expandableSegments) {
        out << sep << "expandable_segments:True";
        sep = ",";
    }
    if (maxSplitSize != kNoLimit) {
        out << sep << "max_split_size_mb:" << maxSplitSize / kMiB;
        sep = ",";
    }
    if (maxNonSplitRoundingSize != (20ull << 20)) {
        out << sep << "max_non_split_rounding_mb:" << maxNonSplitRoundingSize / kMiB;
        sep = ",";
    }
    if (garbageCollectionThreshold > 0.0) {
        out << sep << "garbage_collection_threshold:" << garbageCollectionThreshold;
        sep = ",";
    }
    if (std::any_of(roundupPower2Divisions.begin(), roundupPower2Divisions.end(), [](uint64_t d) { return d > 1; })) {
        out << sep << "roundup_power2_divisions:[";
        for (size_t i = 0; i < kRoundupIntervals; ++i)
            out << (i ? "," : "") << (1ull << i) << ":" << roundupPower2Divisions[i];
        out << "]";
    }
    return out.str();
}

} // namespace memscope
