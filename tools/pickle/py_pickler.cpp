#include "pickle/py_pickler.h"

#include <bit>
#include <cstring>
#include <stdexcept>

namespace memscope::tools {

namespace {
constexpr size_t kFrameTarget = 64 * 1024;
}

PyPickler::PyPickler(std::FILE* out) : m_out(out) { m_frame.reserve(kFrameTarget * 2); }

void PyPickler::putLE(uint64_t v, int bytes)
{
    for (int k = 0; k < bytes; ++k)
        put(static_cast<uint8_t>(v >> (8 * k)));
}

void PyPickler::commitFrame()
{
    if (m_frame.empty())
        return;
    if (m_frame.size() >= 4) {
        uint8_t head[9] = {0x95};
        for (int k = 0; k < 8; ++k)
            head[1 + k] = static_cast<uint8_t>(static_cast<uint64_t>(m_frame.size()) >> (8 * k));
        if (std::fwrite(head, 1, sizeof head, m_out) != sizeof head)
            throw std::runtime_error("write failed");
        m_written += sizeof head;
    }
    if (std::fwrite(m_frame.data(), 1, m_frame.size(), m_out) != m_frame.size())
        throw std::runtime_error("write failed");
    m_written += m_frame.size();
    m_frame.clear();
}

void PyPickler::begin()
{
    const uint8_t proto[2] = {0x80, 4};
    if (std::fwrite(proto, 1, 2, m_out) != 2)
        throw std::runtime_error("write failed");
    m_written += 2;
}

void PyPickler::finish()
{
    put('.');
    commitFrame();
}

void PyPickler::boundary()
{
    if (m_frame.size() >= kFrameTarget)
        commitFrame();
}

void PyPickler::memoize(Obj* o)
{
    put(0x94);
    if (o)
        o->memo = m_memo;
    ++m_memo;
}

bool PyPickler::get(const Obj& o)
{
    if (o.memo < 0)
        return false;
    boundary();
    if (o.memo < 256) {
        put('h');
        put(static_cast<uint8_t>(o.memo));
    } else {
        put('j');
        putLE(static_cast<uint64_t>(o.memo), 4);
    }
    return true;
}

void PyPickler::str(std::string_view s, Obj* identity)
{
    if (identity && get(*identity))
        return;
    boundary();
    if (s.size() < 256) {
        put(0x8c);
        put(static_cast<uint8_t>(s.size()));
    } else {
        put('X');
        putLE(s.size(), 4);
    }
    m_frame.insert(m_frame.end(), s.begin(), s.end());
    memoize(identity);
}

void PyPickler::integer(int64_t v)
{
    boundary();
    if (v >= 0 && v < 256) {
        put('K');
        put(static_cast<uint8_t>(v));
    } else if (v >= 0 && v < 65536) {
        put('M');
        putLE(static_cast<uint64_t>(v), 2);
    } else if (v >= INT32_MIN && v <= INT32_MAX) {
        put('J');
        putLE(static_cast<uint32_t>(static_cast<int32_t>(v)), 4);
    } else {
        // LONG1: the shortest little-endian two's complement form.
        uint8_t bytes[9];
        int n = 0;
        uint64_t u = static_cast<uint64_t>(v);
        for (n = 0; n < 8; ++n)
            bytes[n] = static_cast<uint8_t>(u >> (8 * n));
        n = 8;
        const bool negative = v < 0;
        while (n > 1 && bytes[n - 1] == (negative ? 0xff : 0x00) && ((bytes[n - 2] & 0x80) != 0) == negative)
            --n;
        if (!negative && (bytes[n - 1] & 0x80))
            bytes[n++] = 0;
        put(0x8a);
        put(static_cast<uint8_t>(n));
        for (int k = 0; k < n; ++k)
            put(bytes[k]);
    }
}

void PyPickler::uinteger(uint64_t v)
{
    if (v <= static_cast<uint64_t>(INT64_MAX)) {
        integer(static_cast<int64_t>(v));
        return;
    }
    boundary();
    put(0x8a);
    put(9);
    putLE(v, 8);
    put(0);
}

void PyPickler::boolean(bool b)
{
    boundary();
    put(b ? 0x88 : 0x89);
}

void PyPickler::none()
{
    boundary();
    put('N');
}

void PyPickler::floating(double d)
{
    boundary();
    put('G');
    const uint64_t bits = std::bit_cast<uint64_t>(d);
    for (int k = 7; k >= 0; --k)
        put(static_cast<uint8_t>(bits >> (8 * k)));
}

void PyPickler::openDict(Obj* o)
{
    boundary();
    put('}');
    memoize(o);
}

void PyPickler::openList(Obj* o)
{
    boundary();
    put(']');
    memoize(o);
}

void PyPickler::mark() { put('('); }
void PyPickler::setItems() { put('u'); }
void PyPickler::setItem() { put('s'); }
void PyPickler::appends() { put('e'); }
void PyPickler::append() { put('a'); }

void PyPickler::tuple2(Obj* o)
{
    put(0x86);
    memoize(o);
}

void PyPickler::tuple(size_t n, Obj* o)
{
    if (n == 0) {
        put(')');
        return;
    }
    if (n > 3)
        throw std::logic_error("a tuple of more than 3 items closes a mark(): tupleFromMark()");
    put(static_cast<uint8_t>(0x84 + n)); // TUPLE1 0x85, TUPLE2 0x86, TUPLE3 0x87
    memoize(o);
}

void PyPickler::tupleFromMark(Obj* o)
{
    put('t');
    memoize(o);
}

} // namespace memscope::tools
