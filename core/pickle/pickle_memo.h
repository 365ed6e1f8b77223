#pragma once

#include "common/huge_pages.h"
#include "pickle/pickle_value.h"

#include <cstdint>
#include <vector>

namespace memscope {

/*
 * The pickle VM's memo, four bytes an entry: a 3-bit tag and a 29-bit payload.
 *
 *   String/Bytes -> StringId     Container -> node index (its generation is the node's
 *   Frozen -> sink token         current one, kept here per node)
 *   None/False/True inline       anything else (ints, floats, big ids) -> a side table
 *   Dead -> a container the sink consumed; referencing it is an error
 *
 * A snapshot memoizes every trace entry dict, most frame lists and many strings, so the
 * memo has a few entries per event: at 16 bytes an entry it would weigh as much as the
 * event columns. A sink that recycles a container's node must first replace() or kill()
 * every memo entry that names it (PickleSink::memoized tells it which).
 */
class PickleMemo {
public:
    enum class State : uint8_t { Unset, Set, Dead };

    void reserve(size_t entries) { reserveHuge(m_entries, entries); }
    size_t size() const { return m_entries.size(); }
    State state(uint64_t index) const
    {
        if (index >= m_entries.size())
            return State::Unset;
        const uint32_t tag = m_entries[index] >> kPayloadBits;
        return tag == TUnset ? State::Unset : tag == TDead ? State::Dead : State::Set;
    }

    // Grows the memo; the caller bounds `index`.
    [[gnu::always_inline]] void put(uint64_t index, PickleValue v)
    {
        const uint32_t e = encode(v);
        if (index == m_entries.size())
            m_entries.push_back(e);
        else
            place(index, e);
    }

    // state(index) must be Set.
    PickleValue get(uint64_t index) const
    {
        const uint32_t e = m_entries[index];
        const uint32_t payload = e & kPayloadMask;
        switch (e >> kPayloadBits) {
        case TString: return PickleValue::fromString(StringId{static_cast<int32_t>(payload)});
        case TContainer: return PickleValue::fromNode(payload, payload < m_generation.size() ? m_generation[payload] : 0);
        case TFrozen: return PickleValue::fromFrozen(payload);
        default: return getRare(e);
        }
    }

    // get() when the entry is set; false when it is unset or dead.
    [[gnu::always_inline]] bool tryGet(uint64_t index, PickleValue& v) const
    {
        if (index >= m_entries.size())
            return false;
        const uint32_t e = m_entries[index];
        const uint32_t payload = e & kPayloadMask;
        const uint32_t tag = e >> kPayloadBits;
        // Compares, not a switch: inlined at each call site, each learns its own common tag
        // (a frame list's items are containers, an action a string), where one indirect
        // jump shared by all of them would mispredict.
        if (tag == TContainer) {
            v = PickleValue::fromNode(payload, payload < m_generation.size() ? m_generation[payload] : 0);
            return true;
        }
        if (tag == TString) {
            v = PickleValue::fromString(StringId{static_cast<int32_t>(payload)});
            return true;
        }
        if (tag == TFrozen) {
            v = PickleValue::fromFrozen(payload);
            return true;
        }
        if (tag == TUnset || tag == TDead)
            return false;
        v = getRare(e);
        return true;
    }

    // How many times a String or Bytes entry has been overwritten or killed. While it stays
    // the same, an index that named a string still names that string, so a caller may keep
    // what it decoded from it. (Python's pickler never stores twice at one index; a sink
    // rewrites only the entries of its containers.)
    uint64_t textRewrites() const { return m_textRewrites; }
    // Whether the entry at `index` (< size()) is a String or Bytes entry.
    bool isText(uint64_t index) const
    {
        const uint32_t tag = m_entries[index] >> kPayloadBits;
        return tag == TString || tag == TBytes;
    }

    // A dead entry at `index` (the sink consumed what was memoized there).
    void putDead(uint64_t index) { place(index, encode(TDead, 0)); }
    // For sinks: the entry at `index` now stands for `v` (e.g. a Frozen token), or for nothing.
    void replace(uint64_t index, PickleValue v) { put(index, v); }
    void kill(uint64_t index);
    // Whether the entry at `index` still names container node `node`.
    bool names(uint64_t index, uint32_t node) const
    {
        return index < m_entries.size() && m_entries[index] == encode(TContainer, node);
    }

    // The VM reports every container handle it receives, so get() can rebuild handles.
    void noteContainer(PickleValue v);

    size_t bytes() const;
    // The entries' buffer (its reserved capacity), for prefaulting.
    const void* storage() const { return m_entries.data(); }
    size_t storageBytes() const { return m_entries.capacity() * sizeof(uint32_t); }

private:
    static constexpr uint32_t kPayloadBits = 29;
    static constexpr uint32_t kPayloadMask = (uint32_t(1) << kPayloadBits) - 1;
    enum Tag : uint32_t { TUnset, TString, TBytes, TContainer, TFrozen, TScalar, TSide, TDead };
    static uint32_t encode(Tag t, uint32_t payload) { return (static_cast<uint32_t>(t) << kPayloadBits) | payload; }
    uint32_t encode(PickleValue v)
    {
        if (v.kind == PickleKind::String && static_cast<uint32_t>(v.str) <= kPayloadMask)
            return encode(TString, static_cast<uint32_t>(v.str));
        if (v.kind == PickleKind::Container && v.node <= kPayloadMask)
            return encode(TContainer, v.node);
        if (v.kind == PickleKind::Frozen && v.node <= kPayloadMask)
            return encode(TFrozen, v.node);
        return encodeRare(v);
    }
    uint32_t encodeRare(PickleValue v);
    PickleValue getRare(uint32_t e) const;
    void place(uint64_t index, uint32_t e);

    std::vector<uint32_t> m_entries;
    std::vector<PickleValue> m_side;
    std::vector<uint32_t> m_generation; // per node index
    uint64_t m_textRewrites = 0;
};

} // namespace memscope
