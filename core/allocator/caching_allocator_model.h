#pragma once

#include "allocator/allocator_settings.h"
#include "snapshot/action.h"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

namespace memscope {

/*
 * A model of one device of PyTorch's CUDA caching allocator (c10/cuda/CUDACachingAllocator.cpp,
 * torch 2.x), written from its rules, to replay an alloc/free stream under any settings.
 *
 * What it models
 *   - Rounding: requests below 512 B take 512 B, others round up to 512 B, or with
 *     roundup_power2_divisions to the next of N equal steps between two powers of two.
 *   - Two pools per stream: small (<= 1 MiB, carved from 2 MiB segments) and large. A new
 *     segment is 2 MiB for a small request, 20 MiB for a large one below 10 MiB, else the
 *     request rounded up to 2 MiB. A block is only ever reused on the stream it was made on.
 *   - Best fit: the smallest free block of the pool and stream that holds the request (ties
 *     by address). It is split when the rest is >= 512 B (small pool, expandable segments)
 *     or > 1 MiB (large pool, and only for requests below max_split_size). A freed block
 *     merges with free neighbours of its segment.
 *   - max_split_size: a request below it never takes a free block at or above it; a request
 *     at or above it takes a free block only if that is less than max_non_split_rounding
 *     (20 MiB) larger.
 *   - A failed cudaMalloc: free the smallest oversize cached block that holds the request,
 *     or the largest oversize ones until enough (only with max_split_size set), and retry;
 *     then free every unsplit cached block (release_cached_blocks, as empty_cache) and retry;
 *     then out of memory.
 *   - garbage_collection_threshold, when a capacity is set (torch applies it only under
 *     set_per_process_memory_fraction): before a cudaMalloc with the reserved bytes above
 *     threshold x capacity, unsplit cached large blocks not reused for at least the average
 *     number of searches are freed, oldest first in rounds, until enough.
 *   - Expandable segments: one growing virtual range per pool and stream, mapped in 2 MiB
 *     (small) or 20 MiB (large) pages; a request is placed at the lowest address where free
 *     and unmapped space hold it, and only the pages it lacks are mapped; best fit prefers
 *     blocks that cannot grow; every split leaves >= 512 B; release unmaps whole free pages.
 *   - Capacity: cudaMalloc (or mapping pages) fails when the bytes reserved would exceed it.
 *
 * What it leaves out: CUDA graph private pools and mempools, cross-stream uses
 * (record_stream events: the caller frees a block when the trace says the free completed),
 * IPC, free-memory callbacks, memory outside the caching allocator (the CUDA context,
 * other processes, NCCL buffers: the capacity is what the allocator may reserve), and
 * changes of settings during a run.
 *
 * The caller picks the addresses cudaMalloc returns through `Hooks::segmentAddress`
 * (the recorded ones for an exact replay) and may fail a cudaMalloc on purpose through
 * `Hooks::failDeviceAlloc` (the recorded retries); otherwise addresses come from a first-fit
 * model of the device's address space.
 */
class CachingAllocatorModel {
public:
    using BlockRef = int32_t;

    struct Options {
        AllocatorSettings settings;
        uint64_t capacity = AllocatorSettings::kNoLimit; // bytes the allocator may reserve
        uint64_t deviceTotal = 150ull << 30; // sizes the address range of an expandable segment
    };

    struct Hooks {
        // Called before every device allocation attempt (cudaMalloc or mapping pages) with its
        // size; true fails it as if the device were full.
        std::function<bool(uint64_t bytes)> failDeviceAlloc;
        // The address a new segment (or a new expandable range) gets; nullopt: the model picks.
        std::function<std::optional<uint64_t>(uint64_t bytes, bool expandable)> segmentAddress;

        // A segmentAddress giving a new segment the address a recording got for one of its size,
        // in the order the recording got them (best fit breaks ties by address); the model picks
        // for other sizes and for expandable ranges. `recorded`: the recording's segment_alloc
        // entries (size, address) in order.
        static std::function<std::optional<uint64_t>(uint64_t, bool)>
        recordedAddresses(const std::vector<std::pair<uint64_t, uint64_t>>& recorded);
    };

    // A segment event the model caused, as torch records it in the trace.
    struct SegmentEvent {
        Action action = Action::SegmentAlloc; // SegmentAlloc, SegmentFree, SegmentMap, SegmentUnmap
        uint64_t addr = 0;
        uint64_t size = 0;
        uint64_t stream = 0;
    };

    struct BlockInfo {
        uint64_t addr = 0;
        uint64_t size = 0;
        uint64_t requested = 0;
        bool allocated = false;
    };
    struct SegmentInfo {
        uint64_t addr = 0;
        uint64_t stream = 0;
        bool small = false;
        bool expandable = false;
        std::vector<BlockInfo> blocks;
        uint64_t total() const;
    };

    explicit CachingAllocatorModel(Options options, Hooks hooks = {});

    static uint64_t roundSize(uint64_t size, const AllocatorSettings& settings);
    static uint64_t allocationSize(uint64_t roundedSize);

    // torch's malloc(): the block handed out, or nullopt when the device is out of memory
    // (after the retries). `size` is what the program asked for.
    std::optional<BlockRef> malloc(uint64_t size, uint64_t stream);
    // torch's free(): the block stops counting as allocated (the `free_requested` entry).
    void freeRequested(BlockRef block);
    // The block returns to its pool and merges (the `free_completed` entry). Calls
    // freeRequested first when that was not done.
    void freeCompleted(BlockRef block);
    // torch.cuda.empty_cache(): every unsplit cached block back to the device.
    void emptyCache();
    // Whether malloc(size, stream) would find a cached block, without changing anything.
    bool findsCachedBlock(uint64_t size, uint64_t stream) const;
    // Places an allocation made before the replay starts inside the segment at segmentAddr
    // (created with the given size when it does not exist yet). False when it does not fit.
    bool seedSegment(uint64_t addr, uint64_t size, uint64_t stream, bool small);
    std::optional<BlockRef> seedAllocation(uint64_t addr, uint64_t size, uint64_t requested, uint64_t stream);

    uint64_t address(BlockRef b) const { return m_blocks[static_cast<size_t>(b)].addr; }
    uint64_t blockSize(BlockRef b) const { return m_blocks[static_cast<size_t>(b)].size; }

    int64_t reserved() const { return m_reserved; }
    int64_t allocated() const { return m_allocated; }
    int64_t requested() const { return m_requested; }
    int64_t reservedPeak() const { return m_reservedPeak; }
    int64_t allocatedPeak() const { return m_allocatedPeak; }
    int64_t requestedPeak() const { return m_requestedPeak; }
    uint64_t largestFreeBlock() const;
    int64_t deviceAllocs() const { return m_deviceAllocs; }
    int64_t deviceFrees() const { return m_deviceFrees; }

    // Segment events since the last call, oldest first.
    std::vector<SegmentEvent> takeSegmentEvents();
    const std::vector<SegmentEvent>& pendingSegmentEvents() const { return m_events; }
    // The layout now, as torch's snapshot() reports it (segments sorted by address).
    std::vector<SegmentInfo> segments() const;

private:
    struct Block {
        uint64_t addr = 0;
        uint64_t size = 0;
        uint64_t requested = 0;
        uint64_t stream = 0;
        BlockRef prev = -1;
        BlockRef next = -1;
        int32_t expandable = -1; // index into m_expandable
        int64_t gcBase = 0;
        bool small = false;
        bool allocated = false;
        bool counted = false; // counts as allocated (between malloc and free_requested)
        bool mapped = true;
        bool live = false;
    };
    struct ExpandableRange {
        uint64_t base = 0;
        uint64_t pageSize = 0;
        uint64_t pages = 0;
        uint64_t stream = 0;
        bool small = false;
        bool live = false;
        std::vector<bool> mapped;
    };
    using SizeKey = std::tuple<uint64_t, uint64_t, BlockRef>; // size, address, block
    using AddrKey = std::pair<uint64_t, BlockRef>;
    struct Pool {
        std::set<SizeKey> blocks; // free, mapped
        std::set<AddrKey> unmapped; // expandable address space without pages
    };
    using PoolKey = std::pair<bool, uint64_t>; // small, stream

    Block& blk(BlockRef b) { return m_blocks[static_cast<size_t>(b)]; }
    const Block& blk(BlockRef b) const { return m_blocks[static_cast<size_t>(b)]; }
    BlockRef newBlock(const Block& b);
    void deleteBlock(BlockRef b);
    Pool& pool(bool small, uint64_t stream) { return m_pools[{small, stream}]; }
    const Pool* findPool(bool small, uint64_t stream) const;
    void insertFree(BlockRef b);
    void eraseFree(BlockRef b);
    bool isSplit(BlockRef b) const { return blk(b).prev >= 0 || blk(b).next >= 0; }

    std::optional<BlockRef> findFreeBlock(uint64_t size, uint64_t stream, bool small, bool countSearch);
    bool shouldSplit(BlockRef b, uint64_t size) const;
    std::optional<BlockRef> allocBlock(uint64_t size, uint64_t allocSize, uint64_t stream, bool small);
    bool releaseAvailableCachedBlocks(uint64_t size, uint64_t stream, bool small);
    void releaseCachedBlocks();
    void releaseBlocks(bool small);
    void releaseBlock(BlockRef b);
    void garbageCollect();
    size_t mergeInto(BlockRef dst, BlockRef src);
    BlockRef allocFound(BlockRef b, uint64_t size, uint64_t requested);

    // expandable segments
    std::optional<BlockRef> allocExpandable(uint64_t size, uint64_t stream, bool small);
    BlockRef findExpandableBlock(uint64_t size, uint64_t stream, bool small);
    bool mapBlock(BlockRef b, uint64_t size);
    void unmapBlock(BlockRef b);

    bool deviceGrants(uint64_t bytes);
    uint64_t segmentAddress(uint64_t bytes, bool expandable);
    void freeAddressRange(uint64_t addr, uint64_t bytes);
    void addReserved(int64_t bytes);
    void recordEvent(Action a, uint64_t addr, uint64_t size, uint64_t stream) { m_events.push_back({a, addr, size, stream}); }

    Options m_options;
    Hooks m_hooks;
    std::vector<Block> m_blocks;
    std::vector<BlockRef> m_freeSlots;
    std::map<PoolKey, Pool> m_pools;
    std::vector<ExpandableRange> m_expandable;
    std::map<uint64_t, uint64_t> m_addressSpace; // segments handed out by the address model: addr -> size
    uint64_t m_nextExpandableBase = 0x7e0000000000ull;
    int64_t m_gcSearches[2] = {0, 0}; // large, small: get_free_block calls while gc is on
    int64_t m_reserved = 0;
    int64_t m_allocated = 0;
    int64_t m_requested = 0;
    int64_t m_reservedPeak = 0;
    int64_t m_allocatedPeak = 0;
    int64_t m_requestedPeak = 0;
    int64_t m_deviceAllocs = 0;
    int64_t m_deviceFrees = 0;
    std::vector<SegmentEvent> m_events;
};

} // namespace memscope
