#pragma once

#include "snapshot/snapshot.h"

#include <cstdint>
#include <span>
#include <string>

namespace memscope {

/*
 * Bounds that every loaded or received snapshot satisfies, so that everything downstream
 * (replay, attribution, diagnostics, the views) can add sizes, subtract times and walk
 * address ranges in 64-bit arithmetic without overflow:
 *
 *   at most kMaxDevices per-device traces;
 *   addr + size of every trace entry, segment and block fits in 64 bits;
 *   the sizes of one device's trace entries, of all segments and of all blocks each add
 *     up to at most 2^60 bytes (1 EiB; a GPU holds 2^37 or so);
 *   every time_us, of trace entries and annotations, lies within +-2^61.
 *
 * A file outside them is not a real allocator snapshot: checkSnapshotLimits refuses it
 * with a LoadError naming the key path of the first value that breaks a bound. A live
 * stream checks each message with the *LimitError functions (empty: within bounds).
 */
constexpr size_t kMaxDevices = 1024;
constexpr uint64_t kMaxTotalBytes = uint64_t(1) << 60;
constexpr int64_t kMaxAbsTimeUs = int64_t(1) << 61;

void checkSnapshotLimits(const Snapshot& snapshot, const std::string& fileName);

// One trace entry; `deviceTotal` is the sum of the sizes of its device's entries so far
// and grows by `size` when the entry is within bounds. An `oom` entry has no address.
std::string entryLimitError(bool hasAddress, uint64_t addr, uint64_t size, int64_t timeUs, uint64_t& deviceTotal);
std::string timeLimitError(int64_t timeUs);
// A whole `segments` list; the message starts with the key path ("segments[2].address: ...").
std::string segmentsLimitError(std::span<const Segment> segments);

} // namespace memscope
