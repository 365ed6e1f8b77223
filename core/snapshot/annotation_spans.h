#pragma once

#include "snapshot/snapshot.h"

#include <cstdint>
#include <limits>
#include <vector>

namespace memscope {

// One record_function range from `external_annotations`: a START and its END.
struct AnnotationSpan {
    StringId name;
    int64_t startUs = 0;
    int64_t endUs = std::numeric_limits<int64_t>::max(); // max: still open when the snapshot was taken
    bool open() const { return endUs == std::numeric_limits<int64_t>::max(); }
};

/*
 * The annotation ranges of one device, the one pairing the attribution and the GUI share:
 * each END closes the latest unclosed START of the same name (ranges of one name nest); an
 * END with no START is dropped; a START never closed runs to the end. A device's
 * annotations are those naming it; when none does (a single-device recording may name
 * none), all of them. In END order, then the open ones by name in order of appearance.
 */
std::vector<AnnotationSpan> annotationSpans(const Snapshot& snapshot, int device);

} // namespace memscope
