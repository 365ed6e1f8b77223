#include "job/rank_set.h"

#include "common/load_error.h"

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>

namespace memscope {

namespace {

// MemAvailable from /proc/meminfo, 0 when unknown.
uint64_t availableMemory()
{
    std::ifstream in("/proc/meminfo");
    std::string key;
    uint64_t kib = 0;
    std::string unit;
    while (in >> key >> kib >> unit)
        if (key == "MemAvailable:")
            return kib * 1024;
    return 0;
}

RankEntry summarize(const RankFile& file)
{
    RankEntry e;
    e.source = file;
    try {
        if (!file.summaryPath.empty()) {
            e.summary = readRankSummaryFile(file.summaryPath);
        } else {
            AnalysisOptions options;
            options.until = AnalysisStage::Attributed;
            const auto analysis = analyze(AnalysisSource::file(file.path), options);
            if (analysis->deviceCount() == 0)
                throw std::runtime_error(file.path + ": has no device traces");
            e.summary = summarizeRank(*analysis, analysis->focusDevice(), file.rank.value_or(-1));
        }
        if (file.rank)
            e.summary.rank = *file.rank;
        e.summary.iteration = std::max(e.summary.iteration, file.iteration);
        e.summary.oomDump = e.summary.oomDump || file.oomDump;
    } catch (const LoadCancelled&) {
        throw;
    } catch (const std::exception& ex) {
        e.error = ex.what();
        e.summary.rank = file.rank.value_or(-1);
        e.summary.file = file.path.empty() ? file.summaryPath : file.path;
    }
    return e;
}

} // namespace

unsigned RankSet::workerCount(const std::vector<RankFile>& files, const RankSetOptions& options)
{
    unsigned threads = options.threads ? options.threads : std::max(1u, std::thread::hardware_concurrency());
    if (!options.threads) {
        uint64_t largest = 0;
        for (const RankFile& f : files) {
            std::error_code ec;
            if (f.summaryPath.empty() && !f.path.empty())
                largest = std::max<uint64_t>(largest, std::filesystem::file_size(f.path, ec) * (ec ? 0 : 1));
        }
        const uint64_t available = availableMemory();
        if (largest && available)
            threads = static_cast<unsigned>(std::clamp<uint64_t>(available / (largest * kBytesPerFileByte), 1, threads));
    }
    return std::max(1u, std::min<unsigned>(threads, static_cast<unsigned>(std::max<size_t>(files.size(), 1))));
}

std::shared_ptr<const RankSet> RankSet::open(const std::vector<std::string>& paths, const RankSetOptions& options)
{
    return open(discoverRanks(paths), options);
}

std::shared_ptr<const RankSet> RankSet::open(std::vector<RankFile> files, const RankSetOptions& options)
{
    if (files.empty())
        throw std::runtime_error("no rank snapshots or summaries to open");
    auto set = std::make_shared<RankSet>();
    set->m_ranks.resize(files.size());
    std::atomic<size_t> next{0}, done{0};
    std::atomic<bool> cancelled{false};
    std::mutex progressMutex;
    auto work = [&] {
        for (size_t i = next++; i < files.size() && !cancelled; i = next++) {
            set->m_ranks[i] = summarize(files[i]);
            const size_t d = ++done;
            if (options.progress) {
                const std::lock_guard lock(progressMutex);
                if (!options.progress(d, files.size()))
                    cancelled = true;
            }
        }
    };
    const unsigned n = workerCount(files, options);
    std::vector<std::thread> pool;
    for (unsigned t = 1; t < n; ++t)
        pool.emplace_back(work);
    work();
    for (std::thread& t : pool)
        t.join();
    if (cancelled)
        throw LoadCancelled();

    // Ranks the names did not give: the device their events are on, else the next free number.
    std::set<int> taken;
    for (const RankEntry& e : set->m_ranks)
        if (e.source.rank)
            taken.insert(*e.source.rank);
    for (RankEntry& e : set->m_ranks) {
        if (e.source.rank)
            continue;
        int r = e.ok() ? e.summary.rank : 0;
        while (r < 0 || taken.count(r))
            r = r < 0 ? 0 : r + 1;
        e.summary.rank = r;
        taken.insert(r);
    }
    std::stable_sort(set->m_ranks.begin(), set->m_ranks.end(),
                     [](const RankEntry& a, const RankEntry& b) { return a.summary.rank < b.summary.rank; });

    set->computeMean();
    return set;
}

std::shared_ptr<const RankSet> RankSet::fromEntries(std::vector<RankEntry> entries)
{
    auto set = std::make_shared<RankSet>();
    set->m_ranks = std::move(entries);
    std::stable_sort(set->m_ranks.begin(), set->m_ranks.end(),
                     [](const RankEntry& a, const RankEntry& b) { return a.summary.rank < b.summary.rank; });
    set->computeMean();
    return set;
}

void RankSet::computeMean()
{
    double sum = 0;
    size_t count = 0;
    for (const RankEntry& e : m_ranks)
        if (e.ok()) {
            sum += static_cast<double>(e.summary.peakRequested);
            ++count;
        }
    m_meanPeak = count ? sum / static_cast<double>(count) : 0;
    for (RankEntry& e : m_ranks)
        if (e.ok() && m_meanPeak > 0)
            e.aboveMean = (static_cast<double>(e.summary.peakRequested) - m_meanPeak) / m_meanPeak;
}

size_t RankSet::focusRank() const
{
    auto pick = [&](auto&& wanted) -> std::optional<size_t> {
        std::optional<size_t> best;
        for (size_t i = 0; i < m_ranks.size(); ++i)
            if (m_ranks[i].ok() && wanted(m_ranks[i]) &&
                (!best || m_ranks[i].summary.peakRequested > m_ranks[*best].summary.peakRequested))
                best = i;
        return best;
    };
    if (auto i = pick([](const RankEntry& e) { return e.summary.oom; }))
        return *i;
    if (auto i = pick([](const RankEntry& e) { return e.summary.oomDump; }))
        return *i;
    return pick([](const RankEntry&) { return true; }).value_or(0);
}

std::optional<size_t> RankSet::findRank(int rank) const
{
    for (size_t i = 0; i < m_ranks.size(); ++i)
        if (m_ranks[i].summary.rank == rank)
            return i;
    return std::nullopt;
}

std::shared_ptr<const Analysis> RankSet::load(size_t index, const AnalysisOptions& options,
                                              const AnalysisCallbacks& callbacks) const
{
    const RankEntry& e = m_ranks.at(index);
    if (!e.canLoad())
        throw std::runtime_error("rank " + std::to_string(e.summary.rank) + ": only its summary " + e.source.summaryPath +
                                 " is here; copy its snapshot next to it to open it in full");
    return analyze(AnalysisSource::file(e.source.path), options, callbacks);
}

} // namespace memscope
