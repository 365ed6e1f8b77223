#pragma once

#include <algorithm>
#include <cstdint>

namespace memscope {

/*
 * Free space inside the caching allocator's segments, and the one definition of its
 * fragmentation:
 *
 *   fragmentation = 1 - largest free block / all free bytes
 *
 * 0 when the free memory is one piece, near 1 when it is in many small pieces that no large
 * request can use. Free means bytes no allocator block holds: an Inactive block in the
 * dump-time segments (exact), or between the live allocations of a replayed event with each
 * allocation rounded up to the allocator's 512-byte block granularity. The rounding is part
 * of the block that holds it and can serve no other request, so it is not free space.
 *
 * Why this one: the GUI's allocator state used to count the space between *requested* sizes
 * as free, so every small tensor's few hundred rounding bytes were a "gap"; a state whose
 * free memory was one large piece read as ~100% fragmented from thousands of such slivers.
 * The unused-cache finding measured Inactive blocks (what the allocator can actually hand
 * out), which is the quantity a user acts on (expandable_segments, max_split_size_mb), so
 * both now use it: diagnose from the dump-time blocks, the allocator state at any event
 * from the replay.
 */
struct FreeSpace {
    uint64_t bytes = 0;
    uint64_t largest = 0;
    int64_t count = 0; // free blocks (pieces)

    void add(uint64_t piece)
    {
        if (piece == 0)
            return;
        bytes += piece;
        largest = std::max(largest, piece);
        ++count;
    }
    void add(const FreeSpace& other)
    {
        bytes += other.bytes;
        largest = std::max(largest, other.largest);
        count += other.count;
    }
    double fragmentation() const { return bytes ? 1.0 - static_cast<double>(largest) / static_cast<double>(bytes) : 0.0; }
};

// The allocator's block granularity: every block's size is a multiple of it (torch's
// kMinBlockSize, CUDACachingAllocator.cpp).
constexpr uint64_t kAllocatorBlockRounding = 512;

constexpr uint64_t roundToAllocatorBlock(uint64_t requested)
{
    const uint64_t r = (requested + kAllocatorBlockRounding - 1) / kAllocatorBlockRounding * kAllocatorBlockRounding;
    return r ? r : kAllocatorBlockRounding;
}

} // namespace memscope
