#pragma once

#include "common/strong_id.h"
#include "common/format_bytes.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace memscope {

// What a finding is about. Machine names (diagnosticKindName) are report.json's "kind".
enum class DiagnosticKind : uint8_t {
    Growth, // live memory climbs pass after pass: tensors retained across iterations
    MissingNoGrad, // forward passes with no backward keep their autograd graph (activations)
    UnusedCache, // reserved much larger than in use; what empty_cache() would return; fragmentation
    CacheReleased, // segments handed back to the driver (empty_cache(), or the allocator under pressure)
    OutOfMemory, // an `oom` trace entry explained
    ActivationBoundPeak, // the peak is in forward/backward and activations dominate it
    OptimizerBoundPeak, // the peak is in the optimizer step
    Peak, // where the peak is when neither of the above applies (inference, plain code)
};
inline constexpr int kDiagnosticKindCount = 8;

enum class Severity : uint8_t { Info, Warning, Error };

// "growth", "missing_no_grad", "unused_cache", "cache_released", "oom", "activation_bound_peak",
// "optimizer_bound_peak", "peak"
std::string_view diagnosticKindName(DiagnosticKind k);
std::optional<DiagnosticKind> diagnosticKindFromName(std::string_view name);
std::string_view diagnosticKindLabel(DiagnosticKind k); // for people: "Memory growth", …
std::string_view severityName(Severity s); // "info", "warning", "error"

// A named number of a finding (report.json "figures"): bytes unless `isBytes` is false.
struct DiagnosticFigure {
    std::string key; // machine name, e.g. "device_free"
    std::string label; // for people, e.g. "Free on the device"
    int64_t value = 0;
    bool isBytes = true;
};

// One call site of the evidence: a stack and what its allocations hold.
struct EvidenceSite {
    StackId stack; // invalid: allocations with no frames recorded
    int64_t bytes = 0;
    int64_t count = 0;
};

struct Diagnostic {
    DiagnosticKind kind = DiagnosticKind::Peak;
    Severity severity = Severity::Info;
    size_t deviceIndex = 0; // index into Replay::devices
    int device = 0; // the device ordinal
    std::string message; // one line: the finding with its numbers
    std::string detail; // a few sentences: how it was found, what the numbers mean
    int64_t bytes = 0; // the bytes involved
    int64_t bytesPerIteration = 0; // Growth: bytes retained per iteration; 0 otherwise
    int iterations = 0; // Growth / MissingNoGrad: the passes it was measured over
    int64_t event = -1; // the event it is about (the oom, the peak, the release); -1 none
    std::vector<DiagnosticFigure> figures;
    std::vector<AllocationId> allocations; // evidence, most bytes first (capped, see kMaxEvidence)
    std::vector<EvidenceSite> sites; // the call sites of the evidence, most bytes first
    std::string fix; // what to change, in a sentence or two

    const DiagnosticFigure* figure(std::string_view key) const;
};

inline constexpr size_t kMaxEvidenceAllocations = 256;
inline constexpr size_t kMaxEvidenceSites = 16;

// Every finding of a snapshot, all devices, most severe first (then by device, then bytes).
struct Diagnostics {
    std::vector<Diagnostic> items;

    std::vector<const Diagnostic*> ofKind(DiagnosticKind k) const;
    const Diagnostic* first(DiagnosticKind k, std::optional<size_t> deviceIndex = {}) const;
};

} // namespace memscope
