#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace memscope {

// What a BatchDecoder made of one stretch of the file: runs of whole APPENDS batches of
// trace entries, decoded without the memo. Memo references stay raw indices (the memo's
// size where the run starts is only known when the VM gets there); strs and frame lists
// the entries create are listed in order. SnapshotBuilder::fastBatches resolves and
// commits them. Codes in action/frames/metadata/context: kAbsent, kNew | index into
// strings (or lists, for frames), or a raw memo index (< 2^31).
struct DecodedBatches {
    static constexpr uint32_t kAbsent = 0xffffffffu;
    static constexpr uint32_t kNew = 0x80000000u;
    // Memo entries the entries make, in order: kind in the top two bits, index below.
    static constexpr uint32_t kSlotDict = 0, kSlotString = 1u << 30, kSlotList = 2u << 30, kSlotKind = 3u << 30;
    enum Flag : uint8_t { HasTime = 1, HasDeviceFree = 2, HasNewString = 4, HasOtherRef = 8 };

    struct Batch {
        size_t offset = 0; // its MARK
        uint32_t firstEntry = 0;
        uint32_t firstSlot = 0;
        uint32_t run = 0;
    };
    struct Run {
        size_t end = 0; // past its last APPENDS
        uint32_t firstBatch = 0, batchCount = 0;
    };
    struct Str {
        size_t offset = 0; // its bytes in the file
        uint32_t length = 0;
        uint32_t entry = 0;
        uint32_t same = kAbsent; // an earlier str of the run with the same bytes (torch writes "N/A" anew each entry)
    };

    std::vector<Batch> batches; // by offset
    std::vector<Run> runs;
    std::vector<uint64_t> addr, size, stream;
    std::vector<int64_t> time;
    std::vector<uint32_t> action, frames, metadata, context;
    std::vector<uint32_t> slotBase; // the entry's dict's slot
    std::vector<uint8_t> flags;
    std::vector<std::pair<uint32_t, uint64_t>> deviceFree; // entry, value
    std::vector<std::pair<uint32_t, uint32_t>> otherRefs; // entry, memo index: values of keys memscope does not read
    std::vector<uint32_t> slots;
    std::vector<Str> strings;
    std::vector<uint32_t> listStart{0}; // list k's frame references: listRefs[listStart[k], listStart[k+1])
    std::vector<uint32_t> listRefs;

    size_t entries() const { return addr.size(); }
    void clear()
    {
        batches.clear();
        runs.clear();
        addr.clear();
        size.clear();
        stream.clear();
        time.clear();
        action.clear();
        frames.clear();
        metadata.clear();
        context.clear();
        slotBase.clear();
        flags.clear();
        deviceFree.clear();
        otherRefs.clear();
        slots.clear();
        strings.clear();
        listStart.assign(1, 0);
        listRefs.clear();
    }
};

} // namespace memscope
