#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace memscope::tools {

/*
 * Writes a protocol-4 pickle byte for byte the way CPython's C pickler (_pickle.c) does:
 *
 *   PROTO 4, then FRAME <u64 length> blocks of about 64 KiB, cut only between objects;
 *   every str, list, dict and tuple is followed by MEMOIZE; an object already written is
 *   a BINGET (index < 256) or LONG_BINGET; dicts are EMPTY_DICT MEMOIZE then
 *   MARK k v ... SETITEMS (or k v SETITEM for one item) in batches of 1000, lists the same
 *   with APPENDS/APPEND; ints are BININT1/BININT2/BININT/LONG1; tuples of two TUPLE2.
 *
 * Identity (Python's `is`) is the caller's: an Obj remembers the memo index it was
 * stored at, so writing the same Obj twice gives a BINGET, as sharing does in Python.
 *
 * The one pickle writer of the tests and the benchmarks (the product's is core/io's
 * pickle_writer): tools/gen_snapshot streams large recordings with it, and py_value.h writes
 * a small value tree through it for the robustness tests.
 */
class PyPickler {
public:
    struct Obj {
        int64_t memo = -1;
    };

    explicit PyPickler(std::FILE* out);

    void begin(); // PROTO 4
    void finish(); // STOP and the last frame

    // One object boundary: Python commits a frame of >= 64 KiB here.
    void boundary();

    // A reference to an already written object, if it was written; true when it was.
    bool get(const Obj& o);

    void str(std::string_view s, Obj* identity = nullptr); // identity: shared string object
    void integer(int64_t v);
    void uinteger(uint64_t v); // past INT64_MAX: LONG1 of 9 bytes, as Python writes 2**63 and up
    void boolean(bool b);
    void none();
    void floating(double d);

    // Containers. open*() writes EMPTY_* + MEMOIZE and records the memo index in `o`.
    void openDict(Obj* o = nullptr);
    void openList(Obj* o = nullptr);
    void mark();
    void setItems(); // closes a MARK of k v pairs
    void setItem(); // one k v pair, no MARK
    void appends(); // closes a MARK of items
    void append(); // one item, no MARK
    void tuple2(Obj* o = nullptr); // after its two items
    // A tuple of n items after them: () EMPTY_TUPLE, 1-3 TUPLE1-3; more: TUPLE closing a
    // mark() written before the items (tupleFromMark). Python memoizes all but the empty one.
    void tuple(size_t n, Obj* o = nullptr);
    void tupleFromMark(Obj* o = nullptr);

    uint64_t bytesWritten() const { return m_written + m_frame.size(); }
    int64_t memoSize() const { return m_memo; }

private:
    void put(uint8_t b) { m_frame.push_back(b); }
    void putLE(uint64_t v, int bytes);
    void memoize(Obj* o);
    void commitFrame();

    std::FILE* m_out;
    std::vector<uint8_t> m_frame;
    uint64_t m_written = 0;
    int64_t m_memo = 0;
};

} // namespace memscope::tools
