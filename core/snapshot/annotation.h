#pragma once

#include "common/strong_id.h"

#include <cstdint>

namespace memscope {

enum class AnnotationStage : uint8_t { Start, End };

// One entry of `external_annotations`: a record_function range edge.
struct Annotation {
    StringId name;
    AnnotationStage stage = AnnotationStage::Start;
    int device = 0;
    int64_t timeUs = 0;
};

} // namespace memscope
