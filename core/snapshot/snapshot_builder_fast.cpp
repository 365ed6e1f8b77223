// SnapshotBuilder's fast path for trace entries: the dict of one entry, decoded straight
// from the bytes instead of through the pickle VM's stack and the generic container calls.
//
// Python's pickler writes every trace entry the same way (protocol 4):
//
//   }  MEMOIZE  (  key value  key value ...  u
//
// with every key a BINGET/LONG_BINGET of a memoized str, and values that are small ints
// (BININT1/BININT2/BININT/LONG1), memoized strs, a new str (SHORT_BINUNICODE MEMOIZE), or
// for `frames` a memoized (frozen) frame list or a new one made of memoized frame dicts:
//
//   ]  MEMOIZE  [ ( BINGET... APPENDS | BINGET APPEND ]
//
// The path reads that, checks every value's type the way decode() would, and only then
// makes the same changes the VM would have made: the dict as an Event node with its row
// filled in, memoized at the next index, then the strs and the new list (as its Frozen
// stack token, since the list is converted at once) at the following ones. Anything else
// (another key form, a nested dict, a value of the wrong type, a reference to a consumed
// entry) returns 0 before any change, and the VM runs the same bytes the general way,
// which gives the same model or the same error.

#include "snapshot/snapshot_builder.h"

#include "pickle/pickle_memo.h"
#include "pickle/pickle_opcodes.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>

namespace memscope {

using namespace pickle_op;

namespace {

// Little-endian loads (the pickle's byte order).
template <class T>
T load(const uint8_t* q)
{
    T v = 0;
    if constexpr (std::endian::native == std::endian::little) {
        std::memcpy(&v, q, sizeof v);
    } else {
        for (size_t k = 0; k < sizeof v; ++k)
            v = static_cast<T>(v | static_cast<T>(static_cast<T>(q[k]) << (8 * k)));
    }
    return v;
}

// The int opcodes, by opcode: how many little-endian bytes follow (BININT1 1, BININT2 2,
// BININT 4 signed; LONG1 a count byte, then that many, signed), 0 for any other opcode.
constexpr uint8_t kIntBytes = 0x0f, kIntSigned = 0x10, kIntCounted = 0x20;
constexpr std::array<uint8_t, 256> kIntForm = [] {
    std::array<uint8_t, 256> t{};
    t[kBinInt1] = 1;
    t[kBinInt2] = 2;
    t[kBinInt] = 4 | kIntSigned;
    t[kLong1] = kIntCounted | kIntSigned;
    return t;
}();

// The first n bytes of x (n <= 8), the rest zero.
uint64_t lowBytes(uint64_t x, size_t n) { return n >= 8 ? x : x & ((uint64_t(1) << (8 * n)) - 1); }

} // namespace

StringId SnapshotBuilder::internShort(std::string_view s)
{
    if (s.size() > 16)
        return m_snapshot.strings.intern(s);
    uint8_t padded[16] = {};
    std::memcpy(padded, s.data(), s.size());
    return internWords(load<uint64_t>(padded), load<uint64_t>(padded + 8), s);
}

StringId SnapshotBuilder::internWords(uint64_t w0, uint64_t w1, std::string_view s)
{
    if (m_shortStrings.empty())
        m_shortStrings.resize(1024);
    const uint64_t h = (w0 * 0x9E3779B97F4A7C15ull) ^ (w1 * 0xC2B2AE3D27D4EB4Full) ^ s.size();
    ShortString& slot = m_shortStrings[(h >> 40) & (m_shortStrings.size() - 1)];
    if (slot.id.valid() && slot.length == s.size() && slot.w[0] == w0 && slot.w[1] == w1)
        return slot.id;
    const StringId id = m_snapshot.strings.intern(s);
    slot = ShortString{{w0, w1}, static_cast<uint32_t>(s.size()), id};
    return id;
}

size_t SnapshotBuilder::fastDict(std::span<const uint8_t> bytes, size_t offset, PickleValue& dict)
{
    if (!m_fastPath || !m_memo)
        return 0;
    const uint8_t* const start = bytes.data() + offset;
    const uint8_t* const end = bytes.data() + bytes.size();
    const uint8_t* p = start;
    if (end - p < 4 || p[1] != kMemoize || p[2] != kMark)
        return 0;
    p += 3;
    const uint64_t memoBase = m_memo->size(); // the dict's own index
    if (m_memo->textRewrites() != m_keyRewrites) [[unlikely]] { // a key slot may name another str now
        m_keySlots = {};
        m_keyRewrites = m_memo->textRewrites();
    }
    // The memo entries this dict makes after its own, in order (a trace entry makes one to
    // three); more, and the VM runs it.
    constexpr size_t kMaxFastMemo = 8;
    union Slots { // not zero-filled on each call: only [0, fastMemoCount) is read
        Slots() { }
        PickleValue v[kMaxFastMemo];
    } slots;
    PickleValue* const fastMemo = slots.v;
    size_t fastMemoCount = 0;
    const Node* const nodes = m_nodes.data();
    const size_t nodeCount = m_nodes.size();
    const Field* const fieldOf = m_fieldOf.data();
    const size_t fieldCount = m_fieldOf.size();

    // A memo reference's index; p moves past it.
    auto refIndex = [&](uint64_t & index) __attribute__((always_inline))
    {
        if (*p == kBinGet && end - p >= 2) {
            index = p[1];
            p += 2;
            return true;
        }
        if (*p == kLongBinGet && end - p >= 5) {
            index = load<uint32_t>(p + 1);
            p += 5;
            return true;
        }
        return false;
    };
    // The entry at `index`: one set before this dict, or one this dict has made.
    auto lookup = [&](uint64_t index, PickleValue & v) __attribute__((always_inline))
    {
        if (index >= memoBase) [[unlikely]] {
            const uint64_t k = index - memoBase;
            if (k == 0 || k > fastMemoCount || fastMemo[k - 1].kind != PickleKind::String)
                return false; // the dict itself, or its new frame list: the VM's business
            v = fastMemo[k - 1];
            return true;
        }
        if (!m_memo->tryGet(index, v))
            return false;
        return v.kind != PickleKind::Container ||
               (v.node < nodeCount && nodes[v.node].generation == v.generation && nodes[v.node].mode != Mode::Consumed);
    };
    auto memoRef = [&](PickleValue & v) __attribute__((always_inline))
    {
        uint64_t index;
        return refIndex(index) && lookup(index, v);
    };
    auto string = [&](size_t len, PickleValue& v) {
        if (static_cast<size_t>(end - p) < len)
            return false;
        const std::string_view text(reinterpret_cast<const char*>(p), len);
        if (len <= 16 && end - p >= 16) // whole words: no copy to pad the string
            v = PickleValue::fromString(
                internWords(lowBytes(load<uint64_t>(p), len), len > 8 ? lowBytes(load<uint64_t>(p + 8), len - 8) : 0, text));
        else
            v = PickleValue::fromString(internShort(text));
        p += len;
        if (p < end && *p == kMemoize) {
            if (fastMemoCount == kMaxFastMemo)
                return false;
            ++p;
            fastMemo[fastMemoCount++] = v;
        }
        return true;
    };
    auto value = [&](PickleValue & v) __attribute__((always_inline))
    {
        switch (*p) {
        case kBinInt1:
            if (end - p < 2)
                return false;
            v = PickleValue::fromInt(p[1]);
            p += 2;
            return true;
        case kBinInt2:
            if (end - p < 3)
                return false;
            v = PickleValue::fromInt(load<uint16_t>(p + 1));
            p += 3;
            return true;
        case kBinInt:
            if (end - p < 5)
                return false;
            v = PickleValue::fromInt(static_cast<int32_t>(load<uint32_t>(p + 1)));
            p += 5;
            return true;
        case kLong1: { // of 1 to 8 bytes
            if (end - p < 2)
                return false;
            const size_t len = p[1];
            if (len == 0 || len > 8 || static_cast<size_t>(end - p) < 2 + len)
                return false;
            uint64_t u;
            if (end - p >= 10) {
                u = load<uint64_t>(p + 2);
                if (len < 8)
                    u &= (uint64_t(1) << (8 * len)) - 1;
            } else {
                u = 0;
                for (size_t k = 0; k < len; ++k)
                    u |= static_cast<uint64_t>(p[2 + k]) << (8 * k);
            }
            if (p[1 + len] & 0x80) {
                if (len < 8)
                    u |= ~uint64_t(0) << (8 * len);
                v = PickleValue::fromInt(static_cast<int64_t>(u));
            } else {
                v = PickleValue::fromUInt(u);
            }
            p += 2 + len;
            return true;
        }
        case kNone:
            v = PickleValue::none();
            ++p;
            return true;
        case kNewTrue:
        case kNewFalse:
            v = PickleValue::fromBool(*p == kNewTrue);
            ++p;
            return true;
        case kBinGet:
        case kLongBinGet: return memoRef(v);
        case kShortBinUnicode:
            if (end - p < 2)
                return false;
            p += 2;
            return string(p[-1], v);
        case kBinUnicode:
            if (end - p < 5)
                return false;
            p += 5;
            return string(load<uint32_t>(p - 4), v);
        default: return false;
        }
    };
    // A new frame list: ] MEMOIZE, then ( BINGET... APPENDS, or BINGET APPEND, or nothing.
    // Its frame dict handles go to m_fastItems; it is converted once the dict is known to
    // be a trace entry.
    size_t listSlot = 0;
    size_t itemCount = 0; // in m_fastItems, which only grows
    auto addItem = [&](uint32_t node) __attribute__((always_inline))
    {
        if (itemCount == m_fastItems.size()) [[unlikely]]
            m_fastItems.resize(std::max<size_t>(64, 2 * itemCount));
        m_fastItems[itemCount++] = node;
    };
    auto newFrameList = [&]() {
        if (end - p < 3 || p[1] != kMemoize)
            return false;
        p += 2;
        if (fastMemoCount == kMaxFastMemo)
            return false;
        listSlot = fastMemoCount;
        fastMemo[fastMemoCount++] = PickleValue::none();
        itemCount = 0;
        PickleValue item;
        if (*p == kMark) {
            ++p;
            while (p < end && (*p == kBinGet || *p == kLongBinGet)) {
                if (!memoRef(item) || item.kind != PickleKind::Container)
                    return false;
                addItem(item.node);
            }
            if (p >= end || *p != kAppends)
                return false;
            ++p;
        } else if (*p == kBinGet || *p == kLongBinGet) {
            const uint8_t* before = p;
            if (!memoRef(item))
                return false;
            if (p < end && *p == kAppend && item.kind == PickleKind::Container) {
                ++p;
                addItem(item.node);
            } else {
                p = before; // an empty list; that was the next key
            }
        }
        return true;
    };

    Row row;
    bool sawAction = false;
    enum class Frames : uint8_t { Absent, Value, NewList } frames = Frames::Absent;
    PickleValue framesValue;
    PickleValue v;
    PickleValue key;
    size_t slot = 0; // the key's position in the entry
    while (true) {
        // Room for a key (5 bytes) and the words the checks below load (10): an entry this
        // close to the end of the file is left to the VM, whatever it holds.
        if (end - p < 32) [[unlikely]]
            return 0;
        if (*p == kSetItems) {
            ++p;
            break;
        }
        // The key: the one its slot expects (same bytes, same memo entry), or looked up.
        Field field;
        const KeySlot& ks = m_keySlots[slot < kKeySlots ? slot : 0];
        if (slot < kKeySlots && ks.length != 0 && ((load<uint64_t>(p) ^ ks.bytes) & ks.mask) == 0) {
            p += ks.length;
            field = ks.field;
        } else {
            const uint8_t* const keyAt = p;
            uint64_t index;
            if (!refIndex(index) || !lookup(index, key) || key.kind != PickleKind::String)
                return 0;
            const size_t k = static_cast<size_t>(key.str);
            field = k < fieldCount ? fieldOf[k] : Field::None;
            if (slot < kKeySlots && index < memoBase && m_memo->isText(index)) {
                KeySlot& w = m_keySlots[slot];
                w.length = static_cast<uint8_t>(p - keyAt);
                w.mask = (uint64_t(1) << (8 * w.length)) - 1;
                w.bytes = load<uint64_t>(keyAt) & w.mask;
                w.field = field;
            }
        }
        ++slot;
        if (field == Field::Frames) {
            if (frames != Frames::Absent)
                return 0;
            if (*p == kEmptyList) {
                if (!newFrameList())
                    return 0;
                frames = Frames::NewList;
                continue;
            }
        }
        if (const uint8_t form = kIntForm[*p]; form != 0) {
            // An int, the commonest value, without the opcode switch: one masked load.
            size_t n = form & kIntBytes, at = 1;
            if (form & kIntCounted) {
                n = p[1];
                at = 2;
                if (n == 0 || n > 8)
                    return 0;
            }
            uint64_t u = lowBytes(load<uint64_t>(p + at), n);
            if ((form & kIntSigned) && ((u >> (8 * n - 1)) & 1)) {
                if (n < 8)
                    u |= ~uint64_t(0) << (8 * n);
                v = PickleValue::fromInt(static_cast<int64_t>(u));
            } else {
                v = PickleValue::fromUInt(u);
            }
            p += at + n;
        } else if (!value(v)) {
            return 0;
        }
        // The checks decode() makes; where it would note an error, the VM path reports it.
        switch (field) {
        case Field::None: break;
        case Field::Action:
            if (v.kind != PickleKind::String && v.kind != PickleKind::Bytes)
                return 0;
            row.action = actionOf(StringId{v.str});
            sawAction = true;
            break;
        case Field::Addr:
        case Field::Size:
        case Field::DeviceFree: {
            uint64_t u;
            if (v.kind == PickleKind::Int && (v.unsignedInt || v.i >= 0))
                u = static_cast<uint64_t>(v.i);
            else if (v.kind == PickleKind::Bool)
                u = v.boolean;
            else
                return 0;
            if (field == Field::Addr) {
                row.addr = u;
            } else if (field == Field::Size) {
                row.size = u;
            } else {
                row.deviceFree = u;
                row.hasDeviceFree = true;
            }
            break;
        }
        case Field::Stream:
            if (v.kind != PickleKind::Int)
                return 0;
            row.stream = static_cast<uint64_t>(v.i);
            break;
        case Field::TimeUs:
            if (v.kind == PickleKind::Int && !v.unsignedInt)
                row.time = v.i;
            else if (v.kind == PickleKind::Bool)
                row.time = v.boolean;
            else
                return 0;
            row.hasTime = true;
            break;
        case Field::Frames:
            if (v.kind != PickleKind::Frozen && v.kind != PickleKind::None && v.kind != PickleKind::Container)
                return 0;
            if (v.kind == PickleKind::Frozen && (v.node & kPoolToken))
                return 0;
            frames = Frames::Value;
            framesValue = v;
            break;
        case Field::UserMetadata:
        case Field::CompileContext:
            if (v.kind == PickleKind::String)
                (field == Field::UserMetadata ? row.metadata : row.context) = StringId{v.str};
            else if (v.kind != PickleKind::None)
                return 0; // decode() notes it
            break;
        case Field::ForwardFrames:
        case Field::PoolId: return 0; // containers of their own: the VM's business
        }
    }
    if (!sawAction)
        return 0;

    // A trace entry: its frames become a stack, as decode() would make them.
    try {
        if (frames == Frames::NewList) {
            if (m_fastFrames.size() < itemCount)
                m_fastFrames.resize(m_fastItems.size());
            for (size_t i = 0; i < itemCount; ++i) {
                const uint32_t f = m_fastItems[i];
                const Node& fn = m_nodes[f];
                m_fastFrames[i] = fn.cache >= 0 && fn.kind == ContainerKind::Dict
                                      ? FrameId{fn.cache}
                                      : frameOf(PickleValue::fromNode(f, fn.generation));
            }
            row.stack = m_snapshot.stacks.intern(std::span<const FrameId>(m_fastFrames.data(), itemCount));
            fastMemo[listSlot] = PickleValue::fromFrozen(static_cast<uint32_t>(row.stack.value + 1));
        } else if (frames == Frames::Value) {
            if (framesValue.kind == PickleKind::Frozen)
                row.stack = StackId{static_cast<int32_t>(framesValue.node) - 1};
            else if (framesValue.kind == PickleKind::Container)
                row.stack = stackOf(framesValue);
        }
    } catch (...) { // a bad frame: the VM path reports it where decode() would
        return 0;
    }

    // The same changes as the VM: the dict, then the memo entries in the order they came.
    dict = newContainer(ContainerKind::Dict, static_cast<int64_t>(offset));
    m_memo->noteContainer(dict);
    Node& n = m_nodes[dict.node];
    n.mode = Mode::Event;
    n.row = row;
    n.memoIndex = static_cast<int64_t>(memoBase);
    m_memo->put(memoBase, dict);
    for (size_t i = 0; i < fastMemoCount; ++i)
        m_memo->put(memoBase + 1 + i, fastMemo[i]);
    return static_cast<size_t>(p - start);
}

} // namespace memscope
