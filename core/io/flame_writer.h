#pragma once

#include "query/stack_tree.h"

#include <string>

namespace memscope {

/*
 * The flame graph (query/stack_tree.h) as the report writes it, beside report.json:
 *
 * flame.json  {"device", "event" (ActiveBytes) or "first_event"/"last_event" (ByteSeconds),
 *             "weight": "active_bytes" | "byte_seconds" | "byte_events", "frames": "all" |
 *             "user_and_op", "root": NODE}, NODE = {"name", "location" (path:line, "" for the
 *             root and synthetic nodes), "library" (bool), "bytes", "count", "self_bytes"?,
 *             "byte_seconds" (ByteSeconds trees only), "children": [NODE…] (heaviest first)}.
 *             "bytes" is the sizes of the allocations under the node, each counted once.
 * flame.svg   the icicle: the root on top, each frame below its caller, widths ∝ weight, the
 *             frame's text elided inside, a <title> tooltip (frame, location, weight, share);
 *             user frames warm, library frames cool, synthetic nodes grey. Nodes under half a
 *             pixel are left out (their weight stays in their parent's width).
 */
std::string flameJson(const StackTree& tree, const FrameClassifier& frames);
std::string flameSvg(const StackTree& tree, const FrameClassifier& frames, const std::string& title, int width = 1200);

} // namespace memscope
