#pragma once

#include "diagnose/device_context.h"
#include "diagnose/diagnostic.h"

#include <vector>

namespace memscope {

/*
 * Out of memory: one finding per `oom` trace entry, from that entry (the size asked for,
 * `device_free`: what the driver reported free) and the replay at that event (reserved,
 * requested by live tensors, the live set itself).
 *
 * The cause is read off the numbers, in this order:
 *   - the device had at least the size free: the limit was the process's own cap
 *     (torch.cuda.set_per_process_memory_fraction, a MIG slice), not the GPU;
 *   - reserved-but-unused memory is at least the size: enough was cached, but not in
 *     one piece (fragmentation);
 *   - otherwise the device was full of live tensors.
 * The largest live allocations at that moment are the evidence, grouped by call site,
 * with the categories holding the live bytes.
 */
std::vector<Diagnostic> detectOutOfMemory(const DeviceContext& ctx);

} // namespace memscope
