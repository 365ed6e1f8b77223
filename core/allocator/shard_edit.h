#pragma once

#include "allocator/model_change.h"
#include "allocator/model_what_if.h"
#include "allocator/trace_ops.h"

#include <string>
#include <vector>

namespace memscope {

struct DeviceAttribution;

/*
 * Sharding edit (`memscope whatif --shard KIND:N`): the recorded single-GPU trace, already
 * edited for the other changes, becomes one rank's trace of the same training sharded over N
 * ranks, each training its own batch of the recorded size.
 * - DDP: gradient buckets of the parameters' bytes (the first 1 MiB, then 25 MiB each, filled
 *   from the last parameter back, a larger parameter alone) are made after the model and kept.
 * - ZeRO-1 (DDP and torch's ZeroRedundancyOptimizer): DDP's buckets, and each rank keeps the
 *   optimizer state of the parameters it owns (largest first, each to the rank holding least);
 *   the step's temporaries shrink with its share.
 * - FSDP2 (fully_shard on each repeated block and at the root): parameters, gradients,
 *   optimizer state and the step's temporaries are 1/N. The root's parameters (those of no
 *   repeated size: embeddings, the head) are gathered whole from the forward's start to the
 *   backward's end; a block's parameters whole during its forward, and again during its
 *   backward (from the first free of its activations to the last), where its whole gradients
 *   are made before their reduce-scatter. The block's bytes: the parameters of the sizes that
 *   repeat once per block, over the blocks.
 * Not modelled: FSDP2's prefetch of the next block and the communication buffers. DDP's
 * second set of buckets after it rebuilds them is kept on rank 0 alone (measured on one, two
 * or all ranks of a job).
 */
struct ShardInputs {
    const DeviceAttribution* attribution = nullptr; // the phase of each recorded event
    const ForwardBlocks* blocks = nullptr; // the repeated blocks of each iteration's forward
    double optimizerStates = 0; // state tensors per parameter, as recorded (AdamW 2)
};

void applySharding(OpStream& s, const Sharding& sharding, const ShardInputs& in, std::vector<std::string>& notes);

} // namespace memscope
