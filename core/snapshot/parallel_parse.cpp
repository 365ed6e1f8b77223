#include "snapshot/parallel_parse.h"

#include "common/thread_pool.h"

#include <algorithm>
#include <condition_variable>
#include <mutex>

namespace memscope {

struct ParallelParse::State {
    std::span<const uint8_t> bytes;
    std::vector<uint8_t> keyFields;
    size_t from = 0, chunkBytes = 0, chunkCount = 0, window = 0;

    std::mutex mutex;
    std::condition_variable changed;
    size_t nextClaim = 0; // chunks below it are taken (decoding or done)
    size_t consumed = 0; // chunks below it are released: their buffers may be reused
    std::vector<uint8_t> done; // per chunk
    std::vector<DecodedBatches> buffers; // chunk c in buffers[c % window]
    size_t active = 0; // workers decoding
    bool stop = false;

    size_t chunkBegin(size_t c) const { return from + c * chunkBytes; }
    size_t chunkEnd(size_t c) const { return std::min(bytes.size(), from + (c + 1) * chunkBytes); }

    void decode(size_t c)
    {
        BatchDecoder decoder(bytes, keyFields);
        DecodedBatches& out = buffers[c % window];
        try {
            decoder.decode(chunkBegin(c), chunkEnd(c), out);
        } catch (...) { // out of memory: the VM runs this chunk
            out.clear();
        }
    }

    // A worker: takes chunks while there are any within the window.
    void work()
    {
        std::unique_lock lock(mutex);
        ++active;
        while (true) {
            changed.wait(lock, [&] { return stop || nextClaim >= chunkCount || nextClaim < consumed + window; });
            if (stop || nextClaim >= chunkCount)
                break;
            const size_t c = nextClaim++;
            lock.unlock();
            decode(c);
            lock.lock();
            done[c] = 1;
            changed.notify_all();
        }
        --active;
        changed.notify_all();
    }
};

ParallelParse::ParallelParse(std::span<const uint8_t> bytes, size_t from, std::vector<uint8_t> keyFields, unsigned threads,
                             size_t chunkBytes)
    : m_state(std::make_shared<State>())
{
    State& s = *m_state;
    s.bytes = bytes;
    s.keyFields = std::move(keyFields);
    s.from = from;
    threads = std::max(1u, threads);
    const size_t rest = bytes.size() > from ? bytes.size() - from : 0;
    // 32 chunks a thread (for balance), 128 KiB to 4 MiB each, and a chunk a thread
    // ahead (plus two): the buffers hold about 0.6 bytes per byte of the chunks they cover,
    // 1-4% of the file.
    s.chunkBytes = chunkBytes ? chunkBytes
                              : std::clamp<size_t>(rest / (size_t(threads) * 32), size_t(128) << 10, size_t(4) << 20);
    s.chunkCount = (rest + s.chunkBytes - 1) / s.chunkBytes;
    s.window = size_t(threads) + 2;
    s.done.assign(s.chunkCount, 0);
    s.buffers.resize(std::min(s.window, std::max<size_t>(s.chunkCount, 1)));
    s.window = s.buffers.size();
    const size_t workers = std::min<size_t>(threads - 1, s.chunkCount);
    for (size_t w = 0; w < workers; ++w)
        ThreadPool::shared().submit([state = m_state] {
            {
                std::lock_guard lock(state->mutex);
                if (state->stop)
                    return;
            }
            state->work();
        });
}

ParallelParse::~ParallelParse()
{
    State& s = *m_state;
    std::unique_lock lock(s.mutex);
    s.stop = true;
    s.changed.notify_all();
    s.changed.wait(lock, [&] { return s.active == 0; });
}

size_t ParallelParse::chunks() const { return m_state->chunkCount; }

DecodedBatches* ParallelParse::batchAt(size_t offset, size_t& batch)
{
    State& s = *m_state;
    if (offset < s.from || s.chunkCount == 0)
        return nullptr;
    const size_t c = (offset - s.from) / s.chunkBytes;
    if (c >= s.chunkCount || c < s.consumed)
        return nullptr;
    {
        std::unique_lock lock(s.mutex);
        // Chunks before c: wait for the ones being decoded, skip the ones nobody took.
        if (s.nextClaim <= c) {
            const size_t claimed = s.nextClaim;
            for (size_t k = claimed; k < c; ++k)
                s.done[k] = 1;
            s.nextClaim = c + 1;
            // Where c lies a window or more past the released chunks, a worker may still be
            // decoding the chunk whose buffer is c's: the VM writes it only once they are done
            // (regression: tst_parallel_parse mutatedFilesSameAsOneThread crashed in CI in
            // fastBatches, reading a buffer a worker was filling).
            s.changed.wait(lock, [&] {
                for (size_t k = s.consumed; k < claimed; ++k)
                    if (!s.done[k])
                        return false;
                return true;
            });
            lock.unlock();
            s.decode(c);
            lock.lock();
            s.done[c] = 1;
        }
        s.changed.wait(lock, [&] {
            for (size_t k = s.consumed; k <= c; ++k)
                if (!s.done[k])
                    return false;
            return true;
        });
        if (s.consumed < c) {
            s.consumed = c;
            s.changed.notify_all();
        }
    }
    DecodedBatches& d = s.buffers[c % s.window];
    const auto it = std::lower_bound(d.batches.begin(), d.batches.end(), offset,
                                     [](const DecodedBatches::Batch& b, size_t o) { return b.offset < o; });
    if (it == d.batches.end() || it->offset != offset)
        return nullptr;
    batch = static_cast<size_t>(it - d.batches.begin());
    ++m_taken;
    return &d;
}

} // namespace memscope
