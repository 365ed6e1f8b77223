#include "attribute/category.h"

namespace memscope {

std::string_view categoryName(Category c)
{
    switch (c) {
    case Category::Parameter: return "PARAMETER";
    case Category::OptimizerState: return "OPTIMIZER_STATE";
    case Category::Gradient: return "GRADIENT";
    case Category::Activation: return "ACTIVATION";
    case Category::Input: return "INPUT";
    case Category::Intermediate: return "INTERMEDIATE";
    case Category::Other: return "OTHER";
    }
    return "OTHER";
}

std::string_view categoryLabel(Category c)
{
    switch (c) {
    case Category::Parameter: return "Parameters";
    case Category::OptimizerState: return "Optimizer state";
    case Category::Gradient: return "Gradients";
    case Category::Activation: return "Activations";
    case Category::Input: return "Inputs";
    case Category::Intermediate: return "Intermediates";
    case Category::Other: return "Other";
    }
    return "Other";
}

std::optional<Category> categoryFromName(std::string_view name)
{
    for (Category c : kAllCategories)
        if (categoryName(c) == name)
            return c;
    return std::nullopt;
}

std::string_view phaseName(Phase p)
{
    switch (p) {
    case Phase::Forward: return "forward";
    case Phase::Backward: return "backward";
    case Phase::OptimizerStep: return "optimizer_step";
    case Phase::ZeroGrad: return "zero_grad";
    case Phase::Other: return "other";
    }
    return "other";
}

std::string_view phaseLabel(Phase p)
{
    switch (p) {
    case Phase::Forward: return "Forward";
    case Phase::Backward: return "Backward";
    case Phase::OptimizerStep: return "Optimizer step";
    case Phase::ZeroGrad: return "zero_grad";
    case Phase::Other: return "Other";
    }
    return "Other";
}

uint32_t categoryColor(Category c)
{
    // Colour-blind-safe (Okabe–Ito based), readable on light and dark backgrounds.
    switch (c) {
    case Category::Parameter: return 0x0072B2; // blue
    case Category::OptimizerState: return 0xE69F00; // orange
    case Category::Gradient: return 0xCC79A7; // purple-pink
    case Category::Activation: return 0x009E73; // green
    case Category::Input: return 0xF0E442; // yellow
    case Category::Intermediate: return 0x56B4E9; // sky blue
    case Category::Other: return 0x999999; // grey
    }
    return 0x999999;
}

} // namespace memscope
