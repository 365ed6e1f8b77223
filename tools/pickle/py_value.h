#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace memscope::tools {

/*
 * A small Python value tree (None, int, float, str, list, tuple, dict with str keys) for the
 * robustness tests' hand-made snapshots, pickled as Python's pickle.dumps(protocol=4) would
 * (through PyPickler, the one writer of the tests and benchmarks). The hostile cases that no
 * pickler writes are raw bytes in the tests themselves.
 */
struct Py {
    enum class Kind { None, Int, UInt, Float, Str, List, Dict, Tuple };
    Kind kind = Kind::None;
    int64_t i = 0;
    uint64_t u = 0;
    double f = 0;
    std::string s; // Str text
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
};

// The value as Python's pickle.dumps(value, protocol=4) writes it (PyPickler): PROTO 4,
// frames, MEMOIZE after each str and container, STOP.
std::string pickled(const Py& root);

// {"segments": segments, "device_traces": [events]}
inline Py snapshotOf(std::vector<Py> events, std::vector<Py> segments = {})
{
    return Py::dict({{"segments", Py::list(std::move(segments))}, {"device_traces", Py::list({Py::list(std::move(events))})}});
}

} // namespace memscope::tools
