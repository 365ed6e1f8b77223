#pragma once

#include "attribute/attribution.h"
#include "replay/replay.h"
#include "snapshot/python_stacks.h"

#include <cstdint>
#include <vector>

namespace memscope {

/*
 * Convolution workspaces, which a program does without when memory is short: cuDNN tries
 * its plans in order, and torch takes the next plan (a smaller workspace, or none) when the
 * caching allocator throws out-of-memory for one plan's workspace. Under a capacity the
 * what-ifs drop such an allocation (and its frees) instead of failing.
 *
 * Found from the trace alone: in a convolutional network (at least 4 allocations per forward
 * made by a convolution: conv.py or conv1d/2d/3d on a stack's innermost Python frames, or a
 * convolution operator under them), an Intermediate of the forward made by a convolution,
 * or of the backward with no Python frames (the autograd engine's thread), that is freed
 * before the next allocation begins.
 */
std::vector<uint8_t> convolutionWorkspaces(const Replay& replay, size_t deviceIndex, const DeviceAttribution& attribution,
                                           const PythonStacks& stacks);

// Whether the program is a convolutional network, by the rule above.
bool isConvolutionalNetwork(const Replay& replay, size_t deviceIndex, const DeviceAttribution& attribution,
                            const PythonStacks& stacks);

} // namespace memscope
