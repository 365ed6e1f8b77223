#include "pickle/py_value.h"

#include "pickle/py_pickler.h"

#include <cstdio>
#include <cstdlib>
#include <stdexcept>

namespace memscope::tools {

namespace {

void write(PyPickler& p, const Py& v);

// Python's batch_list / batch_dict: one item alone with APPEND / SETITEM, more in batches of
// 1000 between MARK and APPENDS / SETITEMS (a last batch of one alone again).
template <class Items, class WriteOne>
void batched(PyPickler& p, const Items& items, WriteOne one, void (PyPickler::*single)(), void (PyPickler::*many)())
{
    const size_t n = items.size();
    for (size_t at = 0; at < n; at += 1000) {
        const size_t end = std::min(n, at + 1000);
        if (end - at == 1) {
            one(items[at]);
            (p.*single)();
            continue;
        }
        p.mark();
        for (size_t i = at; i < end; ++i)
            one(items[i]);
        (p.*many)();
    }
}

void write(PyPickler& p, const Py& v)
{
    switch (v.kind) {
    case Py::Kind::None: p.none(); break;
    case Py::Kind::Int: p.integer(v.i); break;
    case Py::Kind::UInt: p.uinteger(v.u); break;
    case Py::Kind::Float: p.floating(v.f); break;
    case Py::Kind::Str: p.str(v.s); break;
    case Py::Kind::List:
        p.openList();
        batched(
            p, v.items, [&](const Py& item) { write(p, item); }, &PyPickler::append, &PyPickler::appends);
        break;
    case Py::Kind::Tuple:
        if (v.items.size() > 3)
            p.mark();
        for (const Py& item : v.items)
            write(p, item);
        if (v.items.size() > 3)
            p.tupleFromMark();
        else
            p.tuple(v.items.size());
        break;
    case Py::Kind::Dict:
        p.openDict();
        batched(
            p, v.keyed,
            [&](const std::pair<std::string, Py>& kv) {
            p.str(kv.first);
            write(p, kv.second);
            },
            &PyPickler::setItem, &PyPickler::setItems);
        break;
    }
}

} // namespace

std::string pickled(const Py& root)
{
    char* data = nullptr;
    size_t size = 0;
    std::FILE* f = ::open_memstream(&data, &size);
    if (!f)
        throw std::runtime_error("open_memstream failed");
    try {
        PyPickler p(f);
        p.begin();
        write(p, root);
        p.finish();
    } catch (...) {
        std::fclose(f);
        std::free(data);
        throw;
    }
    std::fclose(f);
    std::string out(data, size);
    std::free(data);
    return out;
}

} // namespace memscope::tools
