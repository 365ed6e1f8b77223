#pragma once

#include "snapshot/snapshot.h"

#include <string>

namespace memscope {

/*
 * Writes a Snapshot as the pickle torch.cuda.memory._dump_snapshot() writes:
 * protocol 4, framed (FRAME every ~64 KiB), with the same keys and value types, so
 * memscope, PyTorch's memory viewer (MemoryViz.js) and Python's pickle.load open it.
 *
 * Only opcodes the viewer's own unpickler knows are used: PROTO, FRAME, EMPTY_DICT,
 * EMPTY_LIST, MARK, SETITEMS, APPENDS, MEMOIZE, BINGET/LONG_BINGET, SHORT_BINUNICODE/
 * BINUNICODE, BININT1/BININT2/BININT/LONG1, BINFLOAT, NEWTRUE/NEWFALSE, NONE, TUPLE2,
 * STOP. Every distinct string, frame dict and frame list is written once and then
 * referred to through the memo, as in PyTorch's own dumps.
 *
 * What newer recordings carry is written back as torch writes it: `pool_id` on the events of
 * private pools, `forward_frames` (strings, or frame dicts where the frames have more),
 * `compile_context`, `user_metadata`, FX frame fields, `segment_pool_id`, and pinned host
 * memory (the device of ordinal -1) as `host_segments` and `host_traces`.
 *
 * allocator_settings are kept as text in the model; they are written back typed
 * (True/False/None, integers, floats, strings) and re-nested at the dots.
 */
std::string pickleSnapshot(const Snapshot& snapshot);

// Writes to `path` through a temporary file renamed into place. Throws
// std::runtime_error naming the file on failure.
void writePickleSnapshotFile(const Snapshot& snapshot, const std::string& path);

} // namespace memscope
