#include "allocator/reduction_buffers.h"

#include "common/format_bytes.h"

#include <algorithm>
#include <cmath>

namespace memscope {

namespace {

constexpr int64_t kTargetBlocks = 2112; // SMs x blocks an SM (H100, H200: 132 x 16)
constexpr uint64_t kMinBuffer = 1 << 20;
constexpr size_t kInputLookBack = 64; // allocations before the output searched for the input

int64_t lastPow2(int64_t n)
{
    int64_t p = 1;
    while (p * 2 <= n)
        p *= 2;
    return p;
}

int64_t divUp(int64_t a, int64_t b) { return (a + b - 1) / b; }

// ATen's blocks an output for `perThread` values a thread (1: the input is not split, no buffer)
int64_t ctasFor(int64_t perThread, int64_t cap)
{
    if (perThread < 256)
        return 1;
    return std::max(std::min(cap, divUp(perThread, 16)), divUp(perThread, 256));
}

// The values a thread reduces at `factor` times the recorded rows (0: the rows are not known)
int64_t perThreadAt(const ReductionBuffer& r, double factor)
{
    if (r.ctas <= 0 || r.rows <= 0 || r.blockHeight <= 0)
        return 0;
    return divUp(static_cast<int64_t>(std::ceil(static_cast<double>(r.rows) * factor)), r.blockHeight);
}

} // namespace

std::vector<ReductionBuffer> reductionBuffers(const Replay& replay, size_t deviceIndex)
{
    const DeviceReplay& dr = replay.devices.at(deviceIndex);
    std::vector<ReductionBuffer> out(dr.allocations.size());
    // the allocations in the order they were made
    std::vector<int32_t> made;
    for (size_t e = 0; e < dr.eventAllocation.size(); ++e) {
        const AllocationId id = dr.eventAllocation[e];
        if (id.valid() && dr.allocation(id).allocEvent.value == static_cast<int64_t>(e))
            made.push_back(id.value);
    }
    for (size_t k = 1; k + 1 < made.size(); ++k) {
        const Allocation& output = dr.allocations[static_cast<size_t>(made[k - 1])];
        const Allocation& buffer = dr.allocations[static_cast<size_t>(made[k])];
        const Allocation& semaphore = dr.allocations[static_cast<size_t>(made[k + 1])];
        if (buffer.size < kMinBuffer || semaphore.size == 0 || semaphore.size > 4096 || semaphore.size % 4 != 0 ||
            !buffer.freeEvent.valid() || !semaphore.freeEvent.valid() || semaphore.freeEvent.value > buffer.freeEvent.value ||
            (output.freeEvent.valid() && output.freeEvent.value < buffer.freeEvent.value))
            continue;
        const auto grid = static_cast<int64_t>(semaphore.size / 4);
        for (const uint64_t element : {uint64_t{4}, uint64_t{2}}) {
            if (output.size % element != 0)
                continue;
            const auto outputs = static_cast<int64_t>(output.size / element);
            bool found = false;
            for (const int64_t vec : {4, 2, 1}) {
                if (outputs % vec != 0)
                    continue;
                const int64_t x = std::min<int64_t>(lastPow2(std::max<int64_t>(1, outputs / vec)), 32) * vec;
                const auto unit = static_cast<uint64_t>(4 * outputs * x);
                if (divUp(outputs, x) != grid || buffer.size % unit != 0)
                    continue;
                ReductionBuffer r{static_cast<int64_t>(buffer.size / unit), divUp(kTargetBlocks, grid), 0, 0};
                // the block: 512 / vec threads, its width the lanes (x / vec), its height the rest
                r.blockHeight = std::max<int64_t>(1, 512 / vec / (x / vec));
                // the input: a tensor alive at the reduction whose rows give its ctas
                for (size_t back = 2; back <= kInputLookBack && back <= k && r.rows == 0; ++back) {
                    const Allocation& in = dr.allocations[static_cast<size_t>(made[k - back])];
                    if (in.freeEvent.valid() && in.freeEvent.value < buffer.allocEvent.value)
                        continue;
                    for (const uint64_t e : {uint64_t{4}, uint64_t{2}}) {
                        const uint64_t perRow = static_cast<uint64_t>(outputs) * e;
                        if (in.size % perRow != 0 || in.size / perRow < 2)
                            continue;
                        const auto rows = static_cast<int64_t>(in.size / perRow);
                        if (ctasFor(divUp(rows, r.blockHeight), r.cap) == r.ctas) {
                            r.rows = rows;
                            break;
                        }
                    }
                }
                out[static_cast<size_t>(made[k])] = r;
                found = true;
                break;
            }
            if (found)
                break;
        }
    }
    return out;
}

double reductionBufferFactor(const ReductionBuffer& r, double factor)
{
    if (const int64_t perThread = perThreadAt(r, factor); perThread > 0) {
        const int64_t ctas = ctasFor(perThread, r.cap);
        // no split: no buffer (a byte stands for it)
        return ctas > 1 ? static_cast<double>(ctas) / static_cast<double>(r.ctas) : 0.0;
    }
    if (r.ctas <= 0 || factor <= 1.0 || r.ctas > r.cap)
        return factor; // not one; fewer values (linear down); past c1 already (grows as V/256)
    const double perThread16 = static_cast<double>(r.ctas) * factor; // V/16 at the new batch
    const double ctas = std::max(std::min(static_cast<double>(r.cap), perThread16), perThread16 / 16.0);
    return std::max(1.0, ctas / static_cast<double>(r.ctas));
}

std::string reductionCapNote(const std::vector<ReductionBuffer>& buffers, const DeviceReplay& replay, double factor)
{
    if (!(factor > 1.0))
        return {};
    // capped: fewer blocks than its values would take (where its rows are known, by the rule
    // itself, not by a factor its whole blocks round under)
    auto cappedAt = [&](const ReductionBuffer& r) {
        if (const int64_t perThread = perThreadAt(r, factor); perThread > 0)
            return perThread >= 256 && divUp(perThread, 16) > r.cap && divUp(perThread, 256) < r.cap;
        return r.ctas > 0 && reductionBufferFactor(r, factor) < factor;
    };
    uint64_t capped = 0;
    for (size_t a = 0; a < buffers.size() && a < replay.allocations.size(); ++a)
        if (cappedAt(buffers[a]))
            capped = std::max(capped, replay.allocations[a].size);
    if (capped == 0)
        return {};
    return "the backward's reduction buffers (up to " + formatBytes(static_cast<int64_t>(capped)) +
           " recorded) grow with the batch only up to the blocks 132 SMs run at once (an H100 or H200); on a GPU with "
           "fewer SMs they stop sooner";
}

} // namespace memscope
