#include "query/metadata_spans.h"

namespace memscope {

std::vector<MetadataSpan> metadataSpans(const Snapshot& s, const EventTable& ev)
{
    std::vector<MetadataSpan> out;
    const size_t n = ev.count();
    if (ev.userMetadata.size() < n)
        return out;
    std::vector<MetadataSpan> markers;
    MetadataSpan open;
    bool isOpen = false;
    StringId openText;
    for (size_t i = 0; i < n; ++i) {
        const StringId text = ev.userMetadata[i];
        const int64_t e = static_cast<int64_t>(i);
        if (ev.action[i] == Action::Annotate) {
            markers.push_back({e, e, text, true});
            continue;
        }
        const bool empty = !text.valid() || s.str(text).empty();
        if (isOpen && (empty || (!(text == openText) && s.str(text) != s.str(openText)))) {
            out.push_back(open);
            isOpen = false;
        }
        if (empty)
            continue;
        if (!isOpen) {
            open = {e, e, text, false};
            openText = text;
            isOpen = true;
        }
        open.lastEvent = e;
    }
    if (isOpen)
        out.push_back(open);
    if (!markers.empty()) {
        std::vector<MetadataSpan> merged;
        merged.reserve(out.size() + markers.size());
        size_t a = 0, b = 0;
        while (a < out.size() || b < markers.size())
            if (b == markers.size() || (a < out.size() && out[a].firstEvent <= markers[b].firstEvent))
                merged.push_back(out[a++]);
            else
                merged.push_back(markers[b++]);
        out = std::move(merged);
    }
    return out;
}

} // namespace memscope
