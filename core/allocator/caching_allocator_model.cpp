#include "allocator/caching_allocator_model.h"

#include <algorithm>
#include <bit>
#include <climits>

namespace memscope {

namespace {

constexpr uint64_t kMinBlockSize = 512;
constexpr uint64_t kSmallSize = 1ull << 20;
constexpr uint64_t kSmallBuffer = 2ull << 20;
constexpr uint64_t kLargeBuffer = 20ull << 20;
constexpr uint64_t kMinLargeAlloc = 10ull << 20;
constexpr uint64_t kRoundLarge = 2ull << 20;
constexpr uint64_t kAddressBase = 0x7f0000000000ull;

uint64_t roundUp(uint64_t x, uint64_t step) { return (x + step - 1) / step * step; }

uint64_t nextDivision(uint64_t size, uint64_t divisions)
{
    if (std::has_single_bit(size))
        return size;
    const uint64_t floor = std::bit_floor(size);
    const uint64_t step = floor >> (63 - std::countl_zero(divisions));
    if (step == 0)
        return floor << 1;
    const uint64_t roundedDown = size & ~(step - 1);
    return roundedDown == size ? size : roundedDown + step;
}

} // namespace

uint64_t CachingAllocatorModel::SegmentInfo::total() const
{
    uint64_t t = 0;
    for (const BlockInfo& b : blocks)
        t += b.size;
    return t;
}

CachingAllocatorModel::CachingAllocatorModel(Options options, Hooks hooks)
    : m_options(std::move(options)), m_hooks(std::move(hooks))
{
}

uint64_t CachingAllocatorModel::roundSize(uint64_t size, const AllocatorSettings& settings)
{
    if (size < kMinBlockSize)
        return kMinBlockSize;
    const uint64_t divisions = settings.divisionsFor(size);
    if (divisions > 1 && size > kMinBlockSize * divisions)
        return nextDivision(size, divisions);
    return roundUp(size, kMinBlockSize);
}

uint64_t CachingAllocatorModel::allocationSize(uint64_t size)
{
    if (size <= kSmallSize)
        return kSmallBuffer;
    if (size < kMinLargeAlloc)
        return kLargeBuffer;
    return roundUp(size, kRoundLarge);
}

CachingAllocatorModel::BlockRef CachingAllocatorModel::newBlock(const Block& b)
{
    BlockRef r;
    if (!m_freeSlots.empty()) {
        r = m_freeSlots.back();
        m_freeSlots.pop_back();
        m_blocks[static_cast<size_t>(r)] = b;
    } else {
        r = static_cast<BlockRef>(m_blocks.size());
        m_blocks.push_back(b);
    }
    blk(r).live = true;
    return r;
}

void CachingAllocatorModel::deleteBlock(BlockRef b)
{
    blk(b).live = false;
    m_freeSlots.push_back(b);
}

const CachingAllocatorModel::Pool* CachingAllocatorModel::findPool(bool small, uint64_t stream) const
{
    auto it = m_pools.find({small, stream});
    return it == m_pools.end() ? nullptr : &it->second;
}

void CachingAllocatorModel::insertFree(BlockRef b)
{
    Block& x = blk(b);
    Pool& p = pool(x.small, x.stream);
    if (x.mapped) {
        x.gcBase = m_gcSearches[x.small ? 1 : 0];
        p.blocks.insert({x.size, x.addr, b});
    } else {
        p.unmapped.insert({x.addr, b});
    }
}

void CachingAllocatorModel::eraseFree(BlockRef b)
{
    const Block& x = blk(b);
    Pool& p = pool(x.small, x.stream);
    if (x.mapped)
        p.blocks.erase({x.size, x.addr, b});
    else
        p.unmapped.erase({x.addr, b});
}

void CachingAllocatorModel::addReserved(int64_t bytes)
{
    m_reserved += bytes;
    m_reservedPeak = std::max(m_reservedPeak, m_reserved);
}

std::vector<CachingAllocatorModel::SegmentEvent> CachingAllocatorModel::takeSegmentEvents()
{
    std::vector<SegmentEvent> out;
    out.swap(m_events);
    return out;
}

// --- finding a cached block ---------------------------------------------------------------

bool CachingAllocatorModel::findsCachedBlock(uint64_t size, uint64_t stream) const
{
    const uint64_t rounded = roundSize(size, m_options.settings);
    const bool small = rounded <= kSmallSize;
    const Pool* p = findPool(small, stream);
    if (!p)
        return false;
    auto it = p->blocks.lower_bound({rounded, 0, INT_MIN});
    if (it == p->blocks.end())
        return false;
    const uint64_t maxSplit = m_options.settings.maxSplitSize;
    const uint64_t found = std::get<0>(*it);
    if (rounded < maxSplit && found >= maxSplit)
        return false;
    if (rounded >= maxSplit && found >= rounded + m_options.settings.maxNonSplitRoundingSize)
        return false;
    return true;
}

std::optional<CachingAllocatorModel::BlockRef> CachingAllocatorModel::findFreeBlock(uint64_t size, uint64_t stream, bool small,
                                                                                    bool countSearch)
{
    const AllocatorSettings& s = m_options.settings;
    if (countSearch && m_options.capacity != AllocatorSettings::kNoLimit && s.garbageCollectionThreshold > 0.0)
        ++m_gcSearches[small ? 1 : 0];
    auto pit = m_pools.find({small, stream});
    if (pit == m_pools.end())
        return std::nullopt;
    std::set<SizeKey>& blocks = pit->second.blocks;
    auto it = blocks.lower_bound({size, 0, INT_MIN});
    if (it == blocks.end())
        return std::nullopt;
    if (blk(std::get<2>(*it)).expandable >= 0 && s.expandableSegments) {
        // Best fit counts a block by the size it could grow to, so a block that cannot grow
        // is preferred over one of the same size at the mapped end of a range.
        auto growable = [&](BlockRef b) {
            const Block& x = blk(b);
            return x.size + (x.next >= 0 && !blk(x.next).mapped ? blk(x.next).size : 0);
        };
        auto next = std::next(it);
        while (blk(std::get<2>(*it)).expandable >= 0 && next != blocks.end() &&
               growable(std::get<2>(*next)) < growable(std::get<2>(*it)))
            it = next++;
    }
    const uint64_t found = std::get<0>(*it);
    if (size < s.maxSplitSize && found >= s.maxSplitSize)
        return std::nullopt;
    if (size >= s.maxSplitSize && found >= size + s.maxNonSplitRoundingSize)
        return std::nullopt;
    const BlockRef b = std::get<2>(*it);
    blocks.erase(it);
    return b;
}

bool CachingAllocatorModel::shouldSplit(BlockRef b, uint64_t size) const
{
    const uint64_t remaining = blk(b).size - size;
    if (blk(b).small || m_options.settings.expandableSegments)
        return remaining >= kMinBlockSize;
    return size < m_options.settings.maxSplitSize && remaining > kSmallSize;
}

// --- malloc and free -----------------------------------------------------------------------

std::optional<CachingAllocatorModel::BlockRef> CachingAllocatorModel::malloc(uint64_t orig, uint64_t stream)
{
    const uint64_t size = roundSize(orig, m_options.settings);
    const bool small = size <= kSmallSize;
    const uint64_t allocSize = allocationSize(size);
    std::optional<BlockRef> b = findFreeBlock(size, stream, small, true);
    if (!b) {
        if (m_options.capacity != AllocatorSettings::kNoLimit && m_options.settings.garbageCollectionThreshold > 0.0)
            garbageCollect();
        b = allocBlock(size, allocSize, stream, small);
        if (!b && releaseAvailableCachedBlocks(size, stream, small))
            b = allocBlock(size, allocSize, stream, small);
        if (!b) {
            releaseCachedBlocks();
            b = allocBlock(size, allocSize, stream, small);
        }
    }
    if (!b)
        return std::nullopt;
    return allocFound(*b, size, orig);
}

CachingAllocatorModel::BlockRef CachingAllocatorModel::allocFound(BlockRef b, uint64_t size, uint64_t requested)
{
    if (shouldSplit(b, size)) {
        Block part = blk(b);
        part.size = size;
        part.next = b;
        part.allocated = false;
        const BlockRef first = newBlock(part); // may move m_blocks
        if (blk(first).prev >= 0)
            blk(blk(first).prev).next = first;
        Block& rest = blk(b);
        rest.prev = first;
        rest.addr += size;
        rest.size -= size;
        insertFree(b);
        b = first;
    }
    Block& x = blk(b);
    x.allocated = true;
    x.counted = true;
    x.requested = requested;
    m_allocated += static_cast<int64_t>(x.size);
    m_requested += static_cast<int64_t>(requested);
    m_allocatedPeak = std::max(m_allocatedPeak, m_allocated);
    m_requestedPeak = std::max(m_requestedPeak, m_requested);
    return b;
}

void CachingAllocatorModel::freeRequested(BlockRef b)
{
    Block& x = blk(b);
    if (!x.counted)
        return;
    x.counted = false;
    m_allocated -= static_cast<int64_t>(x.size);
    m_requested -= static_cast<int64_t>(x.requested);
}

void CachingAllocatorModel::freeCompleted(BlockRef b)
{
    freeRequested(b);
    blk(b).allocated = false;
    blk(b).requested = 0;
    mergeInto(b, blk(b).prev);
    mergeInto(b, blk(b).next);
    insertFree(b);
}

size_t CachingAllocatorModel::mergeInto(BlockRef dst, BlockRef src)
{
    if (src < 0 || blk(src).allocated || blk(src).mapped != blk(dst).mapped)
        return 0;
    eraseFree(src);
    Block& d = blk(dst);
    const Block& s = blk(src);
    if (d.prev == src) {
        d.addr = s.addr;
        d.prev = s.prev;
        if (d.prev >= 0)
            blk(d.prev).next = dst;
    } else {
        d.next = s.next;
        if (d.next >= 0)
            blk(d.next).prev = dst;
    }
    const size_t subsumed = s.size;
    d.size += subsumed;
    deleteBlock(src);
    return subsumed;
}

// --- device memory -------------------------------------------------------------------------

bool CachingAllocatorModel::deviceGrants(uint64_t bytes)
{
    if (m_hooks.failDeviceAlloc && m_hooks.failDeviceAlloc(bytes))
        return false;
    return m_options.capacity == AllocatorSettings::kNoLimit || static_cast<uint64_t>(m_reserved) + bytes <= m_options.capacity;
}

std::function<std::optional<uint64_t>(uint64_t, bool)>
CachingAllocatorModel::Hooks::recordedAddresses(const std::vector<std::pair<uint64_t, uint64_t>>& recorded)
{
    std::map<uint64_t, std::vector<uint64_t>> bySize; // size -> addresses, last first
    for (size_t j = recorded.size(); j-- > 0;)
        bySize[recorded[j].first].push_back(recorded[j].second);
    return [bySize = std::move(bySize)](uint64_t bytes, bool expandable) mutable -> std::optional<uint64_t> {
        auto it = bySize.find(bytes);
        if (expandable || it == bySize.end() || it->second.empty())
            return std::nullopt;
        const uint64_t addr = it->second.back();
        it->second.pop_back();
        return addr;
    };
}

uint64_t CachingAllocatorModel::segmentAddress(uint64_t bytes, bool expandable)
{
    std::optional<uint64_t> given;
    if (m_hooks.segmentAddress)
        given = m_hooks.segmentAddress(bytes, expandable);
    if (expandable) {
        const uint64_t addr = given.value_or(m_nextExpandableBase);
        if (!given)
            m_nextExpandableBase += roundUp(bytes, kLargeBuffer) + kLargeBuffer;
        return addr;
    }
    if (given) {
        auto next = m_addressSpace.lower_bound(*given);
        const bool clashes = (next != m_addressSpace.end() && next->first < *given + bytes) ||
                             (next != m_addressSpace.begin() && std::prev(next)->first + std::prev(next)->second > *given);
        if (!clashes) {
            m_addressSpace[*given] = bytes;
            return *given;
        }
    }
    // first fit over the ranges handed out, 2 MiB aligned
    uint64_t candidate = kAddressBase;
    for (const auto& [addr, size] : m_addressSpace) {
        if (addr + size <= candidate)
            continue;
        if (addr >= candidate + bytes)
            break;
        candidate = roundUp(addr + size, kRoundLarge);
    }
    m_addressSpace[candidate] = bytes;
    return candidate;
}

void CachingAllocatorModel::freeAddressRange(uint64_t addr, uint64_t) { m_addressSpace.erase(addr); }

std::optional<CachingAllocatorModel::BlockRef> CachingAllocatorModel::allocBlock(uint64_t size, uint64_t allocSize,
                                                                                 uint64_t stream, bool small)
{
    if (m_options.settings.expandableSegments)
        return allocExpandable(size, stream, small);
    if (!deviceGrants(allocSize))
        return std::nullopt;
    Block b;
    b.addr = segmentAddress(allocSize, false);
    b.size = allocSize;
    b.stream = stream;
    b.small = small;
    const BlockRef r = newBlock(b);
    addReserved(static_cast<int64_t>(allocSize));
    ++m_deviceAllocs;
    recordEvent(Action::SegmentAlloc, b.addr, allocSize, stream);
    return r;
}

void CachingAllocatorModel::releaseBlock(BlockRef b)
{
    eraseFree(b);
    const Block x = blk(b);
    recordEvent(Action::SegmentFree, x.addr, x.size, x.stream);
    addReserved(-static_cast<int64_t>(x.size));
    freeAddressRange(x.addr, x.size);
    ++m_deviceFrees;
    deleteBlock(b);
}

bool CachingAllocatorModel::releaseAvailableCachedBlocks(uint64_t size, uint64_t stream, bool small)
{
    const uint64_t maxSplit = m_options.settings.maxSplitSize;
    if (maxSplit == AllocatorSettings::kNoLimit)
        return false;
    auto pit = m_pools.find({small, stream});
    if (pit == m_pools.end())
        return false;
    std::set<SizeKey>& blocks = pit->second.blocks;
    const uint64_t key = std::max(size, maxSplit);
    auto it = blocks.lower_bound({key, 0, INT_MIN});
    auto releasable = [&](BlockRef b) { return blk(b).expandable < 0 && !isSplit(b); };
    if (it != blocks.end()) {
        if (!releasable(std::get<2>(*it)))
            return false;
        releaseBlock(std::get<2>(*it));
        return true;
    }
    // no single block is large enough: the largest oversize ones until enough
    uint64_t released = 0;
    while (released < key && !blocks.empty()) {
        const SizeKey largest = *std::prev(blocks.end());
        if (std::get<0>(largest) < maxSplit || !releasable(std::get<2>(largest)))
            break;
        released += std::get<0>(largest);
        releaseBlock(std::get<2>(largest));
    }
    return released >= key;
}

void CachingAllocatorModel::releaseCachedBlocks()
{
    releaseBlocks(false);
    releaseBlocks(true);
}

void CachingAllocatorModel::emptyCache() { releaseCachedBlocks(); }

void CachingAllocatorModel::releaseBlocks(bool small)
{
    std::vector<BlockRef> toUnmap;
    for (auto& [key, p] : m_pools) {
        if (key.first != small)
            continue;
        std::vector<BlockRef> order;
        order.reserve(p.blocks.size());
        for (const SizeKey& k : p.blocks)
            order.push_back(std::get<2>(k));
        for (BlockRef b : order) {
            if (blk(b).expandable >= 0)
                toUnmap.push_back(b);
            else if (!isSplit(b))
                releaseBlock(b);
        }
    }
    for (BlockRef b : toUnmap) {
        if (!blk(b).live || !blk(b).mapped)
            continue;
        unmapBlock(b);
        const Block& x = blk(b);
        if (!x.mapped && x.prev < 0 && x.next < 0) {
            eraseFree(b);
            m_expandable[static_cast<size_t>(x.expandable)].live = false;
            deleteBlock(b);
        }
    }
}

void CachingAllocatorModel::garbageCollect()
{
    const double threshold = m_options.settings.garbageCollectionThreshold * static_cast<double>(m_options.capacity);
    const auto gcThreshold = static_cast<uint64_t>(threshold);
    if (static_cast<uint64_t>(m_reserved) <= gcThreshold)
        return;
    const uint64_t target = static_cast<uint64_t>(m_reserved) - gcThreshold;
    auto large = [&] {
        std::vector<BlockRef> out;
        for (auto& [key, p] : m_pools)
            if (!key.first)
                for (const SizeKey& k : p.blocks)
                    if (blk(std::get<2>(k)).expandable < 0 && !isSplit(std::get<2>(k)))
                        out.push_back(std::get<2>(k));
        return out;
    };
    auto age = [&](BlockRef b) { return static_cast<uint64_t>(m_gcSearches[0] - blk(b).gcBase); };
    uint64_t totalAge = 0;
    int64_t count = 0;
    for (BlockRef b : large()) {
        totalAge += age(b);
        ++count;
    }
    if (count == 0)
        return;
    uint64_t reclaimed = 0;
    bool freed = true;
    while (reclaimed < target && freed && count > 0) {
        const double ageThreshold = static_cast<double>(totalAge) / static_cast<double>(count);
        freed = false;
        for (BlockRef b : large()) {
            if (static_cast<double>(age(b)) >= ageThreshold) {
                freed = true;
                reclaimed += blk(b).size;
                totalAge -= age(b);
                --count;
                releaseBlock(b);
            }
        }
    }
}

// --- expandable segments -------------------------------------------------------------------

std::optional<CachingAllocatorModel::BlockRef> CachingAllocatorModel::allocExpandable(uint64_t size, uint64_t stream, bool small)
{
    BlockRef c = findExpandableBlock(size, stream, small);
    if (!blk(c).mapped && !mapBlock(c, std::min(blk(c).size, size)))
        return std::nullopt;
    while (blk(c).size < size) {
        const uint64_t remaining = size - blk(c).size;
        const BlockRef next = blk(c).next;
        if (next < 0 || !mapBlock(next, std::min(remaining, blk(next).size)))
            return std::nullopt;
        c = next; // mapBlock merged c into it
    }
    eraseFree(c);
    return c;
}

CachingAllocatorModel::BlockRef CachingAllocatorModel::findExpandableBlock(uint64_t size, uint64_t stream, bool small)
{
    auto allocatable = [&](BlockRef b) { return b >= 0 && !blk(b).allocated; };
    Pool& p = pool(small, stream);
    for (const AddrKey& k : p.unmapped) {
        BlockRef c = k.second;
        if (allocatable(blk(c).prev))
            c = blk(c).prev;
        uint64_t bytes = 0;
        for (BlockRef b = c; bytes < size && allocatable(b); b = blk(b).next)
            bytes += blk(b).size;
        if (bytes >= size)
            return c;
    }
    ExpandableRange r;
    r.pageSize = small ? kSmallBuffer : kLargeBuffer;
    const uint64_t total = m_options.deviceTotal + m_options.deviceTotal / 8;
    r.pages = (total + r.pageSize - 1) / r.pageSize;
    r.base = segmentAddress(r.pages * r.pageSize, true);
    r.stream = stream;
    r.small = small;
    r.live = true;
    r.mapped.assign(r.pages, false);
    m_expandable.push_back(std::move(r));
    const ExpandableRange& range = m_expandable.back();
    Block b;
    b.addr = range.base;
    b.size = range.pages * range.pageSize;
    b.stream = stream;
    b.small = small;
    b.mapped = false;
    b.expandable = static_cast<int32_t>(m_expandable.size() - 1);
    const BlockRef r2 = newBlock(b);
    insertFree(r2);
    return r2;
}

bool CachingAllocatorModel::mapBlock(BlockRef b, uint64_t size)
{
    ExpandableRange& es = m_expandable[static_cast<size_t>(blk(b).expandable)];
    const uint64_t begin = (blk(b).addr - es.base) / es.pageSize;
    const uint64_t end = (blk(b).addr + size - es.base + es.pageSize - 1) / es.pageSize;
    if (begin >= end)
        return false;
    const uint64_t bytes = (end - begin) * es.pageSize;
    if (!deviceGrants(bytes))
        return false;
    for (uint64_t i = begin; i < end && i < es.pages; ++i)
        es.mapped[i] = true;
    eraseFree(b);
    const uint64_t mappedAt = blk(b).addr;
    blk(b).mapped = true;
    if (bytes < blk(b).size) {
        Block rest = blk(b);
        rest.addr += bytes;
        rest.size -= bytes;
        rest.mapped = false;
        rest.allocated = false;
        rest.prev = b;
        const BlockRef r = newBlock(rest);
        if (blk(r).next >= 0)
            blk(blk(r).next).prev = r;
        blk(b).next = r;
        blk(b).size = bytes;
        insertFree(r);
    }
    mergeInto(b, blk(b).prev);
    mergeInto(b, blk(b).next);
    insertFree(b);
    addReserved(static_cast<int64_t>(bytes));
    ++m_deviceAllocs;
    recordEvent(Action::SegmentMap, mappedAt, bytes, blk(b).stream);
    return true;
}

void CachingAllocatorModel::unmapBlock(BlockRef b)
{
    const ExpandableRange& es = m_expandable[static_cast<size_t>(blk(b).expandable)];
    const uint64_t offset = blk(b).addr - es.base;
    const uint64_t begin = (offset + es.pageSize - 1) / es.pageSize;
    const uint64_t end = (offset + blk(b).size) / es.pageSize;
    if (begin >= end)
        return;
    eraseFree(b);
    const uint64_t at = es.base + begin * es.pageSize;
    const uint64_t bytes = (end - begin) * es.pageSize;
    const uint64_t before = at - blk(b).addr;
    const uint64_t after = blk(b).size - before - bytes;
    if (before > 0) {
        Block x = blk(b);
        x.size = before;
        x.next = b;
        const BlockRef r = newBlock(x);
        if (blk(r).prev >= 0)
            blk(blk(r).prev).next = r;
        blk(b).prev = r;
        insertFree(r);
    }
    if (after > 0) {
        Block x = blk(b);
        x.addr = at + bytes;
        x.size = after;
        x.prev = b;
        const BlockRef r = newBlock(x);
        if (blk(r).next >= 0)
            blk(blk(r).next).prev = r;
        blk(b).next = r;
        insertFree(r);
    }
    Block& x = blk(b);
    x.addr = at;
    x.size = bytes;
    x.mapped = false;
    ExpandableRange& range = m_expandable[static_cast<size_t>(x.expandable)];
    for (uint64_t i = begin; i < end; ++i)
        range.mapped[i] = false;
    const uint64_t stream = x.stream;
    mergeInto(b, blk(b).prev);
    mergeInto(b, blk(b).next);
    insertFree(b);
    addReserved(-static_cast<int64_t>(bytes));
    ++m_deviceFrees;
    recordEvent(Action::SegmentUnmap, at, bytes, stream);
}

// --- state before the replay, and the layout ----------------------------------------------

bool CachingAllocatorModel::seedSegment(uint64_t addr, uint64_t size, uint64_t stream, bool small)
{
    for (const auto& [a, s] : m_addressSpace)
        if (a < addr + size && addr < a + s)
            return false;
    m_addressSpace[addr] = size;
    Block b;
    b.addr = addr;
    b.size = size;
    b.stream = stream;
    b.small = small;
    insertFree(newBlock(b));
    addReserved(static_cast<int64_t>(size));
    return true;
}

std::optional<CachingAllocatorModel::BlockRef> CachingAllocatorModel::seedAllocation(uint64_t addr, uint64_t size,
                                                                                     uint64_t requested, uint64_t stream)
{
    BlockRef host = -1;
    for (auto& [key, p] : m_pools) {
        if (key.second != stream)
            continue;
        for (const SizeKey& k : p.blocks) {
            const Block& x = blk(std::get<2>(k));
            if (x.addr <= addr && addr + size <= x.addr + x.size) {
                host = std::get<2>(k);
                break;
            }
        }
        if (host >= 0)
            break;
    }
    if (host < 0)
        return std::nullopt;
    eraseFree(host);
    if (blk(host).addr < addr) { // a free part before it
        Block x = blk(host);
        x.size = addr - x.addr;
        x.next = host;
        const BlockRef r = newBlock(x);
        if (blk(r).prev >= 0)
            blk(blk(r).prev).next = r;
        blk(host).prev = r;
        blk(host).size -= x.size;
        blk(host).addr = addr;
        insertFree(r);
    }
    if (blk(host).size > size) { // a free part after it
        Block x = blk(host);
        x.addr = addr + size;
        x.size = blk(host).size - size;
        x.prev = host;
        const BlockRef r = newBlock(x);
        if (blk(r).next >= 0)
            blk(blk(r).next).prev = r;
        blk(host).next = r;
        blk(host).size = size;
        insertFree(r);
    }
    Block& x = blk(host);
    x.allocated = true;
    x.counted = true;
    x.requested = requested;
    m_allocated += static_cast<int64_t>(size);
    m_requested += static_cast<int64_t>(requested);
    m_allocatedPeak = std::max(m_allocatedPeak, m_allocated);
    m_requestedPeak = std::max(m_requestedPeak, m_requested);
    return host;
}

uint64_t CachingAllocatorModel::largestFreeBlock() const
{
    uint64_t best = 0;
    for (const auto& [key, p] : m_pools)
        if (!p.blocks.empty())
            best = std::max(best, std::get<0>(*std::prev(p.blocks.end())));
    return best;
}

std::vector<CachingAllocatorModel::SegmentInfo> CachingAllocatorModel::segments() const
{
    std::vector<SegmentInfo> out;
    for (size_t i = 0; i < m_blocks.size(); ++i) {
        const Block& head = m_blocks[i];
        if (!head.live || !head.mapped || (head.prev >= 0 && blk(head.prev).mapped))
            continue;
        SegmentInfo s;
        s.addr = head.addr;
        s.stream = head.stream;
        s.small = head.small;
        s.expandable = head.expandable >= 0;
        for (BlockRef b = static_cast<BlockRef>(i); b >= 0 && blk(b).mapped; b = blk(b).next)
            s.blocks.push_back({blk(b).addr, blk(b).size, blk(b).requested, blk(b).allocated});
        out.push_back(std::move(s));
    }
    std::sort(out.begin(), out.end(), [](const SegmentInfo& a, const SegmentInfo& b) { return a.addr < b.addr; });
    return out;
}

} // namespace memscope
