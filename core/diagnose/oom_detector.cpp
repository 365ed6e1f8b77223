#include "diagnose/oom_detector.h"

#include "diagnose/evidence.h"

#include <algorithm>

namespace memscope {

std::vector<Diagnostic> detectOutOfMemory(const DeviceContext& ctx)
{
    std::vector<Diagnostic> out;
    const DeviceReplay& r = ctx.replay;
    const EventTable& ev = ctx.events();
    for (EventIndex oom : r.oomEvents) {
        const int64_t i = oom.value;
        const int64_t asked = static_cast<int64_t>(ev.size[static_cast<size_t>(i)]);
        const auto freeIt = ev.deviceFree.find(i);
        const bool freeKnown = freeIt != ev.deviceFree.end();
        const int64_t deviceFree = freeKnown ? static_cast<int64_t>(freeIt->second) : -1;
        const int64_t reserved = r.reservedAfter(i);
        const int64_t live = r.requestedAfter(i);
        const int64_t unused = std::max<int64_t>(0, reserved - live);

        std::vector<AllocationId> activeIds = r.activeAfter(i);
        std::array<int64_t, kCategoryCount> byCategory{};
        for (AllocationId id : activeIds)
            if (static_cast<size_t>(id.value) < ctx.attribution.allocationCategory.size())
                byCategory[static_cast<size_t>(ctx.attribution.category(id))] += static_cast<int64_t>(r.allocation(id).size);

        Diagnostic d;
        d.kind = DiagnosticKind::OutOfMemory;
        d.severity = Severity::Error;
        d.deviceIndex = ctx.deviceIndex;
        d.device = ctx.device();
        d.bytes = asked;
        d.event = i;
        setEvidence(d, r, activeIds);
        const int64_t largest = d.allocations.empty() ? 0 : static_cast<int64_t>(r.allocation(d.allocations.front()).size);

        std::string cause, fix;
        if (freeKnown && deviceFree >= asked) {
            cause = "the device still had " + formatBytes(deviceFree) +
                    " free, so the limit was this process's cap (torch.cuda.set_per_process_memory_fraction or a MIG "
                    "slice), not the GPU";
            fix = "Raise or remove the process's memory cap (set_per_process_memory_fraction), or lower what is live at "
                  "this point: the largest live tensors are listed.";
        } else if (unused >= asked) {
            cause = formatBytes(unused) + " was reserved but unused: enough in total, not in one piece (fragmentation)";
            fix = "Set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True (or max_split_size_mb) so freed blocks can be "
                  "reused for large requests; torch.cuda.empty_cache() before the large allocation also helps.";
        } else {
            cause = "the device was full: live tensors held " + formatBytes(live) +
                    (freeKnown ? " and the driver reported " + formatBytes(deviceFree) + " free" : std::string());
            fix = "Lower what is live at this point: a smaller batch or sequence, activation checkpointing, mixed "
                  "precision, an optimizer with fewer states, or free (`del`) tensors no longer needed.";
        }
        d.message = "Out of memory asking for " + formatBytes(asked) + ": " + cause;
        std::string cats;
        for (Category c : kAllCategories)
            if (byCategory[static_cast<size_t>(c)] > 0) {
                cats += cats.empty() ? "" : ", ";
                cats += std::string(categoryLabel(c)) + " " + formatBytes(byCategory[static_cast<size_t>(c)]);
            }
        d.detail = "At the failed allocation (" + siteText(ctx.frames, ev.stack[static_cast<size_t>(i)]) + ") the process held " +
                   formatBytes(reserved) + " reserved: " + formatBytes(live) + " requested by " +
                   std::to_string(activeIds.size()) + " live tensors and " + formatBytes(unused) +
                   " cached but unused. Largest live tensor " + formatBytes(largest) +
                   (d.sites.empty() ? std::string()
                                    : ", largest call site " + siteText(ctx.frames, d.sites.front().stack) + " with " +
                                          formatBytes(d.sites.front().bytes)) +
                   (cats.empty() ? std::string(".") : ". Live by category: " + cats + ".");
        d.fix = fix;
        d.figures = {{"requested_size", "Asked for", asked},
                     {"device_free", "Free on the device", deviceFree},
                     {"reserved", "Reserved by the process", reserved},
                     {"live", "Requested by live tensors", live},
                     {"reserved_unused", "Reserved but unused", unused},
                     {"live_tensors", "Live tensors", static_cast<int64_t>(activeIds.size()), false},
                     {"largest_live", "Largest live tensor", largest}};
        out.push_back(std::move(d));
    }
    return out;
}

} // namespace memscope
