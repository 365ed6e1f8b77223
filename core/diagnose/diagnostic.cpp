#include "diagnose/diagnostic.h"

#include <array>

namespace memscope {

namespace {

struct KindNames {
    DiagnosticKind kind;
    std::string_view name;
    std::string_view label;
};

constexpr std::array<KindNames, kDiagnosticKindCount> kKinds{{
    {DiagnosticKind::Growth, "growth", "Memory growth across iterations"},
    {DiagnosticKind::MissingNoGrad, "missing_no_grad", "Forward passes keep activations"},
    {DiagnosticKind::UnusedCache, "unused_cache", "Cached but unused memory"},
    {DiagnosticKind::CacheReleased, "cache_released", "Cache handed back"},
    {DiagnosticKind::OutOfMemory, "oom", "Out of memory"},
    {DiagnosticKind::ActivationBoundPeak, "activation_bound_peak", "Activation-bound peak"},
    {DiagnosticKind::OptimizerBoundPeak, "optimizer_bound_peak", "Optimizer-bound peak"},
    {DiagnosticKind::Peak, "peak", "Peak"},
}};

} // namespace

std::string_view diagnosticKindName(DiagnosticKind k) { return kKinds[static_cast<size_t>(k)].name; }

std::string_view diagnosticKindLabel(DiagnosticKind k) { return kKinds[static_cast<size_t>(k)].label; }

std::optional<DiagnosticKind> diagnosticKindFromName(std::string_view name)
{
    for (const KindNames& k : kKinds)
        if (k.name == name)
            return k.kind;
    return std::nullopt;
}

std::string_view severityName(Severity s)
{
    switch (s) {
    case Severity::Info: return "info";
    case Severity::Warning: return "warning";
    case Severity::Error: return "error";
    }
    return "info";
}

const DiagnosticFigure* Diagnostic::figure(std::string_view key) const
{
    for (const DiagnosticFigure& f : figures)
        if (f.key == key)
            return &f;
    return nullptr;
}

std::vector<const Diagnostic*> Diagnostics::ofKind(DiagnosticKind k) const
{
    std::vector<const Diagnostic*> out;
    for (const Diagnostic& d : items)
        if (d.kind == k)
            out.push_back(&d);
    return out;
}

const Diagnostic* Diagnostics::first(DiagnosticKind k, std::optional<size_t> deviceIndex) const
{
    for (const Diagnostic& d : items)
        if (d.kind == k && (!deviceIndex || d.deviceIndex == *deviceIndex))
            return &d;
    return nullptr;
}

} // namespace memscope
