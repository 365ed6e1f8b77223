#pragma once

#include "common/strong_id.h"

#include <cstdint>

namespace memscope {

// Frozen: a container the sink has already converted, standing for a sink-defined token
// (e.g. a list of frames that became a StackId), so it no longer needs a node.
enum class PickleKind : uint8_t { None, Bool, Int, Float, String, Bytes, Container, Frozen };

// One value on the pickle VM's stack or in its memo. Scalars are held inline,
// strings as interned ids, containers as handles owned by the PickleSink.
struct PickleValue {
    PickleKind kind = PickleKind::None;
    bool unsignedInt = false; // Int: the bits are a uint64 above INT64_MAX
    bool boolean = false;
    uint32_t generation = 0; // Container: guards against a handle the sink recycled
    union {
        int64_t i = 0;
        double f;
        int32_t str; // String/Bytes: StringId value
        uint32_t node; // Container: node index; Frozen: the sink's token
    };

    static PickleValue none() { return {}; }
    static PickleValue fromBool(bool b)
    {
        PickleValue v;
        v.kind = PickleKind::Bool;
        v.boolean = b;
        v.i = b;
        return v;
    }
    static PickleValue fromInt(int64_t x)
    {
        PickleValue v;
        v.kind = PickleKind::Int;
        v.i = x;
        return v;
    }
    static PickleValue fromUInt(uint64_t x)
    {
        PickleValue v;
        v.kind = PickleKind::Int;
        v.i = static_cast<int64_t>(x);
        v.unsignedInt = x > static_cast<uint64_t>(INT64_MAX);
        return v;
    }
    static PickleValue fromFloat(double x)
    {
        PickleValue v;
        v.kind = PickleKind::Float;
        v.f = x;
        return v;
    }
    static PickleValue fromString(StringId id, bool bytes = false)
    {
        PickleValue v;
        v.kind = bytes ? PickleKind::Bytes : PickleKind::String;
        v.str = id.value;
        return v;
    }
    static PickleValue fromFrozen(uint32_t token)
    {
        PickleValue v;
        v.kind = PickleKind::Frozen;
        v.node = token;
        return v;
    }
    static PickleValue fromNode(uint32_t node, uint32_t generation)
    {
        PickleValue v;
        v.kind = PickleKind::Container;
        v.node = node;
        v.generation = generation;
        return v;
    }
};

const char* pickleKindName(PickleKind k);

} // namespace memscope
