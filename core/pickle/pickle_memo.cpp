#include "pickle/pickle_memo.h"

#include <stdexcept>

namespace memscope {

uint32_t PickleMemo::encodeRare(PickleValue v)
{
    const bool text = v.kind == PickleKind::String || v.kind == PickleKind::Bytes;
    const bool handle = v.kind == PickleKind::Container || v.kind == PickleKind::Frozen;
    if (v.kind == PickleKind::None)
        return encode(TScalar, 0);
    if (v.kind == PickleKind::Bool)
        return encode(TScalar, v.boolean ? 2 : 1);
    if (text && static_cast<uint32_t>(v.str) <= kPayloadMask)
        return encode(v.kind == PickleKind::String ? TString : TBytes, static_cast<uint32_t>(v.str));
    if (handle && v.node <= kPayloadMask)
        return encode(v.kind == PickleKind::Container ? TContainer : TFrozen, v.node);
    if (m_side.size() > kPayloadMask)
        throw std::length_error("more than 2^29 memoized numbers");
    m_side.push_back(v);
    return encode(TSide, static_cast<uint32_t>(m_side.size() - 1));
}

void PickleMemo::place(uint64_t index, uint32_t e)
{
    if (index >= m_entries.size())
        m_entries.resize(index + 1, encode(TUnset, 0));
    else if (isText(index))
        ++m_textRewrites;
    m_entries[index] = e;
}

PickleValue PickleMemo::getRare(uint32_t e) const
{
    const uint32_t payload = e & kPayloadMask;
    switch (e >> kPayloadBits) {
    case TString: return PickleValue::fromString(StringId{static_cast<int32_t>(payload)});
    case TBytes: return PickleValue::fromString(StringId{static_cast<int32_t>(payload)}, true);
    case TContainer: return PickleValue::fromNode(payload, payload < m_generation.size() ? m_generation[payload] : 0);
    case TFrozen: return PickleValue::fromFrozen(payload);
    case TScalar: return payload == 0 ? PickleValue::none() : PickleValue::fromBool(payload == 2);
    case TSide: return m_side[payload];
    default: return PickleValue::none();
    }
}

void PickleMemo::kill(uint64_t index)
{
    if (index < m_entries.size()) {
        if (isText(index))
            ++m_textRewrites;
        m_entries[index] = encode(TDead, 0);
    }
}

void PickleMemo::noteContainer(PickleValue v)
{
    if (v.node >= m_generation.size())
        m_generation.resize(static_cast<size_t>(v.node) + 1 + m_generation.size() / 2, 0);
    m_generation[v.node] = v.generation;
}

size_t PickleMemo::bytes() const
{
    return m_entries.capacity() * sizeof(uint32_t) + m_side.capacity() * sizeof(PickleValue) +
           m_generation.capacity() * sizeof(uint32_t);
}

} // namespace memscope
