#pragma once

#include "replay/replay.h"

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

namespace memscope {

/*
 * Collective-communication memory: the bytes a distributed job holds for talking to the
 * other ranks rather than for its own model. A sub-band of the categories (an allocation
 * keeps its category; this says, in addition, that it serves communication), defined in
 * docs/RANKS.md. Found from each allocation's stack, innermost frame first:
 *
 *   GradientBucket    a native c10d::Reducer frame (DDP's flat gradient buckets, built by
 *                     initialize_buckets and again by rebuild_buckets after the first step)
 *   CollectiveBuffer  any other c10d:: / ProcessGroupNCCL frame (all-gather, reduce-scatter,
 *                     broadcast_coalesced, newLikeFlat), or the innermost torch Python frame
 *                     being a collective: torch/distributed/distributed_c10d.py,
 *                     _functional_collectives, torch/distributed/utils.py's parameter sync,
 *                     DDP's own _sync_… and broadcast helpers, FSDP's reduce-scatter
 *   FsdpUnsharded     FSDP's unsharded parameters: an FSDP frame (torch/distributed/fsdp,
 *                     _composable/fsdp) named *all_gather*, *unshard*, alloc_storage
 *   PendingFree       any allocation between its free_requested and a free_completed that
 *                     came later than the next event: a block freed by the program whose
 *                     reuse waits for work on another stream (record_stream, NCCL streams)
 *
 * The scan stops at the first Python frame outside torch.distributed and DDP's helpers (a
 * model's own code, or DDP's forward wrapping the whole model), so a model run under DDP or
 * FSDP is not counted as communication. Each distinct stack is classified once.
 */
enum class CollectiveKind : uint8_t { None, GradientBucket, CollectiveBuffer, FsdpUnsharded, PendingFree };
inline constexpr int kCollectiveKindCount = 5;

// "none", "gradient_bucket", "collective_buffer", "fsdp_unsharded", "pending_free"
std::string_view collectiveKindName(CollectiveKind kind);
// For people: "DDP gradient buckets", …
std::string_view collectiveKindLabel(CollectiveKind kind);

struct DeviceCollectives {
    std::vector<CollectiveKind> allocationKind; // per AllocationId (never PendingFree)
    std::vector<int64_t> bytes; // per event: communication bytes live after it
    std::array<int64_t, kCollectiveKindCount> atPeak{}; // by kind, at the requested peak
    std::array<int64_t, kCollectiveKindCount> maximum{}; // by kind, highest over the trace
    int64_t peakBytes = 0; // max of bytes
    EventIndex peakEvent;
    int64_t allocations = 0; // allocations of a kind other than None

    int64_t atPeakTotal() const;
};

struct Collectives {
    std::vector<DeviceCollectives> devices; // same order as replay.devices
};

// Classifies one stack; None when it is not communication (never PendingFree).
CollectiveKind classifyCollectiveStack(const Snapshot& snapshot, StackId stack);

Collectives findCollectives(const Replay& replay);

} // namespace memscope
