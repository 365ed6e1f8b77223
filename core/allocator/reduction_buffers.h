#pragma once

#include "replay/replay.h"

#include <cstdint>
#include <string>
#include <vector>

namespace memscope {

/*
 * ATen's reductions (a sum over the batch: the backward's sum_to of a broadcast bias or scale)
 * split a long reduction across thread blocks and stage their partial results in a global
 * buffer of 4 B x outputs x X x ctas: X outputs a block covers (32 lanes x a vector of 4,
 * fewer lanes for few outputs), ctas blocks an output = max(min(c1, V/16), V/256), V the
 * values a thread reduces (the batch's share), c1 = ceil(T / grid), grid = ceil(outputs / X)
 * and T = 2112 blocks on an H100/H200 (132 SMs x 16). So the buffer grows with the batch up
 * to c1 blocks an output, then stays (measured: Swin-T's 96 MB buffer is 138 MB, not 384 MB,
 * at four times the batch) until V/256 passes c1.
 *
 * Found from the trace alone: the reduction's output (outputs x 4 or 2 B), the buffer right
 * after it, a semaphore of 4 B x grid right after that, and the buffer's size a whole number
 * of blocks an output for the X the outputs give. V is the input's rows over the block's
 * height (128 threads over 32 lanes for a vector of 4: 4); with fewer than 256 values a
 * thread the input is not split and there is no buffer. Where the input is found, the buffer
 * at another batch follows from its rows (a capped buffer stays capped at half the batch
 * while V/16 is over c1: RoBERTa's 16,384-output bias, 17 blocks at batch 16, 16 at 8);
 * where not, it is taken to be V/16 below the cap.
 */
struct ReductionBuffer {
    int64_t ctas = 0; // blocks an output in the recording; 0: not a reduction's buffer
    int64_t cap = 0; // c1
    // The values an output reduces (the rows of the input), where the input was found: a live
    // tensor made shortly before, of rows x outputs elements, whose rows give the recorded
    // ctas by the rule above (V = rows / the block's height). 0: not found.
    int64_t rows = 0;
    int64_t blockHeight = 0;
};

// Per AllocationId of device `deviceIndex`.
std::vector<ReductionBuffer> reductionBuffers(const Replay& replay, size_t deviceIndex);

// The factor on a reduction buffer's recorded bytes when what it reduces grows by `factor`.
double reductionBufferFactor(const ReductionBuffer& r, double factor);

// What a prediction at `factor` times the batch says when one of `buffers` (per AllocationId of
// `replay`) reaches its cap there: the cap is an H100's or H200's, which the trace cannot tell
// ("": none does).
std::string reductionCapNote(const std::vector<ReductionBuffer>& buffers, const DeviceReplay& replay, double factor);

} // namespace memscope
