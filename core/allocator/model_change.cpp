#include "allocator/model_change.h"

#include <array>
#include <sstream>

namespace memscope {

namespace {
constexpr std::array<std::string_view, 5> kPrecisionNames{"fp32", "bf16", "fp16", "amp-bf16", "amp-fp16"};
constexpr std::array<std::string_view, 7> kOptimizerNames{"adamw",     "adam",       "sgd",        "sgd-momentum",
                                                          "adafactor", "adamw-8bit", "adamw-fused"};
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
    return o.str();
}

} // namespace memscope
