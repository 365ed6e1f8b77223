#pragma once

#include "query/point_report.h"
#include "snapshot/frame_classifier.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace memscope {

/*
 * The bytes live at one point (a PointReport, the peak by default) by nn.Module path
 * (snapshot/stack_labels.h says how a stack's path is found). At depth d an allocation counts
 * under the first d levels of its path, a shorter path under the whole of it, so the rows of
 * every depth add up to the point's live bytes: depth 1 is the top-level blocks (the causal
 * LM's body and its head, "(recompute)", "(backward)"), each deeper level splits them by the
 * child each called. Allocations outside any module (parameters built outside a forward,
 * optimizer state, a backward recorded without frames) are rowed by their category,
 * "(no module) · Parameters". Rows come most bytes first, ties by name.
 */
struct ModuleShare {
    std::string module; // the first `depth` levels of the path, or "(no module) · <category>"
    bool inModule = false; // false: a "(no module)" row
    size_t levels = 0; // levels of `module` (0 for a "(no module)" row)
    int64_t bytes = 0;
    int64_t count = 0;
    Category category = Category::Other; // holding most of its bytes
    std::array<int64_t, kCategoryCount> byCategory{};
};

struct ModuleBreakdown {
    size_t depth = 1;
    size_t maxDepth = 0; // the deepest path of the point's live allocations
    int64_t bytes = 0; // every row's bytes: the point's live bytes
    int64_t count = 0;
    std::vector<ModuleShare> rows;
};

ModuleBreakdown moduleBreakdown(const PointReport& point, const FrameClassifier& frames, size_t depth);

} // namespace memscope
