#include "allocator/model_change.h"

#include <algorithm>
#include <array>
#include <sstream>

namespace memscope {

namespace {
constexpr std::array<std::string_view, 5> kPrecisionNames{"fp32", "bf16", "fp16", "amp-bf16", "amp-fp16"};
constexpr std::array<std::string_view, 7> kOptimizerNames{"adamw",     "adam",       "sgd",        "sgd-momentum",
                                                          "adafactor", "adamw-8bit", "adamw-fused"};
constexpr std::array<std::string_view, 3> kShardNames{"ddp", "zero1", "fsdp2"};
} // namespace

std::string_view precisionName(Precision p) { return kPrecisionNames[static_cast<size_t>(p)]; }

std::optional<Precision> precisionFromName(std::string_view name)
{
    for (size_t i = 0; i < kPrecisionNames.size(); ++i)
        if (kPrecisionNames[i] == name)
            return static_cast<Precision>(i);
    if (name == "bf16-mixed")
        return Precision::AmpBf16;
    if (name == "16-mixed" || name == "fp16-mixed")
        return Precision::AmpFp16;
    return std::nullopt;
}

bool isAmp(Precision p) { return p == Precision::AmpBf16 || p == Precision::AmpFp16; }

std::string_view optimizerName(OptimizerKind o) { return kOptimizerNames[static_cast<size_t>(o)]; }

std::optional<OptimizerKind> optimizerFromName(std::string_view name)
{
    for (size_t i = 0; i < kOptimizerNames.size(); ++i)
        if (kOptimizerNames[i] == name)
            return static_cast<OptimizerKind>(i);
    return std::nullopt;
}

double optimizerStateRatio(OptimizerKind o)
{
    switch (o) {
    case OptimizerKind::AdamW:
    case OptimizerKind::AdamWFused:
    case OptimizerKind::Adam: return 2;
    case OptimizerKind::SgdMomentum: return 1;
    case OptimizerKind::Sgd: return 0;
    case OptimizerKind::Adafactor: return 0;
    case OptimizerKind::AdamW8bit: return 0.5;
    }
    return 0;
}

bool optimizerHasStepTemporaries(OptimizerKind o)
{
    return o == OptimizerKind::AdamW || o == OptimizerKind::Adam || o == OptimizerKind::Adafactor;
}

std::string_view shardKindName(ShardKind k) { return kShardNames[static_cast<size_t>(k)]; }

std::optional<Sharding> shardingFromText(std::string_view text)
{
    const size_t colon = text.find(':');
    if (colon == std::string_view::npos || colon + 1 >= text.size())
        return std::nullopt;
    Sharding s;
    const std::string_view kind = text.substr(0, colon) == "fsdp" ? "fsdp2" : text.substr(0, colon);
    const auto known = std::find(kShardNames.begin(), kShardNames.end(), kind);
    if (known == kShardNames.end())
        return std::nullopt;
    s.kind = static_cast<ShardKind>(known - kShardNames.begin());
    int n = 0;
    for (const char c : text.substr(colon + 1)) {
        if (c < '0' || c > '9' || n > 4096)
            return std::nullopt;
        n = n * 10 + (c - '0');
    }
    if (n < 1 || n > 4096)
        return std::nullopt;
    s.ranks = n;
    return s;
}

std::string ModelChanges::describe() const
{
    std::ostringstream o;
    auto sep = [&] {
        if (o.tellp() > 0)
            o << " ";
    };
    if (checkpoint) {
        sep();
        o << "--checkpoint " << (*checkpoint < 0 ? std::string("all") : std::to_string(*checkpoint));
    }
    if (precision) {
        sep();
        o << "--precision " << precisionName(*precision);
    }
    if (optimizer) {
        sep();
        o << "--optimizer " << optimizerName(*optimizer);
    }
    if (accumulate > 1) {
        sep();
        o << "--accumulate " << accumulate;
    }
    if (seq) {
        sep();
        o << "--seq " << *seq;
    }
    if (batch) {
        sep();
        o << "--batch " << *batch;
    }
    if (shard) {
        sep();
        o << "--shard " << shardKindName(shard->kind) << ":" << shard->ranks;
    }
    return o.str();
}

} // namespace memscope
