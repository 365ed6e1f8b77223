#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace memscope {

// The changes to the training program that `memscope whatif` models (model_what_if.h).
enum class Precision : uint8_t { Fp32, Bf16, Fp16, AmpBf16, AmpFp16 };
enum class OptimizerKind : uint8_t { AdamW, Adam, Sgd, SgdMomentum, Adafactor, AdamW8bit, AdamWFused };

std::string_view precisionName(Precision p); // "fp32", "bf16", "fp16", "amp-bf16", "amp-fp16"
std::optional<Precision> precisionFromName(std::string_view name);
bool isAmp(Precision p);
std::string_view
optimizerName(OptimizerKind o); // "adamw", "adam", "sgd", "sgd-momentum", "adafactor", "adamw-8bit", "adamw-fused"
std::optional<OptimizerKind> optimizerFromName(std::string_view name);
// Tensors of parameter size the optimizer keeps per parameter, in units of the parameter's
// own bytes (AdamW 2, SGD with momentum 1, SGD 0, Adafactor ~0: its factored rows and
// columns, AdamW 8-bit 0.5: two one-byte states against a four-byte parameter).
double optimizerStateRatio(OptimizerKind o);
// Whether its step allocates temporaries of parameter size (foreach Adam's sqrt of the
// second moment, Adafactor's squared gradients); SGD updates in place, and so does a fused
// AdamW (one kernel per group).
bool optimizerHasStepTemporaries(OptimizerKind o);

// Data-parallel sharding over the GPUs of a job (each rank trains its own batch of the
// recorded size): DDP (gradient buckets), DDP with torch's ZeroRedundancyOptimizer (ZeRO-1:
// each rank keeps the optimizer state of its share of the parameters) and FSDP2
// (fully_shard on each repeated block and at the root).
enum class ShardKind : uint8_t { Ddp, Zero1, Fsdp2 };
struct Sharding {
    ShardKind kind = ShardKind::Fsdp2;
    int ranks = 1;
    int rank = 0; // the rank predicted (ZeRO-1's ranks hold different shares of the state)
};
std::string_view shardKindName(ShardKind k); // "ddp", "zero1", "fsdp2"
// "fsdp2:4", "zero1:2", "ddp:8"; nullopt when not of that form (ranks 1 to 4096)
std::optional<Sharding> shardingFromText(std::string_view text);

struct ModelChanges {
    std::optional<int> checkpoint; // -1: every repeated block; N: the first N
    std::optional<Precision> precision;
    std::optional<OptimizerKind> optimizer;
    int accumulate = 1; // micro-batches of batch / accumulate
    std::optional<double> batch; // the batch (recorded: RecordedSetup::batch)
    std::optional<double> seq; // the sequence length (recorded: RecordedSetup::seq)
    std::optional<Sharding> shard;

    bool empty() const { return !checkpoint && !precision && !optimizer && accumulate == 1 && !batch && !seq && !shard; }
    // "--checkpoint all --precision amp-bf16 --accumulate 2", "" when empty
    std::string describe() const;
};

// What the recording itself ran with: read off the trace (RecordedSetup::detect in
// model_what_if.h), each overridable by the user.
struct RecordedSetup {
    Precision precision = Precision::Fp32;
    OptimizerKind optimizer = OptimizerKind::AdamW;
    double optimizerStates = 0; // state bytes / parameter bytes, as measured
    bool stepTemporaries = false;
    int checkpointedBlocks = 0; // blocks recomputed in backward (0: none seen)
    int blocks = 0; // repeated blocks found in the forward
    double batch = 1; // the recorded batch (1: "the recorded batch" when unknown)
    double seq = 1;
    bool batchKnown = false;
    bool seqKnown = false;
    std::string precisionEvidence; // why, in words
    std::string optimizerEvidence;
    // The recording has native frames (stacks="all"): op dtypes come from the ATen operators,
    // else from the Python frames' module and function names.
    bool operatorsRecorded = false;
    // Trained by Lightning's Trainer (its frames on the stacks): its mixed precision runs
    // autocast with the cast cache off, so a weight's 16-bit copy lives only as long as the op
    // that saves it (inside a checkpointed block: not past the op).
    bool lightning = false;
    // Run under torch.compile (inductor's or AOTAutograd's frames on the stacks).
    bool compiled = false;
    // One rank of a sharded or data-parallel job (FSDP's, DDP's or ZeRO's frames on the stacks).
    bool distributed = false;
};

} // namespace memscope
