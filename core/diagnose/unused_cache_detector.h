#pragma once

#include "diagnose/device_context.h"
#include "diagnose/diagnostic.h"

#include <optional>

namespace memscope {

/*
 * Cached but unused memory, from the allocator's segments when the snapshot was taken
 * (exact, block by block) and from the curves over the trace:
 *
 *   reserved            the device's segments, total size
 *   in use              active blocks (allocated or pending free), rounded sizes
 *   unused              reserved - in use: the cache
 *   empty_cache()       what it would return: whole segments with no active block, and for
 *                       expandable segments the 2 MiB pages lying entirely in free blocks
 *   fragmentation       1 - largest free block / free total (the one definition: query/free_space.h)
 *   at the reserved peak: reserved - requested there
 *
 * Reported (Info: the cache is reused, it costs this process nothing) when the cache is at
 * least 64 MiB and 20% of reserved, or when the free memory is fragmented: at least
 * 256 MiB free whose largest block is under a quarter of it (the fix then says so; an OOM
 * that fragmentation caused is the OOM finding's to tell). Without segments (no dump-time state for the device) the end of the
 * curves stands in and the block figures are left out.
 */
std::optional<Diagnostic> detectUnusedCache(const DeviceContext& ctx);

} // namespace memscope
