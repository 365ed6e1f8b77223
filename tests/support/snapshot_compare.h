#pragma once

#include "snapshot/snapshot.h"

#include <string>

namespace memscope::test {

// Empty when two snapshots hold the same model (events with their user_metadata,
// compile_context, pool_id and forward_frames, stacks as text with FX fields, segments with
// their pool, annotations, the host device); otherwise the first difference.
std::string compareSnapshots(const Snapshot& a, const Snapshot& b);

} // namespace memscope::test
