#include "snapshot/batch_decoder.h"

#include "pickle/pickle_opcodes.h"
#include "snapshot/format_keys.h"

#include <algorithm>
#include <bit>
#include <cstring>

namespace memscope {

using namespace pickle_op;
using Field = format::EntryField;

namespace {

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

// FRAME (a length hint, nothing for the VM to do): Python's pickler puts one every 64 KiB,
// between any two opcodes.
inline void skipFrames(const uint8_t*& p, const uint8_t* end)
{
    while (end - p >= 9 && *p == kFrame)
        p += 9;
}

uint64_t lowBytes(uint64_t x, size_t n) { return n >= 8 ? x : x & ((uint64_t(1) << (8 * n)) - 1); }

constexpr size_t kMaxFastMemo = 8; // as fastDict: memo entries an entry makes after its dict
constexpr uint8_t kNotKey = 0xff;

// A decoded value, as fastDict's PickleValue would hold it.
struct Value {
    enum class Kind : uint8_t { Int, Bool, None, Ref, NewString } kind = Kind::None;
    bool unsignedInt = false;
    uint64_t u = 0; // Int: the bits; Bool: 0/1; Ref: the memo index; NewString: its index
};

uint64_t hashRefs(const uint32_t* r, size_t n)
{
    uint64_t h = 0x9E3779B97F4A7C15ull ^ n;
    for (size_t i = 0; i < n; ++i)
        h = (h ^ r[i]) * 0xC2B2AE3D27D4EB4Full;
    return h ^ (h >> 29);
}

} // namespace

BatchDecoder::BatchDecoder(std::span<const uint8_t> bytes, std::span<const uint8_t> keyFields)
    : m_bytes(bytes), m_keyFields(keyFields)
{
}

bool BatchDecoder::batchStartsAt(size_t at) const
{
    const uint8_t* b = m_bytes.data();
    return at >= 1 && at + 4 <= m_bytes.size() && b[at] == kMark && b[at + 1] == kEmptyDict && b[at + 2] == kMemoize &&
           b[at + 3] == kMark && (b[at - 1] == kAppends || b[at - 1] == kMemoize);
}

void BatchDecoder::resetLists()
{
    if (m_listTable.empty())
        m_listTable.resize(1024);
    std::fill(m_listTable.begin(), m_listTable.end(), -1);
    m_listCount = 0;
}

uint32_t BatchDecoder::internList(DecodedBatches& out, size_t from)
{
    // The references listRefs[from, end) are a new list; the same references as a list
    // of this run before are that list (they resolve to the same frames).
    const uint32_t* refs = out.listRefs.data() + from;
    const size_t n = out.listRefs.size() - from;
    if (2 * (m_listCount + 1) > m_listTable.size()) {
        m_listTable.assign(m_listTable.size() * 2, -1);
        for (size_t k = m_firstList; k + 1 < out.listStart.size(); ++k) {
            const uint32_t* r = out.listRefs.data() + out.listStart[k];
            size_t slot = hashRefs(r, out.listStart[k + 1] - out.listStart[k]) & (m_listTable.size() - 1);
            while (m_listTable[slot] >= 0)
                slot = (slot + 1) & (m_listTable.size() - 1);
            m_listTable[slot] = static_cast<int32_t>(k);
        }
    }
    size_t slot = hashRefs(refs, n) & (m_listTable.size() - 1);
    while (m_listTable[slot] >= 0) {
        const size_t k = static_cast<size_t>(m_listTable[slot]);
        const size_t len = out.listStart[k + 1] - out.listStart[k];
        if (len == n && std::equal(refs, refs + n, out.listRefs.data() + out.listStart[k])) {
            out.listRefs.resize(from);
            return static_cast<uint32_t>(k);
        }
        slot = (slot + 1) & (m_listTable.size() - 1);
    }
    const uint32_t k = static_cast<uint32_t>(out.listStart.size() - 1);
    out.listStart.push_back(static_cast<uint32_t>(out.listRefs.size()));
    m_listTable[slot] = static_cast<int32_t>(k);
    ++m_listCount;
    return k;
}

void BatchDecoder::decode(size_t from, size_t to, DecodedBatches& out)
{
    out.clear();
    size_t p = from;
    while (p < to) {
        // The next batch start in [p, to).
        while (p < to && !batchStartsAt(p)) {
            const void* hit = std::memchr(m_bytes.data() + p + 1, kMark, std::min(to, m_bytes.size()) - p - 1);
            p = hit ? static_cast<size_t>(static_cast<const uint8_t*>(hit) - m_bytes.data()) : to;
        }
        if (p >= to)
            break;
        const uint32_t run = static_cast<uint32_t>(out.runs.size());
        resetLists();
        m_firstList = out.listStart.size() - 1;
        m_firstString = out.strings.size();
        DecodedBatches::Run r;
        r.firstBatch = static_cast<uint32_t>(out.batches.size());
        size_t next = p;
        while (next < to || r.batchCount == 0) {
            size_t after;
            if (!batch(next, after, run, out))
                break;
            ++r.batchCount;
            next = after;
            if (!batchStartsAt(next))
                break;
        }
        if (r.batchCount == 0) {
            ++p;
            continue;
        }
        r.end = next;
        out.runs.push_back(r);
        p = std::max(next, p + 1);
    }
}

bool BatchDecoder::batch(size_t at, size_t& next, uint32_t run, DecodedBatches& out)
{
    // Sizes to roll back to.
    const size_t entries0 = out.entries(), slots0 = out.slots.size(), strings0 = out.strings.size(),
                 lists0 = out.listStart.size(), refs0 = out.listRefs.size(), free0 = out.deviceFree.size(),
                 other0 = out.otherRefs.size();
    DecodedBatches::Batch b;
    b.offset = at;
    b.firstEntry = static_cast<uint32_t>(entries0);
    b.firstSlot = static_cast<uint32_t>(slots0);
    b.run = run;
    const uint8_t* p = m_bytes.data() + at + 1; // past the MARK
    const uint8_t* const end = m_bytes.data() + m_bytes.size();
    bool ok = true;
    size_t count = 0;
    while (true) {
        skipFrames(p, end);
        if (p >= end) {
            ok = false;
            break;
        }
        if (*p == kAppends && count > 0) {
            ++p;
            break;
        }
        if (*p != kEmptyDict || !entry(p, out)) {
            ok = false;
            break;
        }
        ++count;
    }
    if (!ok) {
        auto cut = [](auto& v, size_t n) { v.resize(n); };
        cut(out.addr, entries0);
        cut(out.size, entries0);
        cut(out.stream, entries0);
        cut(out.time, entries0);
        cut(out.action, entries0);
        cut(out.frames, entries0);
        cut(out.metadata, entries0);
        cut(out.context, entries0);
        cut(out.slotBase, entries0);
        cut(out.flags, entries0);
        cut(out.deviceFree, free0);
        cut(out.otherRefs, other0);
        cut(out.slots, slots0);
        cut(out.strings, strings0);
        cut(out.listStart, lists0);
        cut(out.listRefs, refs0);
        resetLists(); // the run ends here; the table may name lists just cut
        return false;
    }
    out.batches.push_back(b);
    next = static_cast<size_t>(p - m_bytes.data());
    return true;
}

bool BatchDecoder::entry(const uint8_t*& pos, DecodedBatches& out)
{
    const uint8_t* p = pos;
    const uint8_t* const end = m_bytes.data() + m_bytes.size();
    if (end - p < 4 || p[1] != kMemoize || p[2] != kMark)
        return false;
    p += 3;
    const uint32_t entryIndex = static_cast<uint32_t>(out.entries());
    const uint32_t dictSlot = static_cast<uint32_t>(out.slots.size());
    out.slots.push_back(DecodedBatches::kSlotDict | (entryIndex & ~DecodedBatches::kSlotKind));
    size_t fastMemoCount = 0;
    uint64_t addr = 0, size = 0, stream = 0, deviceFree = 0;
    int64_t time = 0;
    uint32_t action = DecodedBatches::kAbsent, frames = DecodedBatches::kAbsent;
    uint32_t metadata = DecodedBatches::kAbsent, context = DecodedBatches::kAbsent;
    uint8_t flags = 0;
    bool sawAction = false, sawFrames = false;

    auto refIndex = [&](uint64_t& index) {
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
    auto string = [&](size_t len, Value& v) {
        if (static_cast<size_t>(end - p) < len)
            return false;
        DecodedBatches::Str st{static_cast<size_t>(p - m_bytes.data()), static_cast<uint32_t>(len), entryIndex};
        // The same bytes as one of the run's last two strs: the builder reuses its id.
        for (size_t back = 1; back <= 2 && out.strings.size() >= m_firstString + back; ++back) {
            const DecodedBatches::Str& prev = out.strings[out.strings.size() - back];
            if (prev.length == len && std::memcmp(m_bytes.data() + prev.offset, p, len) == 0) {
                st.same = prev.same != DecodedBatches::kAbsent ? prev.same : static_cast<uint32_t>(out.strings.size() - back);
                break;
            }
        }
        out.strings.push_back(st);
        flags |= DecodedBatches::HasNewString;
        v.kind = Value::Kind::NewString;
        v.u = out.strings.size() - 1;
        p += len;
        if (p < end && *p == kMemoize) {
            if (fastMemoCount == kMaxFastMemo)
                return false;
            ++p;
            ++fastMemoCount;
            out.slots.push_back(DecodedBatches::kSlotString | static_cast<uint32_t>(v.u));
        }
        return true;
    };
    auto value = [&](Value& v) {
        if (const uint8_t op = *p; op == kBinInt1 || op == kBinInt2 || op == kBinInt || op == kLong1) {
            size_t n = op == kBinInt1 ? 1 : op == kBinInt2 ? 2 : 4, at = 1;
            const bool isSigned = op == kBinInt || op == kLong1;
            if (op == kLong1) {
                n = p[1];
                at = 2;
                if (n == 0 || n > 8)
                    return false;
            }
            uint64_t u = lowBytes(load<uint64_t>(p + at), n);
            v.kind = Value::Kind::Int;
            if (isSigned && ((u >> (8 * n - 1)) & 1)) {
                if (n < 8)
                    u |= ~uint64_t(0) << (8 * n);
                v.unsignedInt = false;
            } else {
                v.unsignedInt = u > static_cast<uint64_t>(INT64_MAX);
            }
            v.u = u;
            p += at + n;
            return true;
        }
        switch (*p) {
        case kNone:
            v.kind = Value::Kind::None;
            ++p;
            return true;
        case kNewTrue:
        case kNewFalse:
            v.kind = Value::Kind::Bool;
            v.u = *p == kNewTrue;
            ++p;
            return true;
        case kBinGet:
        case kLongBinGet: {
            uint64_t index;
            if (!refIndex(index) || index >= DecodedBatches::kNew)
                return false;
            v.kind = Value::Kind::Ref;
            v.u = index;
            return true;
        }
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
    // ] MEMOIZE, then ( BINGET... APPENDS, or BINGET APPEND, or nothing (as fastDict).
    auto newFrameList = [&]() {
        if (end - p < 3 || p[1] != kMemoize)
            return false;
        p += 2;
        if (fastMemoCount == kMaxFastMemo)
            return false;
        ++fastMemoCount;
        const size_t slot = out.slots.size();
        out.slots.push_back(DecodedBatches::kSlotList);
        const size_t from = out.listRefs.size();
        if (*p == kMark) {
            ++p;
            uint64_t index;
            skipFrames(p, end);
            while (p < end && (*p == kBinGet || *p == kLongBinGet)) {
                if (!refIndex(index) || index >= DecodedBatches::kNew)
                    return false;
                out.listRefs.push_back(static_cast<uint32_t>(index));
                skipFrames(p, end);
            }
            if (p >= end || *p != kAppends)
                return false;
            ++p;
        } else if (*p == kBinGet || *p == kLongBinGet) {
            const uint8_t* before = p;
            uint64_t index;
            if (!refIndex(index) || index >= DecodedBatches::kNew)
                return false;
            if (p < end && *p == kAppend) {
                ++p;
                out.listRefs.push_back(static_cast<uint32_t>(index));
            } else {
                p = before; // an empty list; that was the next key (resolved there)
            }
        }
        const uint32_t k = internList(out, from);
        out.slots[slot] = DecodedBatches::kSlotList | k;
        frames = DecodedBatches::kNew | k;
        return true;
    };

    Value v;
    while (true) {
        skipFrames(p, end);
        if (end - p < 32)
            return false;
        if (*p == kSetItems) {
            ++p;
            break;
        }
        uint64_t index;
        if (!refIndex(index) || index >= m_keyFields.size() || m_keyFields[index] == kNotKey)
            return false;
        const Field field = static_cast<Field>(m_keyFields[index]);
        skipFrames(p, end);
        if (end - p < 16)
            return false;
        if (field == Field::Frames) {
            if (sawFrames)
                return false;
            if (*p == kEmptyList) {
                if (!newFrameList())
                    return false;
                sawFrames = true;
                continue;
            }
        }
        if (!value(v))
            return false;
        const bool isInt = v.kind == Value::Kind::Int;
        switch (field) {
        case Field::None:
            if (v.kind == Value::Kind::Ref) { // checked where the memo is known
                out.otherRefs.emplace_back(entryIndex, static_cast<uint32_t>(v.u));
                flags |= DecodedBatches::HasOtherRef;
            }
            break;
        case Field::Action:
            if (v.kind == Value::Kind::Ref)
                action = static_cast<uint32_t>(v.u);
            else if (v.kind == Value::Kind::NewString)
                action = DecodedBatches::kNew | static_cast<uint32_t>(v.u);
            else
                return false;
            sawAction = true;
            break;
        case Field::Addr:
        case Field::Size:
        case Field::DeviceFree: {
            uint64_t u;
            if (isInt && (v.unsignedInt || static_cast<int64_t>(v.u) >= 0))
                u = v.u;
            else if (v.kind == Value::Kind::Bool)
                u = v.u;
            else
                return false;
            if (field == Field::Addr) {
                addr = u;
            } else if (field == Field::Size) {
                size = u;
            } else {
                deviceFree = u;
                flags |= DecodedBatches::HasDeviceFree;
            }
            break;
        }
        case Field::Stream:
            if (!isInt)
                return false;
            stream = v.u;
            break;
        case Field::TimeUs:
            if ((isInt && !v.unsignedInt) || v.kind == Value::Kind::Bool)
                time = static_cast<int64_t>(v.u);
            else
                return false;
            flags |= DecodedBatches::HasTime;
            break;
        case Field::Frames:
            if (v.kind == Value::Kind::Ref)
                frames = static_cast<uint32_t>(v.u);
            else if (v.kind == Value::Kind::None)
                frames = DecodedBatches::kAbsent;
            else
                return false;
            sawFrames = true;
            break;
        case Field::UserMetadata:
        case Field::CompileContext: {
            uint32_t code;
            if (v.kind == Value::Kind::Ref)
                code = static_cast<uint32_t>(v.u);
            else if (v.kind == Value::Kind::NewString)
                code = DecodedBatches::kNew | static_cast<uint32_t>(v.u);
            else if (v.kind == Value::Kind::None)
                code = DecodedBatches::kAbsent;
            else
                return false;
            (field == Field::UserMetadata ? metadata : context) = code;
            break;
        }
        case Field::ForwardFrames:
        case Field::PoolId: return false;
        }
    }
    if (!sawAction)
        return false;
    out.addr.push_back(addr);
    out.size.push_back(size);
    out.stream.push_back(stream);
    out.time.push_back(time);
    out.action.push_back(action);
    out.frames.push_back(frames);
    out.metadata.push_back(metadata);
    out.context.push_back(context);
    out.slotBase.push_back(dictSlot);
    out.flags.push_back(flags);
    if (flags & DecodedBatches::HasDeviceFree)
        out.deviceFree.emplace_back(entryIndex, deviceFree);
    pos = p;
    return true;
}

} // namespace memscope
