#pragma once

#include "snapshot/snapshot.h"

#include <cstdint>
#include <vector>

namespace memscope {

// A stretch of events recorded under one user_metadata text, or one `annotate` marker.
struct MetadataSpan {
    int64_t firstEvent = 0;
    int64_t lastEvent = 0; // inclusive; == firstEvent for a marker
    StringId text;
    bool marker = false; // an `annotate` entry (torch.cuda.memory._annotate_tensor / user_defined)
};

/*
 * What the program said about its memory on one device, in event order:
 * torch.cuda.memory._set_memory_metadata(text) stamps every later event of its thread with
 * `user_metadata` until it is set again, so consecutive events of one non-empty text are one
 * span (a change of text starts the next; empty text ends it); an `annotate` entry is a
 * marker of its own, its text in `user_metadata`, and does not break the span around it.
 * Plain text and JSON text are both kept as written.
 */
std::vector<MetadataSpan> metadataSpans(const Snapshot& snapshot, const EventTable& events);

} // namespace memscope
