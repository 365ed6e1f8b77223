#include "io/flame_writer.h"

#include "common/format_bytes.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <sstream>

namespace memscope {

namespace {

using Json = nlohmann::ordered_json;

const char* unitName(StackTreeUnit u)
{
    switch (u) {
    case StackTreeUnit::Bytes: return "active_bytes";
    case StackTreeUnit::ByteSeconds: return "byte_seconds";
    case StackTreeUnit::ByteEvents: return "byte_events";
    }
    return "active_bytes";
}

Json node(const StackTree& t, int32_t i, const FrameClassifier& frames)
{
    const StackTreeNode& n = t.node(i);
    Json j;
    j["name"] = stackTreeNodeText(t, i, frames);
    j["location"] = n.frame.valid() ? frames.frameLocation(n.frame) : std::string();
    j["library"] = n.frame.valid() && frames.isLibrary(n.frame);
    j["bytes"] = n.bytes;
    j["count"] = n.count;
    if (t.weight == StackTreeWeight::ActiveBytes)
        j["self_bytes"] = static_cast<int64_t>(n.selfWeight);
    else
        j[unitName(t.unit)] = n.weight;
    Json children = Json::array();
    for (int32_t c : n.children)
        children.push_back(node(t, c, frames));
    j["children"] = std::move(children);
    return j;
}

std::string escape(const std::string& s)
{
    std::string out;
    out.reserve(s.size());
    for (char c : s) {
        switch (c) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"': out += "&quot;"; break;
        default: out += c;
        }
    }
    return out;
}

// Cuts a UTF-8 string to at most `chars` code points, "…" at the end when cut.
std::string elide(const std::string& s, size_t chars)
{
    size_t count = 0, i = 0;
    for (; i < s.size(); ++i)
        if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80 && count++ == chars)
            break;
    if (i >= s.size())
        return s;
    if (chars == 0)
        return {};
    // back off one code point for the ellipsis
    size_t cut = i;
    do
        --cut;
    while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80);
    return s.substr(0, cut) + "…";
}

std::string weightText(const StackTree& t, double w)
{
    if (t.unit == StackTreeUnit::Bytes)
        return formatBytes(static_cast<int64_t>(w));
    char buf[64];
    std::snprintf(buf, sizeof buf, "%s%s", formatBytes(static_cast<int64_t>(std::llround(w))).c_str(),
                  t.unit == StackTreeUnit::ByteSeconds ? "·s" : "·events");
    return buf;
}

} // namespace

std::string flameJson(const StackTree& tree, const FrameClassifier& frames)
{
    Json j;
    j["device"] = static_cast<int>(tree.deviceIndex);
    if (tree.weight == StackTreeWeight::ActiveBytes) {
        j["event"] = tree.firstEvent;
    } else {
        j["first_event"] = tree.firstEvent;
        j["last_event"] = tree.lastEvent;
    }
    j["weight"] = unitName(tree.unit);
    j["frames"] = tree.frames == StackTreeFrames::All ? "all" : "user_and_op";
    j["root"] = node(tree, 0, frames);
    return j.dump(1) + "\n";
}

std::string flameSvg(const StackTree& tree, const FrameClassifier& frames, const std::string& title, int width)
{
    const int rowHeight = 17, top = 30, margin = 10;
    const double charWidth = 6.6; // 11 px sans-serif, on average
    const int height = top + (tree.maxDepth + 1) * rowHeight + margin;
    const double total = tree.root().weight;
    const double scale = total > 0 ? (width - 2 * margin) / total : 0;
    std::ostringstream out;
    out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height << "\" viewBox=\"0 0 "
        << width << ' ' << height << "\" font-family=\"sans-serif\" font-size=\"11\">\n"
        << "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n"
        << "<text x=\"" << margin << "\" y=\"19\" font-size=\"14\">" << escape(title) << "</text>\n";
    // Depth-first, each node at its parent's left edge plus its elder siblings' widths.
    struct Item {
        int32_t node;
        double x;
    };
    std::vector<Item> stack{{0, static_cast<double>(margin)}};
    while (!stack.empty()) {
        const Item it = stack.back();
        stack.pop_back();
        const StackTreeNode& n = tree.node(it.node);
        const double w = n.weight * scale;
        if (w < 0.5 && it.node != 0)
            continue;
        const double y = top + n.depth * rowHeight;
        const bool library = n.frame.valid() && frames.isLibrary(n.frame);
        // a stable colour per name within the frame's family
        const std::string name = stackTreeNodeText(tree, it.node, frames);
        const unsigned hash = static_cast<unsigned>(std::hash<std::string>{}(name));
        char fill[16];
        if (!n.frame.valid())
            std::snprintf(fill, sizeof fill, "#%02x%02x%02x", 190 + hash % 30, 190 + hash % 30, 200 + hash % 30);
        else if (library)
            std::snprintf(fill, sizeof fill, "#%02x%02x%02x", 110 + hash % 50, 160 + (hash >> 8) % 50, 220);
        else
            std::snprintf(fill, sizeof fill, "#%02x%02x%02x", 235, 120 + hash % 90, 50 + (hash >> 8) % 40);
        const double share = total > 0 ? 100.0 * n.weight / total : 0;
        char shareText[32];
        std::snprintf(shareText, sizeof shareText, "%.1f%%", share);
        std::string tip = name;
        if (n.frame.valid())
            tip += "\n" + frames.frameLocation(n.frame);
        tip += "\n" + weightText(tree, n.weight) + " (" + shareText + "), " + std::to_string(n.count) + " allocations";
        char rect[160];
        std::snprintf(
            rect, sizeof rect,
            "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%d\" fill=\"%s\" stroke=\"#ffffff\" stroke-width=\"0.5\"/>",
            it.x, y, w, rowHeight - 1, fill);
        out << "<g><title>" << escape(tip) << "</title>" << rect;
        const size_t chars = w > 8 ? static_cast<size_t>((w - 6) / charWidth) : 0;
        if (chars >= 3)
            out << "<text x=\"" << it.x + 3 << "\" y=\"" << y + rowHeight - 5 << "\">"
                << escape(elide(it.node == 0 ? "all (" + weightText(tree, total) + ")" : name, chars)) << "</text>";
        out << "</g>\n";
        double x = it.x;
        std::vector<Item> children;
        for (int32_t c : n.children) {
            children.push_back({c, x});
            x += tree.node(c).weight * scale;
        }
        stack.insert(stack.end(), children.rbegin(), children.rend());
    }
    out << "</svg>\n";
    return out.str();
}

} // namespace memscope
