#include "pickle/pickle_reader.h"

#include "common/load_error.h"
#include "common/prefaulter.h"
#include "common/string_pool.h"
#include "pickle/pickle_opcodes.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cstring>
#include <memory>
#include <vector>

namespace memscope {

const char* pickleKindName(PickleKind k)
{
    switch (k) {
    case PickleKind::None: return "None";
    case PickleKind::Bool: return "bool";
    case PickleKind::Int: return "int";
    case PickleKind::Float: return "float";
    case PickleKind::String: return "str";
    case PickleKind::Bytes: return "bytes";
    case PickleKind::Container: return "container";
    case PickleKind::Frozen: return "container";
    }
    return "?";
}

namespace {

const char* refusedOpcodeName(uint8_t op)
{
    switch (op) {
    case pickle_op::kGlobal: return "GLOBAL";
    case pickle_op::kStackGlobal: return "STACK_GLOBAL";
    case pickle_op::kReduce: return "REDUCE";
    case pickle_op::kBuild: return "BUILD";
    case pickle_op::kInst: return "INST";
    case pickle_op::kObj: return "OBJ";
    case pickle_op::kNewObj: return "NEWOBJ";
    case pickle_op::kNewObjEx: return "NEWOBJ_EX";
    case pickle_op::kPersId: return "PERSID";
    case pickle_op::kBinPersId: return "BINPERSID";
    case pickle_op::kExt1: return "EXT1";
    case pickle_op::kExt2: return "EXT2";
    case pickle_op::kExt4: return "EXT4";
    case pickle_op::kNextBuffer: return "NEXT_BUFFER";
    case pickle_op::kReadOnlyBuffer: return "READONLY_BUFFER";
    default: return nullptr;
    }
}

// The VM's value stack: std::vector's push_back is not inlined at -O2, and this is the
// hottest path of the loader.
class ValueStack {
public:
    ValueStack() { grow(1024); }
    size_t size() const { return m_size; }
    bool empty() const { return m_size == 0; }
    PickleValue* data() { return m_data.get(); }
    PickleValue& back() { return m_data[m_size - 1]; }
    PickleValue& operator[](size_t i) { return m_data[i]; }
    void push_back(PickleValue v)
    {
        if (m_size == m_capacity) [[unlikely]]
            grow(m_capacity * 2);
        m_data[m_size++] = v;
    }
    void pop_back() { --m_size; }
    void resize(size_t n)
    {
        while (n > m_capacity)
            grow(m_capacity * 2);
        for (size_t i = m_size; i < n; ++i)
            m_data[i] = PickleValue{};
        m_size = n;
    }

private:
    void grow(size_t capacity)
    {
        auto bigger = std::make_unique<PickleValue[]>(capacity);
        std::copy(m_data.get(), m_data.get() + m_size, bigger.get());
        m_data = std::move(bigger);
        m_capacity = capacity;
    }
    std::unique_ptr<PickleValue[]> m_data;
    size_t m_size = 0;
    size_t m_capacity = 0;
};

std::string hexByte(uint8_t b)
{
    static const char* digits = "0123456789abcdef";
    return std::string("0x") + digits[b >> 4] + digits[b & 15];
}

} // namespace

PickleReader::PickleReader(std::span<const uint8_t> data, std::string fileName, StringPool& strings, PickleSink& sink)
    : m_data(data), m_fileName(std::move(fileName)), m_strings(strings), m_sink(sink)
{
}

void PickleReader::fail(int64_t offset, const std::string& message) const { throw LoadError(m_fileName, offset, {}, message); }

void PickleReader::failTruncated(size_t offset, const char* what, size_t count, size_t left) const
{
    fail(static_cast<int64_t>(offset), std::string("file ends inside ") + what + " (needs " + std::to_string(count) + " bytes, " +
                                           std::to_string(left) + " left): the file is truncated");
}

void PickleReader::failOp(size_t offset, const char* opName, const char* problem) const
{
    fail(static_cast<int64_t>(offset), std::string(opName) + problem);
}

StringId PickleReader::intern(std::string_view s)
{
    // Short strings written again and again (an 'N/A' per trace entry) skip the pool's
    // hash map through a small direct-mapped cache.
    if (s.size() > 16)
        return m_strings.intern(s);
    uint64_t w[2] = {0, 0};
    std::memcpy(w, s.data(), s.size());
    const uint64_t h = (w[0] * 0x9E3779B97F4A7C15ull) ^ (w[1] * 0xC2B2AE3D27D4EB4Full) ^ s.size();
    ShortString& slot = m_shortStrings[(h >> 40) & (kShortStringSlots - 1)];
    if (slot.id.valid() && slot.length == s.size() && slot.w[0] == w[0] && slot.w[1] == w[1])
        return slot.id;
    const StringId id = m_strings.intern(s);
    slot = ShortString{{w[0], w[1]}, static_cast<uint32_t>(s.size()), id};
    return id;
}

#if defined(__GNUC__)
#define MEMSCOPE_THREADED_DISPATCH 1
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpedantic" // labels as values: GCC and Clang both have them
#else
#define MEMSCOPE_THREADED_DISPATCH 0
#endif

void PickleReader::run()
{
    const uint8_t* const begin = m_data.data();
    const size_t n = m_data.size();
    size_t pos = 0;
    ValueStack stack;
    std::vector<size_t> marks;
    PickleMemo& memo = m_memo;
    // Python's pickler writes about one memo entry per 32 bytes of a snapshot.
    memo.reserve(std::min<size_t>(n / 24 + 16, size_t(1) << 28));
    Prefaulter prefault; // the memo's pages, on the other core, while the parse begins
    prefault.add(memo.storage(), std::min(memo.storageBytes(), (n / 32 + 16) * sizeof(uint32_t)));
    prefault.start();

    size_t nextProgress = 0;
    constexpr size_t kProgressStep = 4 << 20;

    m_shortStrings.assign(kShortStringSlots, ShortString{});

    auto need = [&](size_t opOffset, size_t count, const char* what) __attribute__((always_inline))
    {
        if (count > n - pos) [[unlikely]]
            failTruncated(opOffset, what, count, n - pos);
    };
    auto readLE = [&](size_t bytes) __attribute__((always_inline))
    {
        uint64_t v = 0;
        for (size_t k = 0; k < bytes; ++k)
            v |= static_cast<uint64_t>(begin[pos + k]) << (8 * k);
        pos += bytes;
        return v;
    };
    auto push = [&](size_t opOffset, PickleValue v) __attribute__((always_inline))
    {
        if (stack.size() >= m_limits.maxStackDepth) [[unlikely]]
            fail(static_cast<int64_t>(opOffset), "pickle stack deeper than " + std::to_string(m_limits.maxStackDepth));
        stack.push_back(v);
    };
    auto pop = [&](size_t opOffset, const char* opName) __attribute__((always_inline))
    {
        if (stack.empty() || (!marks.empty() && stack.size() <= marks.back())) [[unlikely]]
            failOp(opOffset, opName, " on an empty stack");
        PickleValue v = stack.back();
        stack.pop_back();
        return v;
    };
    auto top = [&](size_t opOffset, const char* opName) __attribute__((always_inline))->PickleValue&
    {
        if (stack.empty() || (!marks.empty() && stack.size() <= marks.back())) [[unlikely]]
            failOp(opOffset, opName, " on an empty stack");
        return stack.back();
    };
    auto popMark = [&](size_t opOffset, const char* opName) __attribute__((always_inline))
    {
        if (marks.empty()) [[unlikely]]
            failOp(opOffset, opName, " without a MARK");
        size_t m = marks.back();
        marks.pop_back();
        return m;
    };
    auto memoPut = [&](size_t opOffset, uint64_t index) __attribute__((always_inline))
    {
        PickleValue v = top(opOffset, "memo store");
        if (index >= memo.size()) {
            if (index - memo.size() > m_limits.maxMemoGap) [[unlikely]]
                fail(static_cast<int64_t>(opOffset),
                     "memo index " + std::to_string(index) + " is far beyond the memo's size " + std::to_string(memo.size()));
            // Picklers number memo entries from 0, one per PUT: an index past the bytes read
            // so far only grows the memo (a memo bomb).
            if (index > opOffset) [[unlikely]]
                fail(static_cast<int64_t>(opOffset), "memo index " + std::to_string(index) + " at byte " +
                                                         std::to_string(opOffset) +
                                                         ": more memo entries than bytes before it (a memo bomb?)");
        }
        memo.put(index, v);
        if (v.kind == PickleKind::Container)
            m_sink.memoized(v, index);
    };
    auto memoGet = [&](size_t opOffset, uint64_t index) __attribute__((always_inline))
    {
        const PickleMemo::State state = memo.state(index);
        if (state != PickleMemo::State::Set) [[unlikely]]
            fail(static_cast<int64_t>(opOffset), state == PickleMemo::State::Dead
                                                     ? std::string("a reference to a trace entry that was already consumed")
                                                     : "memo index " + std::to_string(index) + " was never stored");
        PickleValue v = memo.get(index);
        if (v.kind == PickleKind::Container)
            m_sink.checkReference(v, static_cast<int64_t>(opOffset));
        push(opOffset, v);
    };
    auto pushString = [&](size_t opOffset, size_t len, bool bytes, const char* what) __attribute__((always_inline))
    {
        need(opOffset, len, what);
        std::string_view s(reinterpret_cast<const char*>(begin + pos), len);
        pos += len;
        push(opOffset, PickleValue::fromString(intern(s), bytes));
    };
    auto pushLong = [&](size_t opOffset, size_t len) {
        need(opOffset, len, "LONG");
        const uint8_t* p = begin + pos;
        pos += len;
        if (len == 0) {
            push(opOffset, PickleValue::fromInt(0));
            return;
        }
        const bool negative = (p[len - 1] & 0x80) != 0;
        const uint8_t signByte = negative ? 0xff : 0x00;
        // Drop redundant sign bytes of a non-minimal encoding.
        while (len > 1 && p[len - 1] == signByte && ((p[len - 2] & 0x80) != 0) == negative)
            --len;
        uint64_t v = 0;
        if (negative && len <= 8) {
            for (size_t k = 0; k < len; ++k)
                v |= static_cast<uint64_t>(p[k]) << (8 * k);
            if (len < 8)
                v |= ~uint64_t(0) << (8 * len);
            push(opOffset, PickleValue::fromInt(static_cast<int64_t>(v)));
        } else if (!negative && (len <= 8 || (len == 9 && p[8] == 0))) {
            for (size_t k = 0; k < std::min<size_t>(len, 8); ++k)
                v |= static_cast<uint64_t>(p[k]) << (8 * k);
            push(opOffset, PickleValue::fromUInt(v));
        } else {
            fail(static_cast<int64_t>(opOffset), "integer of " + std::to_string(len) + " bytes does not fit in 64 bits");
        }
    };
    auto readLine = [&](size_t opOffset, const char* what) {
        const void* nl = std::memchr(begin + pos, '\n', n - pos);
        if (!nl)
            fail(static_cast<int64_t>(opOffset), std::string("file ends inside ") + what + ": the file is truncated");
        size_t end = static_cast<size_t>(static_cast<const uint8_t*>(nl) - begin);
        std::string_view line(reinterpret_cast<const char*>(begin + pos), end - pos);
        pos = end + 1;
        return line;
    };
    auto parseDecimal = [&](size_t opOffset, std::string_view text, const char* opName) {
        if (text == "00")
            return PickleValue::fromBool(false);
        if (text == "01")
            return PickleValue::fromBool(true);
        if (!text.empty() && text.back() == 'L')
            text.remove_suffix(1);
        int64_t v = 0;
        auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
        if (ec != std::errc() || ptr != text.data() + text.size()) {
            uint64_t u = 0;
            auto [p2, ec2] = std::from_chars(text.data(), text.data() + text.size(), u);
            if (ec2 == std::errc() && p2 == text.data() + text.size())
                return PickleValue::fromUInt(u);
            fail(static_cast<int64_t>(opOffset), std::string(opName) + " holds '" + std::string(text.substr(0, 40)) +
                                                     "', expected a decimal integer that fits in 64 bits");
        }
        return PickleValue::fromInt(v);
    };

    auto container = [&](PickleValue v) {
        memo.noteContainer(v);
        return v;
    };

    size_t at = 0;
    uint8_t op = 0;
    size_t fastLimit = 0; // the next opcode may be dispatched directly while pos is below it
#if MEMSCOPE_THREADED_DISPATCH
    // Threaded dispatch: each frequent opcode jumps straight to the next one's handler,
    // which the branch predictor learns far better than one shared switch (a trace entry
    // is the same ~30 opcodes again and again). The switch below stays the reference.
    void* table[256];
    for (void*& t : table)
        t = &&dispatch_switch;
    table[pickle_op::kFrame] = &&op_frame;
    table[pickle_op::kMark] = &&op_mark;
    table[pickle_op::kNone] = &&op_none;
    table[pickle_op::kNewTrue] = &&op_newtrue;
    table[pickle_op::kNewFalse] = &&op_newfalse;
    table[pickle_op::kBinInt] = &&op_binint;
    table[pickle_op::kBinInt1] = &&op_binint1;
    table[pickle_op::kBinInt2] = &&op_binint2;
    table[pickle_op::kLong1] = &&op_long1;
    table[pickle_op::kBinFloat] = &&op_binfloat;
    table[pickle_op::kShortBinUnicode] = &&op_short_binunicode;
    table[pickle_op::kBinUnicode] = &&op_binunicode;
    table[pickle_op::kEmptyList] = &&op_empty_list;
    table[pickle_op::kEmptyDict] = &&op_empty_dict;
    table[pickle_op::kEmptyTuple] = &&op_empty_tuple;
    table[pickle_op::kTuple1] = table[pickle_op::kTuple2] = table[pickle_op::kTuple3] = &&op_tuple2;
    table[pickle_op::kAppend] = &&op_append;
    table[pickle_op::kAppends] = table[pickle_op::kAddItems] = &&op_appends;
    table[pickle_op::kSetItem] = &&op_setitem;
    table[pickle_op::kSetItems] = &&op_setitems;
    table[pickle_op::kBinPut] = &&op_binput;
    table[pickle_op::kLongBinPut] = &&op_long_binput;
    table[pickle_op::kMemoize] = &&op_memoize;
    table[pickle_op::kBinGet] = &&op_binget;
    table[pickle_op::kLongBinGet] = &&op_long_binget;
#define MEMSCOPE_NEXT()                                                                                                          \
    do {                                                                                                                         \
        if (pos >= fastLimit) [[unlikely]]                                                                                       \
            goto loop_top;                                                                                                       \
        at = pos;                                                                                                                \
        op = begin[pos++];                                                                                                       \
        goto* table[op];                                                                                                         \
    } while (0)
#else
#define MEMSCOPE_NEXT() break
#endif

    while (true) {
    loop_top:
        if (pos >= nextProgress) {
            nextProgress = pos + kProgressStep;
            if (m_progress && !m_progress(n ? static_cast<double>(pos) / static_cast<double>(n) : 1.0))
                throw LoadCancelled();
            if (m_consumed && pos >= kProgressStep)
                m_consumed(pos - kProgressStep);
        }
        if (pos >= n)
            fail(static_cast<int64_t>(pos), "file ends before the pickle's STOP opcode: the file is truncated");
        fastLimit = std::min(n, nextProgress);
        at = pos;
        op = begin[pos++];
#if MEMSCOPE_THREADED_DISPATCH
    dispatch_switch:
#endif
        switch (op) {
        case pickle_op::kProto:
            need(at, 1, "PROTO");
            m_protocol = begin[pos++];
            if (m_protocol > 5)
                fail(static_cast<int64_t>(at), "pickle protocol " + std::to_string(m_protocol) + " is newer than 5");
            break;
        case pickle_op::kFrame: // FRAME: a length hint only
        op_frame:
            need(at, 8, "FRAME");
            pos += 8;
            MEMSCOPE_NEXT();
        case pickle_op::kStop: {
            if (stack.size() != 1 || !marks.empty())
                fail(static_cast<int64_t>(at),
                     "STOP with " + std::to_string(stack.size()) + " values on the stack, expected exactly one");
            m_sink.finish(stack.back(), static_cast<int64_t>(at));
            if (m_progress)
                m_progress(1.0);
            return;
        }
        case pickle_op::kMark:
        op_mark:
            if (pos < n && begin[pos] == pickle_op::kEmptyDict && !stack.empty() && stack.back().kind == PickleKind::Container) {
                if (const size_t used = m_sink.fastBatches(m_data, at, stack.back())) {
                    pos = at + used;
                    MEMSCOPE_NEXT();
                }
            }
            if (marks.size() >= m_limits.maxMarkDepth)
                fail(static_cast<int64_t>(at), "MARKs nested deeper than " + std::to_string(m_limits.maxMarkDepth));
            marks.push_back(stack.size());
            MEMSCOPE_NEXT();
        case pickle_op::kPop:
            if (!marks.empty() && stack.size() == marks.back())
                marks.pop_back(); // POP of a bare MARK
            else
                pop(at, "POP");
            break;
        case pickle_op::kPopMark: {
            size_t m = popMark(at, "POP_MARK");
            stack.resize(m);
            break;
        }
        case pickle_op::kDup: push(at, top(at, "DUP")); break;
        case pickle_op::kNone:
        op_none:
            push(at, PickleValue::none());
            MEMSCOPE_NEXT();
        case pickle_op::kNewTrue:
        op_newtrue:
            push(at, PickleValue::fromBool(true));
            MEMSCOPE_NEXT();
        case pickle_op::kNewFalse:
        op_newfalse:
            push(at, PickleValue::fromBool(false));
            MEMSCOPE_NEXT();
        case pickle_op::kBinInt:
        op_binint:
            need(at, 4, "BININT");
            push(at, PickleValue::fromInt(static_cast<int32_t>(static_cast<uint32_t>(readLE(4)))));
            MEMSCOPE_NEXT();
        case pickle_op::kBinInt1:
        op_binint1:
            need(at, 1, "BININT1");
            push(at, PickleValue::fromInt(static_cast<int64_t>(readLE(1))));
            MEMSCOPE_NEXT();
        case pickle_op::kBinInt2:
        op_binint2:
            need(at, 2, "BININT2");
            push(at, PickleValue::fromInt(static_cast<int64_t>(readLE(2))));
            MEMSCOPE_NEXT();
        case pickle_op::kLong1: {
        op_long1:
            need(at, 1, "LONG1");
            size_t len = begin[pos++];
            if (len >= 1 && len <= 8 && len <= n - pos && (begin[pos + len - 1] & 0x80) == 0) {
                // The common case: a positive int of at most 8 bytes (an address, a time).
                uint64_t v = 0;
                std::memcpy(&v, begin + pos, len);
                pos += len;
                push(at, PickleValue::fromUInt(v));
                MEMSCOPE_NEXT();
            }
            pushLong(at, len);
            MEMSCOPE_NEXT();
        }
        case pickle_op::kLong4: {
            need(at, 4, "LONG4");
            int32_t len = static_cast<int32_t>(static_cast<uint32_t>(readLE(4)));
            if (len < 0)
                fail(static_cast<int64_t>(at), "LONG4 with negative length");
            pushLong(at, static_cast<size_t>(len));
            break;
        }
        case pickle_op::kInt: // INT (text)
            push(at, parseDecimal(at, readLine(at, "INT"), "INT"));
            break;
        case pickle_op::kLong: // LONG (text)
            push(at, parseDecimal(at, readLine(at, "LONG"), "LONG"));
            break;
        case pickle_op::kBinFloat: { // BINFLOAT, big-endian
        op_binfloat:
            need(at, 8, "BINFLOAT");
            uint64_t bits = 0;
            for (int k = 0; k < 8; ++k)
                bits = (bits << 8) | begin[pos + static_cast<size_t>(k)];
            pos += 8;
            push(at, PickleValue::fromFloat(std::bit_cast<double>(bits)));
            MEMSCOPE_NEXT();
        }
        case pickle_op::kFloat: { // FLOAT (text)
            std::string text(readLine(at, "FLOAT"));
            char* end = nullptr;
            double d = std::strtod(text.c_str(), &end);
            if (end == text.c_str())
                fail(static_cast<int64_t>(at), "FLOAT holds '" + text.substr(0, 40) + "', expected a number");
            push(at, PickleValue::fromFloat(d));
            break;
        }
        case pickle_op::kShortBinUnicode: {
        op_short_binunicode:
            need(at, 1, "SHORT_BINUNICODE");
            size_t len = begin[pos++];
            pushString(at, len, false, "SHORT_BINUNICODE");
            MEMSCOPE_NEXT();
        }
        case pickle_op::kBinUnicode: {
        op_binunicode:
            need(at, 4, "BINUNICODE");
            size_t len = static_cast<size_t>(readLE(4));
            pushString(at, len, false, "BINUNICODE");
            MEMSCOPE_NEXT();
        }
        case pickle_op::kBinUnicode8: {
            need(at, 8, "BINUNICODE8");
            uint64_t len = readLE(8);
            if (len > n - pos)
                need(at, n - pos + 1, "BINUNICODE8");
            pushString(at, static_cast<size_t>(len), false, "BINUNICODE8");
            break;
        }
        case pickle_op::kShortBinString: { // SHORT_BINSTRING (Python 2 str)
            need(at, 1, "SHORT_BINSTRING");
            size_t len = begin[pos++];
            pushString(at, len, false, "SHORT_BINSTRING");
            break;
        }
        case pickle_op::kBinString: {
            need(at, 4, "BINSTRING");
            int32_t len = static_cast<int32_t>(static_cast<uint32_t>(readLE(4)));
            if (len < 0)
                fail(static_cast<int64_t>(at), "BINSTRING with negative length");
            pushString(at, static_cast<size_t>(len), false, "BINSTRING");
            break;
        }
        case pickle_op::kShortBinBytes: {
            need(at, 1, "SHORT_BINBYTES");
            size_t len = begin[pos++];
            pushString(at, len, true, "SHORT_BINBYTES");
            break;
        }
        case pickle_op::kBinBytes: {
            need(at, 4, "BINBYTES");
            size_t len = static_cast<size_t>(readLE(4));
            pushString(at, len, true, "BINBYTES");
            break;
        }
        case pickle_op::kBinBytes8:
        case pickle_op::kByteArray8: {
            need(at, 8, "BINBYTES8");
            uint64_t len = readLE(8);
            if (len > n - pos)
                need(at, n - pos + 1, "BINBYTES8");
            pushString(at, static_cast<size_t>(len), true, "BINBYTES8");
            break;
        }
        case pickle_op::kUnicode: { // UNICODE (raw-unicode-escape text); kept as-is
            std::string_view line = readLine(at, "UNICODE");
            push(at, PickleValue::fromString(m_strings.intern(line)));
            break;
        }
        case pickle_op::kString: { // STRING (quoted text)
            std::string_view line = readLine(at, "STRING");
            if (line.size() >= 2 && (line.front() == '\'' || line.front() == '"') && line.back() == line.front())
                line = line.substr(1, line.size() - 2);
            push(at, PickleValue::fromString(m_strings.intern(line)));
            break;
        }
        case pickle_op::kEmptyList:
        op_empty_list:
            push(at, container(m_sink.newContainer(ContainerKind::List, static_cast<int64_t>(at))));
            MEMSCOPE_NEXT();
        case pickle_op::kEmptyDict:
        op_empty_dict : {
            PickleValue fast;
            if (const size_t used = m_sink.fastDict(m_data, at, fast)) {
                pos = at + used;
                push(at, fast);
                MEMSCOPE_NEXT();
            }
            push(at, container(m_sink.newContainer(ContainerKind::Dict, static_cast<int64_t>(at))));
            MEMSCOPE_NEXT();
        }
        case pickle_op::kEmptySet: push(at, container(m_sink.newContainer(ContainerKind::Set, static_cast<int64_t>(at)))); break;
        case pickle_op::kEmptyTuple:
        op_empty_tuple:
            push(at, container(m_sink.newTuple({}, static_cast<int64_t>(at))));
            MEMSCOPE_NEXT();
        case pickle_op::kList:
        case pickle_op::kDict:
        case pickle_op::kTuple:
        case pickle_op::kFrozenSet: {
            const char* name = op == pickle_op::kList    ? "LIST"
                               : op == pickle_op::kDict  ? "DICT"
                               : op == pickle_op::kTuple ? "TUPLE"
                                                         : "FROZENSET";
            size_t m = popMark(at, name);
            std::span<const PickleValue> items(stack.data() + m, stack.size() - m);
            PickleValue c;
            if (op == pickle_op::kTuple) {
                c = container(m_sink.newTuple(items, static_cast<int64_t>(at)));
            } else if (op == pickle_op::kDict) {
                if (items.size() % 2)
                    fail(static_cast<int64_t>(at), "DICT with an odd number of items");
                c = container(m_sink.newContainer(ContainerKind::Dict, static_cast<int64_t>(at)));
                m_sink.setItems(c, items, static_cast<int64_t>(at));
            } else {
                c = container(m_sink.newContainer(op == pickle_op::kList ? ContainerKind::List : ContainerKind::Set,
                                                  static_cast<int64_t>(at)));
                m_sink.append(c, items, static_cast<int64_t>(at));
            }
            stack.resize(m);
            push(at, c);
            break;
        }
        case pickle_op::kTuple1:
        case pickle_op::kTuple2:
        case pickle_op::kTuple3: {
        op_tuple2:
            size_t count = static_cast<size_t>(op - pickle_op::kTuple1 + 1);
            size_t floor = marks.empty() ? 0 : marks.back();
            if (stack.size() < floor + count)
                fail(static_cast<int64_t>(at),
                     "TUPLE" + std::to_string(count) + " needs " + std::to_string(count) + " values on the stack");
            std::span<const PickleValue> items(stack.data() + stack.size() - count, count);
            PickleValue t = container(m_sink.newTuple(items, static_cast<int64_t>(at)));
            stack.resize(stack.size() - count);
            push(at, t);
            MEMSCOPE_NEXT();
        }
        case pickle_op::kAppend: {
        op_append:
            PickleValue v = pop(at, "APPEND");
            PickleValue& list = top(at, "APPEND");
            if (list.kind != PickleKind::Container)
                fail(static_cast<int64_t>(at), std::string("APPEND to a ") + pickleKindName(list.kind) + ", expected a list");
            m_sink.append(list, std::span<const PickleValue>(&v, 1), static_cast<int64_t>(at));
            MEMSCOPE_NEXT();
        }
        case pickle_op::kAppends:
        case pickle_op::kAddItems: {
        op_appends:
            const char* name = op == pickle_op::kAppends ? "APPENDS" : "ADDITEMS";
            size_t m = popMark(at, name);
            if (m == 0 || m > stack.size())
                fail(static_cast<int64_t>(at), std::string(name) + " with no list below its MARK");
            PickleValue list = stack[m - 1];
            if (list.kind != PickleKind::Container)
                fail(static_cast<int64_t>(at), std::string(name) + " to a " + pickleKindName(list.kind) + ", expected a list");
            m_sink.append(list, std::span<const PickleValue>(stack.data() + m, stack.size() - m), static_cast<int64_t>(at));
            stack.resize(m);
            MEMSCOPE_NEXT();
        }
        case pickle_op::kSetItem: {
        op_setitem:
            PickleValue v = pop(at, "SETITEM");
            PickleValue k = pop(at, "SETITEM");
            PickleValue& dict = top(at, "SETITEM");
            if (dict.kind != PickleKind::Container)
                fail(static_cast<int64_t>(at), std::string("SETITEM on a ") + pickleKindName(dict.kind) + ", expected a dict");
            PickleValue kv[2] = {k, v};
            m_sink.setItems(dict, kv, static_cast<int64_t>(at));
            MEMSCOPE_NEXT();
        }
        case pickle_op::kSetItems: {
        op_setitems:
            size_t m = popMark(at, "SETITEMS");
            if (m == 0 || m > stack.size())
                fail(static_cast<int64_t>(at), "SETITEMS with no dict below its MARK");
            if ((stack.size() - m) % 2)
                fail(static_cast<int64_t>(at), "SETITEMS with an odd number of items");
            PickleValue dict = stack[m - 1];
            if (dict.kind != PickleKind::Container)
                fail(static_cast<int64_t>(at), std::string("SETITEMS on a ") + pickleKindName(dict.kind) + ", expected a dict");
            m_sink.setItems(dict, std::span<const PickleValue>(stack.data() + m, stack.size() - m), static_cast<int64_t>(at));
            stack.resize(m);
            MEMSCOPE_NEXT();
        }
        case pickle_op::kPut: { // PUT (text index)
            PickleValue idx = parseDecimal(at, readLine(at, "PUT"), "PUT");
            if (idx.i < 0)
                fail(static_cast<int64_t>(at), "PUT with a negative memo index");
            memoPut(at, static_cast<uint64_t>(idx.i));
            break;
        }
        case pickle_op::kBinPut:
        op_binput:
            need(at, 1, "BINPUT");
            memoPut(at, readLE(1));
            MEMSCOPE_NEXT();
        case pickle_op::kLongBinPut:
        op_long_binput:
            need(at, 4, "LONG_BINPUT");
            memoPut(at, readLE(4));
            MEMSCOPE_NEXT();
        case pickle_op::kMemoize:
        op_memoize:
            memoPut(at, memo.size());
            MEMSCOPE_NEXT();
        case pickle_op::kGet: { // GET (text index)
            PickleValue idx = parseDecimal(at, readLine(at, "GET"), "GET");
            if (idx.i < 0)
                fail(static_cast<int64_t>(at), "GET with a negative memo index");
            memoGet(at, static_cast<uint64_t>(idx.i));
            break;
        }
        case pickle_op::kBinGet:
        op_binget:
            need(at, 1, "BINGET");
            memoGet(at, readLE(1));
            MEMSCOPE_NEXT();
        case pickle_op::kLongBinGet:
        op_long_binget:
            need(at, 4, "LONG_BINGET");
            memoGet(at, readLE(4));
            MEMSCOPE_NEXT();
        default:
            if (const char* refused = refusedOpcodeName(op))
                fail(static_cast<int64_t>(at), std::string("refused pickle opcode ") + refused + " (" + hexByte(op) +
                                                   "): it imports or calls code, and a memory snapshot holds only plain data");
            fail(static_cast<int64_t>(at), "unknown pickle opcode " + hexByte(op) + ": not a pickle, or a corrupt one");
        }
    }
#undef MEMSCOPE_NEXT
}

#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

} // namespace memscope
