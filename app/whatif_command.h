#pragma once

#include "allocator/model_change.h"

#include <string>
#include <vector>

namespace memscope {

class CommandLine;

// `memscope whatif FILE [--device N] [--set KEY=VALUE…] [--capacity 80GiB] [--recorded-batch B0]
//  [--batch B | --max-batch] [--json]`: the recorded alloc/free stream replayed through the
// caching-allocator model (core/allocator) under other settings, a capacity and another batch.
inline constexpr char kWhatIfUsage[] =
    "usage: memscope whatif FILE [--device N] [--set KEY:VALUE…] [--capacity 80GiB] "
    "[--recorded-batch B0] [--batch B | --max-batch] [--checkpoint all|N] "
    "[--precision fp32|bf16|fp16|amp-bf16|amp-fp16] "
    "[--optimizer adamw|adam|sgd|sgd-momentum|adafactor|adamw-8bit|adamw-fused] [--accumulate K] "
    "[--seq L --recorded-seq L0] [--shard ddp|zero1|fsdp2:N] [--recorded-precision P] [--recorded-optimizer O] "
    "[--plan] [--json]";

int runWhatIf(const std::vector<std::string>& args);

// The model-level changes of a command line (--checkpoint, --precision, --optimizer,
// --accumulate, --seq), checked as `whatif` checks them; `estimate`'s what-if options are
// aliases of these.
ModelChanges parseModelChanges(const CommandLine& cl);

} // namespace memscope
