#pragma once

#include "pickle/pickle_value.h"

#include <span>

namespace memscope {

enum class ContainerKind : uint8_t { List, Dict, Tuple, Set };

// What the pickle VM calls as it runs. The sink owns every container; the VM only
// moves handles around, so no generic object tree has to exist. Offsets are the byte
// offset of the opcode being executed, for error messages.
class PickleSink {
public:
    virtual ~PickleSink() = default;

    virtual PickleValue newContainer(ContainerKind kind, int64_t offset) = 0;
    virtual PickleValue newTuple(std::span<const PickleValue> items, int64_t offset) = 0;
    // Items appended to a list or added to a set, in order.
    virtual void append(PickleValue container, std::span<const PickleValue> items, int64_t offset) = 0;
    // Key/value pairs, alternating, set into a dict in order.
    virtual void setItems(PickleValue dict, std::span<const PickleValue> keyValues, int64_t offset) = 0;
    // The memo handed back a container handle; the sink checks it is still valid.
    virtual void checkReference(PickleValue value, int64_t offset) = 0;
    // A container was stored in the memo at `index`. A sink that recycles containers
    // must replace or kill those memo entries first (see PickleMemo).
    virtual void memoized(PickleValue /*container*/, uint64_t /*index*/) { }
    // Optional fast path. The VM is at an EMPTY_DICT opcode, bytes[offset]. A sink may run
    // the opcodes that build and fill that dict itself (through the SETITEMS that fills it),
    // leaving the memo exactly as the VM would, and return how many bytes it consumed with
    // the dict's handle in `dict`; 0 means not handled: the VM runs them as usual.
    virtual size_t fastDict(std::span<const uint8_t> /*bytes*/, size_t /*offset*/, PickleValue& /*dict*/) { return 0; }
    // Optional, for a parallel parse. The VM is at a MARK, bytes[offset], with `list` on top
    // of its stack and an EMPTY_DICT next. A sink may run whole batches from there
    // (MARK entries APPENDS, ...) into `list`, leaving the memo exactly as the VM would and
    // the stack as it is, and return how many bytes it consumed; 0: the VM runs them.
    virtual size_t fastBatches(std::span<const uint8_t> /*bytes*/, size_t /*offset*/, PickleValue /*list*/) { return 0; }
    // STOP: the value left on the stack.
    virtual void finish(PickleValue root, int64_t offset) = 0;
};

} // namespace memscope
