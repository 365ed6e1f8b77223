#include "snapshot/annotation_spans.h"

#include <map>

namespace memscope {

std::vector<AnnotationSpan> annotationSpans(const Snapshot& s, int device)
{
    bool any = false;
    for (const Annotation& a : s.annotations)
        any = any || a.device == device;
    std::vector<AnnotationSpan> out;
    std::map<int32_t, std::vector<int64_t>> open; // name id -> start times
    for (const Annotation& a : s.annotations) {
        if (any && a.device != device)
            continue;
        auto& stack = open[a.name.value];
        if (a.stage == AnnotationStage::Start) {
            stack.push_back(a.timeUs);
        } else if (!stack.empty()) {
            out.push_back({a.name, stack.back(), a.timeUs});
            stack.pop_back();
        }
    }
    for (const Annotation& a : s.annotations) {
        auto it = open.find(a.name.value);
        if (it == open.end())
            continue;
        for (int64_t t : it->second)
            out.push_back({a.name, t, std::numeric_limits<int64_t>::max()});
        open.erase(it);
    }
    return out;
}

} // namespace memscope
