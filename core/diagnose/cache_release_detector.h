#pragma once

#include "diagnose/device_context.h"
#include "diagnose/diagnostic.h"

#include <optional>

namespace memscope {

/*
 * Cache handed back to the driver: `segment_free` / `segment_unmap` events.
 *
 * Consecutive segment frees with no allocation between them form one release. A release
 * whose stack passes through `empty_cache` is the program's torch.cuda.empty_cache(); one
 * whose next allocator event is a `segment_alloc` is the allocator freeing its cache to
 * satisfy a cudaMalloc that failed (the device was nearly full: a Warning); others are
 * reported as they are (garbage collection threshold, expandable segments shrinking).
 * One finding per device: the total handed back, the largest release with its call site
 * and the reserved bytes before and after it, and every release's call site as evidence.
 */
std::optional<Diagnostic> detectCacheRelease(const DeviceContext& ctx);

} // namespace memscope
