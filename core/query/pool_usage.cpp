#include "query/pool_usage.h"

#include <algorithm>
#include <limits>
#include <map>

namespace memscope {

namespace {

int64_t stepAfter(const std::vector<std::pair<int64_t, int64_t>>& steps, int64_t atStart, int64_t event)
{
    auto it = std::upper_bound(steps.begin(), steps.end(), event, [](int64_t e, const auto& s) { return e < s.first; });
    return it == steps.begin() ? atStart : std::prev(it)->second;
}

// Deltas (event, +/- bytes) into running totals, one entry per event that changed.
std::vector<std::pair<int64_t, int64_t>> runningSteps(std::vector<std::pair<int64_t, int64_t>> deltas, int64_t atStart)
{
    std::sort(deltas.begin(), deltas.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<std::pair<int64_t, int64_t>> out;
    int64_t total = atStart;
    for (const auto& [e, d] : deltas) {
        total += d;
        if (!out.empty() && out.back().first == e)
            out.back().second = total;
        else
            out.emplace_back(e, total);
    }
    return out;
}

} // namespace

std::string PoolUsage::kindText() const { return graphCapture() ? "CUDA graph" : "MemPool / shared graph pool"; }

std::string PoolUsage::idText() const { return "(" + std::to_string(id.first) + ", " + std::to_string(id.second) + ")"; }

int64_t PoolUsage::reservedAfter(int64_t event) const { return stepAfter(reserved, reservedAtStart, event); }

int64_t PoolUsage::usedAfter(int64_t event) const { return stepAfter(used, usedAtStart, event); }

const PoolUsage* DevicePools::poolOf(AllocationId id) const
{
    if (!id.valid() || static_cast<size_t>(id.value) >= allocationPool.size())
        return nullptr;
    const int32_t k = allocationPool[static_cast<size_t>(id.value)];
    return k < 0 ? nullptr : &pools[static_cast<size_t>(k)];
}

int64_t DevicePools::heldAfter(int64_t event) const
{
    int64_t held = 0;
    for (const PoolUsage& p : pools)
        held += p.heldAfter(event);
    return held;
}

DevicePools poolUsage(const DeviceReplay& replay, const EventTable& events, std::span<const SegmentLife> segments)
{
    DevicePools out;
    auto key = [](const PoolId& p) { return std::pair{p.first, p.second}; };
    std::map<std::pair<int64_t, int64_t>, size_t> index;
    auto poolIndex = [&](const PoolId& p) {
        auto [it, added] = index.try_emplace(key(p), out.pools.size());
        if (added) {
            PoolUsage u;
            u.id = p;
            out.pools.push_back(u);
        }
        return it->second;
    };
    // Pools numbered in the order they first hold memory: a segment's start, -1 first.
    std::vector<const SegmentLife*> byStart;
    for (const SegmentLife& l : segments)
        if (!l.pool.isDefault())
            byStart.push_back(&l);
    for (const auto& [row, pool] : events.pool)
        if (!pool.isDefault())
            poolIndex(pool); // a pool with allocations but no segment the trace knows of
    if (byStart.empty() && out.pools.empty())
        return out;
    std::stable_sort(byStart.begin(), byStart.end(),
                     [](const SegmentLife* a, const SegmentLife* b) { return a->startEvent < b->startEvent; });
    {
        std::vector<PoolUsage> ordered;
        std::map<std::pair<int64_t, int64_t>, size_t> seen;
        auto take = [&](const PoolId& p) {
            if (seen.try_emplace(key(p), ordered.size()).second) {
                ordered.push_back(out.pools[index.at(key(p))]);
                ordered.back().number = static_cast<int>(ordered.size());
            }
        };
        for (const SegmentLife* l : byStart) {
            poolIndex(l->pool);
            take(l->pool);
        }
        for (const auto& [row, pool] : events.pool)
            if (!pool.isDefault())
                take(pool);
        out.pools = std::move(ordered);
        index = std::move(seen);
    }

    std::vector<std::vector<std::pair<int64_t, int64_t>>> reservedDeltas(out.pools.size()), usedDeltas(out.pools.size());
    for (const SegmentLife* l : byStart) {
        const size_t k = index.at(key(l->pool));
        PoolUsage& u = out.pools[k];
        ++u.segmentCount;
        if (l->startEvent < 0)
            u.reservedAtStart += static_cast<int64_t>(l->size);
        else
            reservedDeltas[k].emplace_back(l->startEvent, static_cast<int64_t>(l->size));
        if (l->endEvent != std::numeric_limits<int64_t>::max())
            reservedDeltas[k].emplace_back(l->endEvent, -static_cast<int64_t>(l->size));
    }

    // Pool segments by address, for placing allocations that carry no pool_id.
    std::vector<const SegmentLife*> byAddr = byStart;
    std::sort(byAddr.begin(), byAddr.end(), [](const SegmentLife* a, const SegmentLife* b) { return a->addr < b->addr; });
    uint64_t largest = 0;
    for (const SegmentLife* l : byAddr)
        largest = std::max(largest, l->size);
    auto segmentPool = [&](uint64_t addr, int64_t event) -> int32_t {
        auto it = std::upper_bound(byAddr.begin(), byAddr.end(), addr,
                                   [](uint64_t a, const SegmentLife* l) { return a < l->addr; });
        while (it != byAddr.begin()) {
            --it;
            const SegmentLife* l = *it;
            if (addr - l->addr >= largest)
                break;
            if (addr < l->addr + l->size && l->activeAfter(event))
                return static_cast<int32_t>(index.at(key(l->pool)));
        }
        return -1;
    };

    out.allocationPool.assign(replay.allocations.size(), -1);
    for (size_t i = 0; i < replay.allocations.size(); ++i) {
        const Allocation& a = replay.allocations[i];
        int32_t k = -1;
        if (a.allocEvent.valid() && !events.pool.empty()) {
            const PoolId p = events.poolOf(static_cast<size_t>(a.allocEvent.value));
            if (!p.isDefault())
                k = static_cast<int32_t>(index.at(key(p)));
        }
        if (k < 0)
            k = segmentPool(a.addr, a.allocEvent.valid() ? a.allocEvent.value : -1);
        if (k < 0)
            continue;
        out.allocationPool[i] = k;
        PoolUsage& u = out.pools[static_cast<size_t>(k)];
        ++u.allocationCount;
        const int64_t bytes = static_cast<int64_t>(a.size);
        if (a.allocEvent.valid())
            usedDeltas[static_cast<size_t>(k)].emplace_back(a.allocEvent.value, bytes);
        else
            u.usedAtStart += bytes;
        if (a.freeEvent.valid())
            usedDeltas[static_cast<size_t>(k)].emplace_back(a.freeEvent.value, -bytes);
    }
    for (size_t k = 0; k < out.pools.size(); ++k) {
        PoolUsage& u = out.pools[k];
        u.reserved = runningSteps(std::move(reservedDeltas[k]), u.reservedAtStart);
        u.used = runningSteps(std::move(usedDeltas[k]), u.usedAtStart);
        u.peakReserved = u.reservedAtStart;
        for (const auto& [e, v] : u.reserved)
            u.peakReserved = std::max(u.peakReserved, v);
    }
    return out;
}

} // namespace memscope
