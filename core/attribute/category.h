#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace memscope {

// What an allocation's bytes are for. Definitions: samples/RECORDING.md ("Oracle labels").
enum class Category : uint8_t {
    Parameter, // model weights and buffers
    OptimizerState, // tensors the optimizer keeps between steps
    Gradient, // .grad of parameters
    Activation, // tensors saved in forward for backward
    Input, // the batch
    Intermediate, // everything else: temporaries of forward, backward, the optimizer step; workspaces
    Other, // nothing can be known (e.g. pre-existing blocks with no frames)
};
inline constexpr int kCategoryCount = 7;
inline constexpr std::array<Category, kCategoryCount> kAllCategories{
    Category::Parameter, Category::OptimizerState, Category::Gradient, Category::Activation,
    Category::Input,     Category::Intermediate,   Category::Other};

// The phase of the training step an event falls in.
enum class Phase : uint8_t { Forward, Backward, OptimizerStep, ZeroGrad, Other };
inline constexpr int kPhaseCount = 5;
inline constexpr std::array<Phase, kPhaseCount> kAllPhases{Phase::Forward, Phase::Backward, Phase::OptimizerStep, Phase::ZeroGrad,
                                                           Phase::Other};

// Stable machine names: "PARAMETER", "OPTIMIZER_STATE", ... (the oracle labels' spelling).
std::string_view categoryName(Category c);
// For people: "Parameters", "Optimizer state", ...
std::string_view categoryLabel(Category c);
std::optional<Category> categoryFromName(std::string_view name);
// "forward", "backward", "optimizer_step", "zero_grad", "other"
std::string_view phaseName(Phase p);
std::string_view phaseLabel(Phase p);

// The colour of a category in every view and export, as 0xRRGGBB.
uint32_t categoryColor(Category c);

} // namespace memscope
