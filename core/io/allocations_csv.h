#pragma once

#include "attribute/attribution.h"

#include <ostream>

namespace memscope {

/*
 * `memscope allocations`: one row per allocation of one device, in AllocationId order
 * (blocks alive before the trace first):
 *
 *   alloc_event, free_requested_event, free_event   indices into device_traces[device];
 *                                                   -1: before the trace / never / alive at the end
 *   alloc_time_us, addr, size, stream               size = requested bytes; addr in decimal
 *   category, phase, iteration                      the attribution (iteration -1: outside any)
 *   top_frame                                       "file:line name" of the innermost user frame
 *                                                   (a native frame: its symbol), else of the
 *                                                   innermost frame that is neither the allocator's
 *                                                   capture machinery nor tensor-creation plumbing
 *                                                   (at::empty…); empty without frames
 *   op, module                                      the operation and the nn.Module path of its
 *                                                   stack (FrameClassifier::opText, moduleText;
 *                                                   snapshot/stack_labels.h); empty where none
 *
 * Fields are RFC 4180 quoted where needed.
 */
void writeAllocationsCsv(std::ostream& out, const Attribution& attribution, size_t deviceIndex);

} // namespace memscope
