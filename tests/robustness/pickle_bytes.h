#pragma once

#include "pickle/pickle_opcodes.h"

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace memscope::test {

/*
 * Hand-made pickles for the robustness tests: a tiny value tree (Py) written as
 * protocol-2 opcodes, and raw opcode bytes for the hostile cases that no pickler writes.
 */
struct Py {
    enum class Kind { None, Int, UInt, Float, Str, List, Dict, Tuple, Raw };
    Kind kind = Kind::None;
    int64_t i = 0;
    uint64_t u = 0;
    double f = 0;
    std::string s; // Str text, or Raw bytes
    std::vector<Py> items; // List, Tuple
    std::vector<std::pair<std::string, Py>> keyed; // Dict (string keys)

    static Py none() { return {}; }
    static Py integer(int64_t v)
    {
        Py p;
        p.kind = Kind::Int;
        p.i = v;
        return p;
    }
    static Py uinteger(uint64_t v)
    {
        Py p;
        p.kind = Kind::UInt;
        p.u = v;
        return p;
    }
    static Py real(double v)
    {
        Py p;
        p.kind = Kind::Float;
        p.f = v;
        return p;
    }
    static Py str(std::string v)
    {
        Py p;
        p.kind = Kind::Str;
        p.s = std::move(v);
        return p;
    }
    static Py list(std::vector<Py> v)
    {
        Py p;
        p.kind = Kind::List;
        p.items = std::move(v);
        return p;
    }
    static Py tuple(std::vector<Py> v)
    {
        Py p;
        p.kind = Kind::Tuple;
        p.items = std::move(v);
        return p;
    }
    static Py dict(std::vector<std::pair<std::string, Py>> v)
    {
        Py p;
        p.kind = Kind::Dict;
        p.keyed = std::move(v);
        return p;
    }
    // Opcodes written as they are, where a value belongs.
    static Py raw(std::string bytes)
    {
        Py p;
        p.kind = Kind::Raw;
        p.s = std::move(bytes);
        return p;
    }
};

inline void putLE(std::string& out, uint64_t v, int bytes)
{
    for (int k = 0; k < bytes; ++k)
        out += static_cast<char>((v >> (8 * k)) & 0xff);
}

inline void writeStr(std::string& out, std::string_view s)
{
    out += static_cast<char>(pickle_op::kBinUnicode);
    putLE(out, s.size(), 4);
    out += s;
}

inline void writePy(std::string& out, const Py& p)
{
    switch (p.kind) {
    case Py::Kind::None: out += static_cast<char>(pickle_op::kNone); break;
    case Py::Kind::Int:
        if (p.i >= INT32_MIN && p.i <= INT32_MAX) {
            out += static_cast<char>(pickle_op::kBinInt);
            putLE(out, static_cast<uint32_t>(static_cast<int32_t>(p.i)), 4);
        } else {
            out += static_cast<char>(pickle_op::kLong1);
            out += '\x08';
            putLE(out, static_cast<uint64_t>(p.i), 8);
        }
        break;
    case Py::Kind::UInt: // LONG1, 9 bytes: a positive value of up to 64 bits
        out += static_cast<char>(pickle_op::kLong1);
        out += '\x09';
        putLE(out, p.u, 8);
        out += '\0';
        break;
    case Py::Kind::Float: {
        uint64_t bits;
        static_assert(sizeof bits == sizeof p.f);
        __builtin_memcpy(&bits, &p.f, sizeof bits);
        out += static_cast<char>(pickle_op::kBinFloat);
        for (int k = 7; k >= 0; --k)
            out += static_cast<char>((bits >> (8 * k)) & 0xff);
        break;
    }
    case Py::Kind::Str: writeStr(out, p.s); break;
    case Py::Kind::List:
        out += static_cast<char>(pickle_op::kEmptyList);
        for (const Py& item : p.items) {
            writePy(out, item);
            out += static_cast<char>(pickle_op::kAppend);
        }
        break;
    case Py::Kind::Tuple:
        out += static_cast<char>(pickle_op::kMark);
        for (const Py& item : p.items)
            writePy(out, item);
        out += static_cast<char>(pickle_op::kTuple);
        break;
    case Py::Kind::Dict:
        out += static_cast<char>(pickle_op::kEmptyDict);
        for (const auto& [k, v] : p.keyed) {
            writeStr(out, k);
            writePy(out, v);
            out += static_cast<char>(pickle_op::kSetItem);
        }
        break;
    case Py::Kind::Raw: out += p.s; break;
    }
}

// PROTO 2, the value, STOP.
inline std::string pickled(const Py& root)
{
    std::string out{static_cast<char>(pickle_op::kProto), '\x02'};
    writePy(out, root);
    out += static_cast<char>(pickle_op::kStop);
    return out;
}

// {"segments": segments, "device_traces": [events]}
inline Py snapshotOf(std::vector<Py> events, std::vector<Py> segments = {})
{
    return Py::dict({{"segments", Py::list(std::move(segments))}, {"device_traces", Py::list({Py::list(std::move(events))})}});
}

} // namespace memscope::test
