#include "query/module_breakdown.h"

#include "snapshot/stack_labels.h"

#include <algorithm>
#include <string_view>
#include <unordered_map>

namespace memscope {

ModuleBreakdown moduleBreakdown(const PointReport& point, const FrameClassifier& frames, size_t depth)
{
    ModuleBreakdown out;
    out.depth = std::max<size_t>(depth, 1);
    const StackLabels& labels = frames.labels();
    std::unordered_map<std::string_view, size_t> rowOf; // by module prefix
    std::array<int64_t, kCategoryCount> outside{}; // row index + 1 of each category's "(no module)" row
    std::unordered_map<uint32_t, size_t> rowOfPath; // a path id's row, found once
    auto share = [&](size_t row, const ActiveAllocation& l) {
        ModuleShare& m = out.rows[row];
        m.bytes += l.size;
        m.count += 1;
        m.byCategory[static_cast<size_t>(l.category)] += l.size;
    };
    for (const ActiveAllocation& l : point.live) {
        out.bytes += l.size;
        out.count += 1;
        const uint32_t id = labels.moduleId(l.stack);
        if (id == 0) {
            int64_t& k = outside[static_cast<size_t>(l.category)];
            if (k == 0) {
                ModuleShare m;
                m.module = "(no module) · " + std::string(categoryLabel(l.category));
                out.rows.push_back(std::move(m));
                k = static_cast<int64_t>(out.rows.size());
            }
            share(static_cast<size_t>(k - 1), l);
            continue;
        }
        auto found = rowOfPath.find(id);
        if (found == rowOfPath.end()) {
            const ModulePath& path = labels.paths()[id];
            out.maxDepth = std::max(out.maxDepth, path.depth());
            const std::string_view key = path.prefix(out.depth);
            auto [it, added] = rowOf.try_emplace(key, out.rows.size());
            if (added) {
                ModuleShare m;
                m.module = std::string(key);
                m.inModule = true;
                m.levels = std::min(out.depth, path.depth());
                out.rows.push_back(std::move(m));
            }
            found = rowOfPath.emplace(id, it->second).first;
        }
        share(found->second, l);
    }
    for (ModuleShare& m : out.rows)
        m.category = static_cast<Category>(std::max_element(m.byCategory.begin(), m.byCategory.end()) - m.byCategory.begin());
    std::sort(out.rows.begin(), out.rows.end(), [](const ModuleShare& a, const ModuleShare& b) {
        return a.bytes != b.bytes ? a.bytes > b.bytes : a.module < b.module;
    });
    return out;
}

} // namespace memscope
