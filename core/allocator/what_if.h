#pragma once

#include "allocator/allocator_simulation.h"

#include <optional>
#include <vector>

namespace memscope {

/*
 * The what-ifs on top of the simulation.
 *
 * Batch: the allocations that grow with the batch are the activations and inputs, and the
 * intermediates allocated in forward or backward (attribution categories and phases);
 * parameters, gradients, optimizer state, the optimizer step's temporaries and what nothing
 * can be known of stay as recorded, and so do intermediates kept to the end (a library's
 * workspace). Batch B scales those sizes by B / B0 (B0 the recorded
 * batch; without it B counts multiples of the recorded batch) and replays the stream with
 * the allocator model, so rounding, segment sizes and fragmentation come out of the model
 * rather than a formula. The trace is one run: allocations the program would add or drop
 * at another batch, and sizes that do not grow linearly (attention's B x L^2 still does),
 * are not seen.
 *
 * Largest batch: the largest whole B whose replay does not run out of the capacity, found
 * by doubling from B0 then bisecting (one replay per probe); it assumes "fits" only
 * shrinks as B grows.
 */
struct BatchProbe {
    int64_t batch = 0;
    bool fits = false;
    int64_t reservedPeak = 0;
};

struct MaxBatchResult {
    int64_t maxBatch = 0; // 0: not even batch 1 fits
    // the largest batch whose reserved peak leaves a margin of the capacity (model what-if:
    // kReservedMargin, the reserved bytes' measured bound); -1: not searched
    int64_t safeBatch = -1;
    bool unbounded = false; // fits at the largest batch probed (nothing grows with the batch?)
    std::vector<BatchProbe> probes;
    std::optional<SimulationResult> atMax; // the replay at maxBatch
};

// Whether allocation `id` grows with the batch (by its category and phase).
bool scalesWithBatch(const DeviceAttribution& attribution, AllocationId id);
// Whether `al` is kept to the end of the training: alive at the trace's end, or made before
// the last iteration and freed only after it (Lightning's teardown clears cuBLAS's workspaces
// before the dump). Such an intermediate is a library's workspace or cache, not the batch's.
bool keptToEnd(const DeviceAttribution& attribution, const Allocation& al);
// The same, less the intermediates kept to the end (keptToEnd): a library's workspace
// (cuBLAS keeps ~32 MiB from the first matrix product on), whatever the batch.
bool scalesWithBatch(const DeviceAttribution& attribution, const DeviceReplay& replay, AllocationId id);
// The bytes that grow with the batch at the requested peak (to say how much the batch moves).
int64_t batchBytesAtPeak(const DeviceAttribution& attribution, const DeviceReplay& replay);

// Replays at batch `batch` (recorded: `recordedBatch`). `fixed`, when given, marks (per
// AllocationId) more allocations that keep their bytes: autocast's weight copies in a
// mixed-precision recording (ModelWhatIf::fixedAtAnyBatch()).
SimulationResult simulateBatch(const Replay& replay, size_t deviceIndex, const DeviceAttribution& attribution,
                               SimulationOptions options, double batch, double recordedBatch,
                               const std::vector<uint8_t>* fixed = nullptr);

// The largest batch that fits options.capacity (which must be set).
MaxBatchResult findMaxBatch(const Replay& replay, size_t deviceIndex, const DeviceAttribution& attribution,
                            const SimulationOptions& options, double recordedBatch, int64_t batchLimit = 1 << 16,
                            const std::vector<uint8_t>* fixed = nullptr);

} // namespace memscope
