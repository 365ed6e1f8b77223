#pragma once

#include "attribute/attribution.h"
#include "diagnose/diagnostic.h"
#include "snapshot/frame_classifier.h"
#include "replay/device_replay.h"

#include <string>
#include <vector>

namespace memscope {

// Fills a finding's evidence from a set of allocations: the largest first (capped at
// kMaxEvidenceAllocations) and their call sites grouped by stack, most bytes first.
void setEvidence(Diagnostic& d, const DeviceReplay& replay, std::vector<AllocationId> ids);

// The user frame (innermost frame of the program's own code) under which the most bytes of
// `ids` were allocated; invalid when none of them has one.
FrameId dominantUserFrame(const FrameClassifier& frames, const DeviceReplay& replay, const std::vector<AllocationId>& ids);

// "train.py:75 loss_leak" for a user frame, else the stack's summary, else "(no frames)".
std::string siteText(const FrameClassifier& frames, StackId stack);
std::string frameOrUnknown(const FrameClassifier& frames, FrameId frame);

// Sum of the sizes of `ids`.
int64_t bytesOf(const DeviceReplay& replay, const std::vector<AllocationId>& ids);

// True when the allocation's free (the free_requested, else the free_completed) falls in a
// backward: a tensor saved for backward, not one kept by mistake.
bool freedInBackward(const DeviceAttribution& attribution, const Allocation& a);

// "Forward" -> "forward": labels inside a sentence.
std::string lowerFirst(std::string_view label);

// "45%" for 0.45.
std::string percentText(double fraction);

} // namespace memscope
