#pragma once

#include "diagnose/diagnostic.h"
#include "snapshot/frame_classifier.h"
#include "replay/replay.h"

#include <optional>
#include <string>

namespace memscope {

/*
 * report.json's "diagnostics": a JSON array, one object per finding:
 *   kind, severity, device, message, detail, bytes, bytes_per_iteration (growth only),
 *   iterations, event_index, figures {key: value}, fix,
 *   evidence {allocations: [{id, address, size, alloc_event, free_event, stack_id}] (the
 *   largest, at most `maxAllocations`), call_sites: [{stack_id, bytes, count,
 *   top_user_frame, stack}]}
 * `device` (an index into replay.devices) keeps only that device's findings.
 * Embed it with nlohmann: root["diagnostics"] = Json::parse(diagnosticsToJson(...)).
 */
std::string diagnosticsToJson(const Diagnostics& diagnostics, const Replay& replay, const FrameClassifier& frames,
                              std::optional<size_t> device = {}, int indent = 2, size_t maxAllocations = 20);

// The `memscope diagnose` text: one block per finding (severity, message, fix, call sites).
std::string diagnosticsText(const Diagnostics& diagnostics, const FrameClassifier& frames, std::optional<size_t> device = {});

} // namespace memscope
