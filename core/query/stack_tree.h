#pragma once

#include "replay/replay.h"
#include "snapshot/frame_classifier.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace memscope {

/*
 * Memory by call stack, as a tree (the flame graph, drawn as an icicle): the root is every
 * allocation counted, and each node below it a frame, from the outermost (the program's entry)
 * to the innermost (the allocator), one node per distinct path. Each counted allocation adds
 * its weight to every node of its stack's path; a node's weight is therefore its children's
 * plus its own (`selfWeight`: allocations whose stack ends there), and the root's is the total.
 *
 * Two weights:
 *   ActiveBytes  the allocations active after one event (the peak, the selected time), each
 *                weighing its size in bytes: the root is the requested bytes at that event,
 *                the breakdown's total (point_report.h).
 *   ByteSeconds  the allocations active at any point of an inclusive event range, each weighing
 *                size × its lifetime clipped to the range, in byte-seconds of the trace's
 *                time_us (an allocation made before the trace starts at the range's start, one
 *                never freed ends at the range's end). A trace without times weighs in
 *                byte-events instead (`unit` says which).
 *
 * Frames: `All` keeps every frame (native ones without a name show as frame_classifier writes
 * them). `UserAndOp` keeps the user's frames (frame_classifier's isLibrary) and ends each path
 * with one node for the operation behind the allocation (FrameClassifier::opText), or the
 * library summary when the stack has no user frame. A stack with no frames recorded is a
 * node "(no frames)" under the root. The tree is built once per distinct stack (allocations
 * are summed by StackId first), so its cost is the distinct stacks' frames, not the
 * allocations'. Children are ordered by weight, heaviest first.
 */
enum class StackTreeWeight { ActiveBytes, ByteSeconds };
enum class StackTreeFrames { All, UserAndOp };
enum class StackTreeUnit { Bytes, ByteSeconds, ByteEvents };

struct StackTreeNode {
    FrameId frame; // invalid for the root and synthetic nodes (op, "(no frames)")
    std::string label; // text of a synthetic node; empty for frame nodes
    int32_t parent = -1;
    int32_t depth = 0; // the root is 0
    std::vector<int32_t> children; // heaviest first
    double weight = 0; // bytes (ActiveBytes) or byte-seconds / byte-events (ByteSeconds)
    double selfWeight = 0;
    int64_t bytes = 0; // sizes of the allocations under it (each counted once)
    int64_t count = 0; // allocations under it
};

struct StackTree {
    StackTreeWeight weight = StackTreeWeight::ActiveBytes;
    StackTreeFrames frames = StackTreeFrames::All;
    StackTreeUnit unit = StackTreeUnit::Bytes;
    size_t deviceIndex = 0;
    int64_t firstEvent = -1; // ActiveBytes: the event; ByteSeconds: the range
    int64_t lastEvent = -1;
    std::vector<StackTreeNode> nodes; // nodes[0] is the root
    int maxDepth = 0;

    const StackTreeNode& root() const { return nodes.front(); }
    const StackTreeNode& node(int32_t i) const { return nodes[static_cast<size_t>(i)]; }
    // The nodes from the root's child down to `i` (empty for the root).
    std::vector<int32_t> path(int32_t i) const;
};

// What is active after `event` (-1: before the first event), by stack, weighed in bytes.
std::shared_ptr<const StackTree> stackTreeAt(const Replay& replay, size_t deviceIndex, const FrameClassifier& frames,
                                             int64_t event, StackTreeFrames mode = StackTreeFrames::All);

// What is active during the inclusive event range, weighed by size × lifetime clipped to it.
std::shared_ptr<const StackTree> stackTreeOverRange(const Replay& replay, size_t deviceIndex, const FrameClassifier& frames,
                                                    int64_t firstEvent, int64_t lastEvent,
                                                    StackTreeFrames mode = StackTreeFrames::All);

// Which stacks of the snapshot lie under `node` (their path in the tree's frame mode starts with
// the node's path): one flag per StackId of the snapshot's StackPool, and a last one for
// allocations with no frames (index stacks.size()). Every stack for the root.
std::vector<uint8_t> stacksUnder(const StackTree& tree, int32_t node, const FrameClassifier& frames);

// A node's text: frame_classifier's frameText, or the synthetic label ("all" for the root).
std::string stackTreeNodeText(const StackTree& tree, int32_t node, const FrameClassifier& frames);

} // namespace memscope
