#pragma once

#include "snapshot/snapshot.h"

#include <span>
#include <string>

namespace memscope {

// Fills `snapshot` from the JSON form of a snapshot (the same keys as the pickle).
// Throws LoadError with the byte offset of a syntax error or the key path of a wrong type.
void readJsonSnapshot(std::span<const uint8_t> bytes, const std::string& name, Snapshot& snapshot);

} // namespace memscope
