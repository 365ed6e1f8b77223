#pragma once

#include "snapshot/decoded_batches.h"

#include <cstdint>
#include <span>
#include <vector>

namespace memscope {

/*
 * Decodes the trace entries of one stretch of a pickle on a worker thread, for the
 * parallel parse (parallel_parse.h). It finds the first APPENDS batch that starts in
 * [from, to) by its bytes (APPENDS or MEMOIZE, then MARK EMPTY_DICT MEMOIZE MARK: the end of
 * one batch or a new list, then an entry), and decodes batch after batch the way
 * SnapshotBuilder::fastDict reads one entry (snapshot_builder_fast.cpp), with the same
 * checks, but without the memo: keys are looked up in a table of the memo's strs made when
 * the decoders started (`keyFields`, one Field per memo index, 0xff: not a key), and every
 * other memo reference is kept raw. A batch with anything else (a key the table lacks,
 * a nested dict, a value of the wrong type, pool_id, forward_frames, too close to the end)
 * ends the run before it, and the decoder looks for the next batch start. A start found
 * by its bytes may lie inside a string; nothing trusts it: the builder only takes a batch
 * where the VM itself stands at that MARK.
 */
class BatchDecoder {
public:
    BatchDecoder(std::span<const uint8_t> bytes, std::span<const uint8_t> keyFields);

    // Decodes the batches that start in [from, to) (a run may end past `to`) into `out`.
    void decode(size_t from, size_t to, DecodedBatches& out);

    // Whether a batch of entries starts at `at` (its MARK), by the bytes around it.
    bool batchStartsAt(size_t at) const;

private:
    // One batch at p (its MARK); false, out unchanged, if it is not one the builder may take.
    bool batch(size_t p, size_t& next, uint32_t run, DecodedBatches& out);
    bool entry(const uint8_t*& p, DecodedBatches& out);
    uint32_t internList(DecodedBatches& out, size_t from);
    void resetLists();

    std::span<const uint8_t> m_bytes;
    std::span<const uint8_t> m_keyFields;
    std::vector<int32_t> m_listTable; // distinct frame lists of the run, by hash
    size_t m_listCount = 0; // in the table
    size_t m_firstList = 0; // the run's first list
    size_t m_firstString = 0; // the run's first str
};

} // namespace memscope
