#pragma once

#include "pickle/pickle_memo.h"
#include "pickle/pickle_sink.h"

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace memscope {

class StringPool;

/*
 * A pickle virtual machine that runs only the data-building opcodes of protocols 0-5
 * and never executes anything.
 *
 *     bytes ──> opcode loop ──> stack of PickleValue ──> PickleSink (owns containers)
 *                   │                 ▲
 *                   └── memo ─────────┘   (BINGET of a shared frame list = same handle)
 *
 * Opcodes that import or call (GLOBAL, STACK_GLOBAL, REDUCE, BUILD, INST, OBJ, NEWOBJ,
 * NEWOBJ_EX, PERSID, BINPERSID, EXT1/2/4) and out-of-band buffers are refused with a
 * LoadError naming the opcode and its byte offset. Every length, count, memo index and
 * the stack depth are bounds-checked against the input.
 */
class PickleReader {
public:
    struct Limits {
        size_t maxStackDepth = size_t(1) << 26;
        size_t maxMarkDepth = 1 << 16;
        size_t maxMemoGap = 1 << 20; // a memo index may run at most this far past the memo's end
    };

    // progress(fraction) is called now and then; returning false cancels (LoadCancelled).
    using Progress = std::function<bool(double)>;
    // consumed(offset) is called now and then: the VM will not read bytes before offset again.
    using Consumed = std::function<void(size_t)>;

    PickleReader(std::span<const uint8_t> data, std::string fileName, StringPool& strings, PickleSink& sink);

    void setProgress(Progress progress) { m_progress = std::move(progress); }
    void setConsumed(Consumed consumed) { m_consumed = std::move(consumed); }

    // Runs to STOP. Throws LoadError on anything malformed or refused.
    void run();

    int protocol() const { return m_protocol; }
    // The memo, for a sink that rewrites entries of containers it recycles.
    PickleMemo& memo() { return m_memo; }

private:
    [[noreturn]] void fail(int64_t offset, const std::string& message) const;
    [[noreturn, gnu::cold, gnu::noinline]] void failTruncated(size_t offset, const char* what, size_t count, size_t left) const;
    [[noreturn, gnu::cold, gnu::noinline]] void failOp(size_t offset, const char* opName, const char* problem) const;
    StringId intern(std::string_view s);

    struct ShortString {
        uint64_t w[2] = {0, 0};
        uint32_t length = 0;
        StringId id;
    };
    static constexpr size_t kShortStringSlots = 1024;

    std::span<const uint8_t> m_data;
    std::string m_fileName;
    StringPool& m_strings;
    PickleSink& m_sink;
    Limits m_limits;
    Progress m_progress;
    Consumed m_consumed;
    PickleMemo m_memo;
    std::vector<ShortString> m_shortStrings;
    int m_protocol = 0;
};

} // namespace memscope
