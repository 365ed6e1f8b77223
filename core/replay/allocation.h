#pragma once

#include "common/strong_id.h"

#include <cstdint>

namespace memscope {

// One block's life as the trace tells it: from its `alloc` to the `free_completed` at
// the same address. Allocations made before recording began have no alloc event.
struct Allocation {
    EventIndex allocEvent; // invalid: existed before the trace starts
    EventIndex freeRequestedEvent; // invalid: never requested
    EventIndex freeEvent; // the free_completed; invalid: alive at the end
    uint64_t addr = 0;
    uint64_t size = 0; // requested bytes
    uint64_t stream = 0;
    StackId stack; // frames of the alloc (of the block, for reconstructed ones)

    bool preexisting() const { return !allocEvent.valid(); }
    bool aliveAtEnd() const { return !freeEvent.valid(); }
    // Live after event i (i = -1: before the first event).
    bool activeAfter(int64_t i) const
    {
        return (!allocEvent.valid() || allocEvent.value <= i) && (!freeEvent.valid() || freeEvent.value > i);
    }
};

struct Peak {
    int64_t bytes = 0;
    EventIndex event; // invalid when the peak is the state before the first event
    int64_t timeUs = 0;
};

} // namespace memscope
