#include "analysis/live_stats.h"

#include <cstdio>

#include <unistd.h>

namespace memscope {

int64_t residentBytes()
{
    std::FILE* f = std::fopen("/proc/self/statm", "r");
    if (!f)
        return 0;
    long pages = 0, resident = 0;
    if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2)
        resident = 0;
    std::fclose(f);
    return static_cast<int64_t>(resident) * ::sysconf(_SC_PAGESIZE);
}

LiveStatsLine liveStatsLine(const LiveView& view, double tS, double updateMs)
{
    LiveStatsLine l;
    l.tS = tS;
    l.events = view.events;
    l.updateMs = updateMs;
    l.rssBytes = residentBytes();
    l.dropped = view.stats.agentDropped;
    l.lagEvents = view.received > view.events ? view.received - view.events : 0;
    return l;
}

std::string liveStatsJson(const LiveStatsLine& l)
{
    char buffer[256];
    std::snprintf(buffer, sizeof buffer,
                  "{\"t_s\": %.3f, \"events\": %lld, \"update_ms\": %.3f, \"rss_bytes\": %lld, \"dropped\": %llu, "
                  "\"lag_events\": %lld}",
                  l.tS, static_cast<long long>(l.events), l.updateMs, static_cast<long long>(l.rssBytes),
                  static_cast<unsigned long long>(l.dropped), static_cast<long long>(l.lagEvents));
    return buffer;
}

} // namespace memscope
