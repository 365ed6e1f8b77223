#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <string_view>

namespace memscope {

// The settings of PyTorch's CUDA caching allocator that change where memory goes
// (PYTORCH_CUDA_ALLOC_CONF). Sizes in bytes; "none" is the largest uint64_t.
struct AllocatorSettings {
    static constexpr uint64_t kNoLimit = std::numeric_limits<uint64_t>::max();
    static constexpr size_t kRoundupIntervals = 16; // 1 MiB, 2 MiB, … 32 GiB and above

    uint64_t maxSplitSize = kNoLimit; // max_split_size_mb
    uint64_t maxNonSplitRoundingSize = 20ull << 20; // max_non_split_rounding_mb (torch's default: 20 MiB)
    double garbageCollectionThreshold = 0.0; // garbage_collection_threshold, (0, 1); 0 = off
    bool expandableSegments = false; // expandable_segments
    // roundup_power2_divisions per size interval [2^k MiB, 2^(k+1) MiB) (the first also below
    // 1 MiB, the last also above); 0 or 1 = plain 512-byte rounding.
    std::array<uint64_t, kRoundupIntervals> roundupPower2Divisions{};

    // What a snapshot recorded: its flattened `allocator_settings` (max_split_size,
    // garbage_collection_threshold, expandable_segments, roundup_power2_divisions.N, and
    // PYTORCH_CUDA_ALLOC_CONF for what the others do not carry). Unknown or absent keys keep
    // torch's defaults.
    static AllocatorSettings fromSnapshot(const std::map<std::string, std::string>& recorded);

    // Applies PYTORCH_CUDA_ALLOC_CONF text on top of these settings, e.g.
    // "expandable_segments:True,max_split_size_mb:64" or "roundup_power2_divisions:[256:1,>:4]".
    // Throws std::invalid_argument naming the key and what was expected. Keys that do not
    // change placement (pinned_*, release_lock_on_cudamalloc, backend) are accepted and ignored.
    void apply(std::string_view conf);

    // The divisions used for a rounded request of `size` bytes.
    uint64_t divisionsFor(uint64_t size) const;
    // PYTORCH_CUDA_ALLOC_CONF text for these settings ("" for torch's defaults).
    std::string toConf() const;

    bool operator==(const AllocatorSettings&) const = default;
};

} // namespace memscope
