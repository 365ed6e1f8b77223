#pragma once

#include "snapshot/snapshot.h"

#include <string>

namespace memscope::test {

// Empty when two snapshots hold the same model (events, stacks as text, segments,
// annotations); otherwise the first difference.
std::string compareSnapshots(const Snapshot& a, const Snapshot& b);

} // namespace memscope::test
