#pragma once

#include "snapshot/batch_decoder.h"
#include "snapshot/decoded_batches.h"

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace memscope {

/*
 * The parallel parse: worker threads decode the trace entries ahead of the pickle VM,
 * which stays the one reader of the file and commits what they decoded where it stands.
 *
 * The rest of the file, from where the VM starts them (the first entries have set the
 * memo's keys), is cut into chunks of equal size. Threads (the pool's, and the VM's own
 * when the chunk it needs is not taken) each decode one chunk at a time with a
 * BatchDecoder, at most threads + 2 chunks ahead of the VM, into buffers reused chunk after
 * chunk (memory stays that of `window` chunks, not of the file). When the VM stands at a
 * MARK that opens a batch of entries, SnapshotBuilder::fastBatches asks batchAt(offset)
 * for a decoded batch that starts at exactly that byte (waiting for its chunk), resolves
 * its memo references against the real memo and commits the run, or gives up before any
 * change and lets the VM run the bytes. A chunk whose first batch start was a false match
 * (bytes inside a string) decodes garbage that no MARK of the VM ever asks for.
 */
class ParallelParse {
public:
    // keyFields: per memo index below the memo's size now, the trace-entry Field of that
    // str (0xff: not a key). bytes must outlive this object.
    // chunkBytes: 0 = from the size and the threads.
    ParallelParse(std::span<const uint8_t> bytes, size_t from, std::vector<uint8_t> keyFields, unsigned threads,
                  size_t chunkBytes = 0);
    ParallelParse(const ParallelParse&) = delete;
    ParallelParse& operator=(const ParallelParse&) = delete;
    ~ParallelParse(); // stops the workers and waits for the ones decoding

    // The chunk holding the batch that starts at `offset`, and that batch's index in it;
    // null if no batch starts there. Chunks before it are released. Called by the VM's
    // thread only, with offsets that only grow.
    DecodedBatches* batchAt(size_t offset, size_t& batch);

    size_t chunks() const;
    uint64_t batchesTaken() const { return m_taken; }

private:
    struct State;
    std::shared_ptr<State> m_state;
    uint64_t m_taken = 0;
};

} // namespace memscope
