#include "job/rank_discovery.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <system_error>

namespace memscope {

namespace fs = std::filesystem;

namespace {

std::string lower(std::string_view s)
{
    std::string out(s);
    for (char& c : out)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

bool endsWith(std::string_view s, std::string_view tail)
{
    return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

// The number starting at s[pos], if digits start there (at most 9 of them).
std::optional<int> numberAt(std::string_view s, size_t pos)
{
    size_t end = pos;
    while (end < s.size() && std::isdigit(static_cast<unsigned char>(s[end])) && end - pos < 9)
        ++end;
    if (end == pos)
        return std::nullopt;
    return std::stoi(std::string(s.substr(pos, end - pos)));
}

constexpr size_t kMaxDepth = 4;
constexpr size_t kMaxFiles = 1 << 20;

void walk(const fs::path& folder, size_t depth, std::vector<fs::path>& out)
{
    std::error_code ec;
    for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
        if (out.size() >= kMaxFiles)
            return;
        std::error_code ignored;
        if (it->is_directory(ignored)) {
            if (depth < kMaxDepth && !it->is_symlink(ignored))
                walk(it->path(), depth + 1, out);
        } else if (it->is_regular_file(ignored)) {
            out.push_back(it->path());
        }
    }
}

} // namespace

std::optional<int> rankFromFileName(std::string_view fileName)
{
    const std::string name = lower(fileName);
    std::optional<int> rank;
    for (size_t at = name.find("rank"); at != std::string::npos; at = name.find("rank", at + 4)) {
        size_t pos = at + 4;
        if (pos < name.size() && (name[pos] == '-' || name[pos] == '_'))
            ++pos;
        if (auto n = numberAt(name, pos))
            rank = n;
    }
    if (rank)
        return rank;
    if (const size_t at = name.find("snapshot_"); at != std::string::npos)
        return numberAt(name, at + 9);
    return std::nullopt;
}

std::optional<int> iterationFromFolderName(std::string_view folderName, bool* exitDump)
{
    const std::string name = lower(folderName);
    if (name.rfind("iteration_", 0) != 0)
        return std::nullopt;
    size_t end = 10;
    while (end < name.size() && std::isdigit(static_cast<unsigned char>(name[end])))
        ++end;
    const std::string_view rest = std::string_view(name).substr(end);
    if (end == 10 || end - 10 > 9 || !(rest.empty() || rest == "_exit"))
        return std::nullopt;
    if (exitDump)
        *exitDump = rest == "_exit";
    return std::stoi(name.substr(10, end - 10));
}

bool isSummaryFileName(std::string_view fileName) { return endsWith(lower(fileName), ".summary.json"); }

bool isSnapshotFileName(std::string_view fileName)
{
    const std::string name = lower(fileName);
    if (isSummaryFileName(name))
        return false;
    for (const char* ext : {".pickle", ".pkl", ".pickle.gz", ".pkl.gz"})
        if (endsWith(name, ext))
            return true;
    return (endsWith(name, ".json") || endsWith(name, ".json.gz")) && name.find("snapshot") != std::string::npos;
}

std::vector<RankFile> discoverRanks(const std::vector<std::string>& paths)
{
    // Keyed by the snapshot's path (a summary's path less ".summary.json"), in the order found.
    std::vector<RankFile> found;
    std::vector<bool> named; // named one by one, not found in a folder
    std::map<std::string, size_t> byKey;
    auto add = [&](const fs::path& file, bool fromFolder) {
        const std::string name = file.filename().string();
        const bool summary = isSummaryFileName(name);
        if (fromFolder && !summary && !isSnapshotFileName(name))
            return;
        const std::string full = file.string();
        const std::string key = summary ? full.substr(0, full.size() - 13) : full;
        auto [it, added] = byKey.try_emplace(key, found.size());
        if (added) {
            RankFile r;
            const fs::path keyPath(key);
            r.rank = rankFromFileName(keyPath.filename().string());
            bool exitDump = false;
            if (auto n = iterationFromFolderName(keyPath.parent_path().filename().string(), &exitDump)) {
                r.iteration = *n;
                r.oomDump = exitDump;
            }
            r.oomDump = r.oomDump || lower(keyPath.filename().string()).find("oom") != std::string::npos;
            found.push_back(std::move(r));
            named.push_back(false);
        }
        named[it->second] = named[it->second] || !fromFolder;
        RankFile& r = found[it->second];
        (summary ? r.summaryPath : r.path) = full;
        // A summary named alone: its snapshot, when it is here too, loads on demand.
        std::error_code ec;
        if (summary && r.path.empty() && !fromFolder && fs::is_regular_file(key, ec))
            r.path = key;
    };

    for (const std::string& p : paths) {
        std::error_code ec;
        const fs::file_status st = fs::status(p, ec);
        if (ec || !fs::exists(st))
            throw std::runtime_error(p + ": no such file or folder");
        if (fs::is_directory(st)) {
            std::vector<fs::path> files;
            walk(p, 1, files);
            std::sort(files.begin(), files.end());
            const size_t before = found.size();
            for (const fs::path& f : files)
                add(f, true);
            if (found.size() == before)
                throw std::runtime_error(p +
                                         ": holds no snapshot (*.pickle, *.pickle.gz, *snapshot*.json) or "
                                         "*.summary.json within " +
                                         std::to_string(kMaxDepth) + " levels");
        } else {
            add(fs::path(p), false);
        }
    }

    // Per rank: the latest iteration, an OOM dump first. Files named one by one all stay.
    std::vector<RankFile> out;
    std::map<int, size_t> bestOf;
    auto better = [](const RankFile& a, const RankFile& b) {
        return std::pair(a.iteration, a.oomDump) > std::pair(b.iteration, b.oomDump);
    };
    for (size_t i = 0; i < found.size(); ++i) {
        RankFile& r = found[i];
        if (!r.rank || named[i]) {
            out.push_back(std::move(r));
            continue;
        }
        auto [it, added] = bestOf.try_emplace(*r.rank, out.size());
        if (added)
            out.push_back(std::move(r));
        else if (better(r, out[it->second]))
            out[it->second] = std::move(r);
    }
    std::stable_sort(out.begin(), out.end(), [](const RankFile& a, const RankFile& b) {
        if (a.rank.has_value() != b.rank.has_value())
            return a.rank.has_value();
        return a.rank && *a.rank < *b.rank;
    });
    return out;
}

} // namespace memscope
