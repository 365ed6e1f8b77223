#pragma once

#include "allocator/model_change.h"
#include "allocator/reduction_buffers.h"
#include "allocator/trace_ops.h"
#include "allocator/what_if.h"

#include <functional>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

namespace memscope {

class PythonStacks;

/*
 * Model-level what-ifs (`memscope whatif --checkpoint/--precision/--optimizer/--accumulate/
 * --seq`): each change edits the recorded stream of allocations (trace_ops.h) and the edited
 * stream is replayed through the allocator model; no formula is applied to totals.
 *
 * - Sizes first. Batch and sequence scale what grows with the batch (what_if.h) by B/B0 x
 *   L/L0, divided by the accumulation steps (a reduction's global buffer only up to its cap:
 *   reduction_buffers.h). Precision scales each allocation by the bytes its dtype takes in
 *   the target mode over the recorded one: parameters, gradients, optimizer state and the
 *   step's temporaries follow the weights (4 B in fp32 and mixed precision, 2 B in
 *   bf16/fp16); forward tensors follow the op that made them: under autocast the outputs of
 *   matrix products, convolutions, attention and cuDNN's recurrent layers (the innermost
 *   frames name the module or function) are 2 B, the others (norms, softmax, the loss,
 *   element-wise ops on fp32 inputs) stay 4 B; a backward tensor takes the forward activations' average, the loss's
 *   own gradients their loss's dtype; masks, max pooling's int64 indices, workspaces and
 *   reductions' accumulators keep their bytes. Inputs above 1 MiB (images, not token ids)
 *   follow pure bf16/fp16. peft's LoRA adapters stay fp32 in a pure 16-bit model, and so do
 *   transformers' attention probabilities (`softmax(..., dtype=torch.float32)`), beside the
 *   16-bit copy the next product saves.
 * - Autocast's weight copies: moving to mixed precision adds, per iteration, a half-size
 *   copy of every weight of 16 KiB or more but a lookup table, made at the forward's start
 *   and released where the backward makes a gradient of its weight's size (the op that saved
 *   it has run its backward), else at the backward's end; moving away removes the forward
 *   allocations of exactly half a weight's size. A product's fp32 input gets a half-size
 *   copy that takes over its lifetime, the input dying at the cast; a fused attention kernel
 *   reads its projections' 16-bit outputs and its output is the next product's input (no casts).
 *   At 16 bits a fused kernel writes its output in its query's layout: a query made contiguous
 *   head by head (Whisper) costs a copy of the output when it is transposed back.
 *   A product's weight gradient is made at 16 bits and cast to fp32 once the product's backward
 *   has freed its output gradient.
 * - Attention: at 16 bits the flash kernel replaces a math kernel that built its own causal
 *   mask (its tensors go but the output; its inputs are saved instead); with a mask passed
 *   in the math kernel runs again, in fp32. Grouped-query attention recorded in the flash
 *   kernel (its k and v projections smaller than q) runs the math kernel in fp32: its
 *   B x H x L x L scores and softmax, k and v repeated to every head, and three tensors of
 *   the scores' size in its backward are added. A 16-bit RMS norm saves an fp32 copy of its input.
 * - Optimizer: the recorded state allocations come in groups of K per parameter (AdamW's
 *   exp_avg, exp_avg_sq); the target keeps the first K' of each group, adds copies, or
 *   (from a stateless recording) allocates K' x each parameter at the first step; 8-bit
 *   states are a quarter of a 4-byte one. The step's temporaries of parameter size
 *   (foreach Adam) are dropped for an optimizer that updates in place (SGD).
 * - Checkpointing: the repeated blocks of the forward are found from the stacks (the frame
 *   whose callee's forward restarts, at a line the call ran or far lower, is a loop over
 *   blocks, the one covering the most activation bytes outside its largest block wins, and
 *   another loop's blocks that run outside its own join it where they hold 1/8 of its bytes
 *   (MobileViT's transformer layers after its inverted residuals); a
 *   call also restarts where a statement that ends calls, its line's own tensor made (a
 *   residual add), begins again; calls the lines cannot separate are split at a sub-module
 *   each calls once, from one line or, the calls taking two branches, from any line; inverted residuals of one statement each,
 * MobileNetV3's, at their expanding convolution; a loop run again a step over blocks of the same sizes, a bi-encoder's, has each
 * block once, and --checkpoint N takes the first N of every run; a function calling its modules one statement each through
 * frames of its own, Inception v3's `_forward`, has a call per statement, and its blocks are the calls of its most common
 * callee that do not run inside the others, its Mixed blocks, not its stem's convolutions). A checkpointed block keeps only its
 * output (of its activations of a block's size, the one the backward frees first: the next block saved it; or, where the last
 * tensor outliving it is freed in the forward, that tensor, kept until the block's backward as the next blocks' input: DenseNet's
 * layers); its other activations are freed at the block's end and allocated again, with its forward temporaries, right before its
 * backward starts (after the backward has freed the activations of what came after it), where the recorded backward frees them.
 * - Accumulation K: each iteration's forward and backward are repeated K times at B/K;
 *   the first backward makes the gradients, later ones add into them (their gradient
 *   buffers become temporaries; a gradient summed from parts, a weight used twice in the graph,
 *   waits for its last part); what the forward keeps past the backward lives until
 *   the next micro-batch.
 * - Sequence: L/L0 like the batch, and once more for attention's L x L scores (in a run of
 *   attention allocations, those at least twice its most common size; a run is a kernel's
 *   call, or one call of a model's own line making two tensors that large; in a model's own
 *   code, a softmax that large and its function's tensors of its size; eager attention that
 *   transforms its scores, Gemma-2's soft-capping, three or more of a size at least twice the call's
 *   smallest, and the softmax of that size).
 * - Sharding over N GPUs (DDP, ZeRO-1, FSDP2): shard_edit.h, after the other changes.
 * Limits: a trace is one run; op dtypes are read from the ATen operator where the
 * recording has native frames (stacks="all", torch's default; autocast_ops.h), else from
 * the innermost Python frames; a recording that already checkpoints or accumulates is
 * replayed as is; a trace that opens mid-run (a full ring buffer) is predicted from its
 * first whole iteration.
 */
struct BlockSpan {
    int64_t firstEvent = 0;
    int64_t lastEvent = 0; // inclusive
    int position = 0; // the block's place in the model; one place each run where the blocks run twice a step
};

struct ForwardBlocks {
    std::vector<std::vector<BlockSpan>> perIteration; // by Iteration::index
    std::string loopFrame; // "file:line (function)" of the loop over the blocks ("A and B": two loops)
    int count() const; // the distinct blocks: --checkpoint N takes the first N
    int runs() const; // how often a step runs them (a bi-encoder's encoder: 2)
    // under --checkpoint N (-1: all)
    static bool checkpointed(const BlockSpan& block, int checkpoint);
};

struct RankPeak {
    int rank = 0;
    int64_t reservedPeak = 0;
    int64_t allocatedPeak = 0;
    int64_t requestedPeak = 0;
    bool oom = false;
};

struct ChangeResult {
    ModelChanges changes;
    SimulationResult result; // under --shard: the rank that reserves most
    std::vector<RankPeak> ranks; // under --shard: every rank
    double computeCost = 0; // extra compute per step as a fraction (recomputation)
    std::string cost; // "none", "recompute 31% of a step", "4 micro-batches a step"
    std::vector<std::string> notes; // what could not be modelled
};

// The what-if's bound on reserved bytes (docs/ALLOCATOR.md: within 8% on most measured runs;
// where blocks land moves them more under checkpointing): a prediction that fits within this
// fraction of the capacity is "tight", and the real run may not fit.
constexpr double kReservedMargin = 0.08;
bool isTight(int64_t reservedPeak, uint64_t capacity);
// The capacity less kReservedMargin: what a safe batch must fit in.
uint64_t safeCapacity(uint64_t capacity);

struct PlanRow {
    ModelChanges changes;
    std::string settings; // allocator settings changed ("" none)
    int64_t reservedPeak = 0;
    int64_t allocatedPeak = 0;
    bool fits = false;
    bool tight = false; // fits, within kReservedMargin of the capacity
    double computeCost = 0;
    std::string cost;
    int64_t maxBatch = 0;
    int64_t safeBatch = 0; // the largest batch with kReservedMargin and a largest tensor's segment to spare
};

// Const after construction (setRecorded aside): build(), simulate(), maxBatch() and plan()
// may run from several threads at once.
class ModelWhatIf {
public:
    ModelWhatIf(const Replay& replay, size_t deviceIndex, const DeviceAttribution& attribution);

    const RecordedSetup& recorded() const { return m_recorded; }
    void setRecorded(const RecordedSetup& r) { m_recorded = r; }
    const ForwardBlocks& blocks() const { return m_blocks; }
    // Per AllocationId: autocast's copy of a weight in a mixed-precision recording (bytes
    // that do not grow with the batch).
    const std::vector<uint8_t>& weightCopies() const { return m_weightCopy; }
    // Per AllocationId: the bytes that keep their size at any batch though their category and
    // phase would scale them: a shared weight's partial gradients, the weight copies when the
    // recording is mixed precision, and one sequence's tensors (rotary tables, and position
    // embeddings once the recorded batch is known) (simulateBatch's `fixed`).
    std::vector<uint8_t> fixedAtAnyBatch() const;

    // The edited stream for `changes` (notes: what could not be modelled).
    OpStream build(const ModelChanges& changes, std::vector<std::string>* notes = nullptr) const;
    ChangeResult simulate(const ModelChanges& changes, const SimulationOptions& options) const;
    // The same, handing back the edited stream it replayed (the window draws its curves by
    // the recorded event each operation stands for).
    ChangeResult simulate(const ModelChanges& changes, const SimulationOptions& options, OpStream& built) const;
    // The largest batch under options.capacity with `changes` (its batch is ignored).
    MaxBatchResult maxBatch(const ModelChanges& changes, const SimulationOptions& options, int64_t limit = 1 << 16) const;
    // The largest batch whose reserved peak leaves kReservedMargin of options.capacity, and room
    // for one more segment of its largest tensor: one the real run fits with the what-if's
    // measured error. Never more than `largest`, the largest batch under the whole capacity
    // where the caller has it: the replay's peak is not monotonic in the batch (segments round),
    // and a search under less room can land on a batch the search under more passed over.
    int64_t safeBatch(const ModelChanges& changes, const SimulationOptions& options, int64_t largest = -1) const;
    // Changes alone and two together (checkpointing all or half the blocks, amp-bf16, bf16,
    // accumulation 2/4/8, AdamW 8-bit, SGD with momentum), and expandable segments alone and
    // with one of them, each with its reserved peak under options.settings, whether it fits
    // options.capacity, its cost and its largest batch; the ones that fit first, cheapest
    // first (extra compute, then micro-batches, then the number of changes, then the peak).
    std::vector<PlanRow> plan(const SimulationOptions& options) const;
    // The same, asking `stop` before each replay: once it says true the rows so far come back
    // (the window's plan job, cancelled by a newer request).
    std::vector<PlanRow> plan(const SimulationOptions& options, const std::function<bool()>& stop) const;

    // The extra compute of `changes` per step (fraction) and its words.
    std::pair<double, std::string> cost(const ModelChanges& changes) const;

private:
    double sizeFactor(int32_t origin, Precision from, Precision to, double batchFactor, double seqFactor) const;
    bool isLowUnderAutocast(int32_t origin) const;
    // One sequence's tensor (a position embedding, a rotary table): the same bytes at any batch.
    bool isOneSequences(size_t allocation) const;

    const Replay& m_replay;
    size_t m_index;
    const DeviceAttribution& m_attribution;
    ForwardBlocks m_blocks;
    // The trace's first iteration began before it (a full ring buffer, or the recording began
    // after the model existed): not when only a few tensors were made before it (a warm-up's
    // cuBLAS workspaces) and the model's parameters are made in it.
    bool m_opensMidRun = false;
    RecordedSetup m_recorded;
    std::vector<uint8_t> m_half; // per allocation: low precision under autocast
    std::vector<uint64_t> m_castBytes; // per allocation: autocast's copy of its fp32 input (bytes)
    std::vector<uint8_t> m_layoutCopy; // per attention output: transposed back by a copy at 16 bits
    std::vector<uint8_t> m_summedPart; // per allocation: a gradient's last part, added into it
    std::unordered_map<int32_t, int32_t> m_summedInto; // a gradient summed from parts -> its last part
    std::vector<uint8_t> m_fp32Softmax; // per allocation: transformers' attention softmax, fp32 in any model
    std::vector<uint8_t> m_productGradient; // per allocation: a product's weight gradient, 16-bit then cast under autocast
    // an fp32 input that autocast casts for matrix products and that nothing else saves (by
    // allocation) -> the event of the last product reading it, where it dies
    std::unordered_map<int32_t, int64_t> m_consumedAt;
    std::vector<int32_t> m_castSource; // per product with a cast copy: the input it copies (-1: none)
    std::vector<uint8_t> m_quadratic; // per allocation: attention's L x L scores
    // per allocation: made by a math-kernel attention that 16 bits do not move to the flash
    // kernel (a mask passed in), which computes in fp32 whatever its inputs
    std::vector<uint8_t> m_mathAttention;
    // per activation that ends a statement of transformers' model code: the event by which
    // that frame's next statement that allocates has run (or the frame returned); -1 elsewhere
    std::vector<int64_t> m_boundUntil;
    // per math-kernel attention call that 16 bits move to the flash kernel (a causal mask of
    // its own): its tensors but the output, the inputs it consumed, and where its scores died
    struct FlashCall {
        std::vector<int32_t> dropped;
        std::vector<int32_t> inputs;
        int64_t saveUntil = -1;
    };
    std::vector<FlashCall> m_flashCalls;
    // per fused-kernel attention call with grouped-query attention, recorded at 16 bits: fp32
    // has no fused kernel for it and runs the math kernel, whose B x H x L x L scores, softmax
    // and their gradients the recording does not show (measured: a Qwen2's fp32 run)
    struct GqaCall {
        int32_t output = -1; // the call's output
        std::vector<int32_t> others; // the fused kernel's other tensors (copies, log-sum-exp, seeds)
        int64_t after = -1; // the event of the forward's next allocation after the call
        int64_t backwardAt = -1; // where the backward frees the kernel's saved tensors
        uint64_t logSumExp = 0; // bytes: B x H x L x 4
    };
    std::vector<GqaCall> m_gqaCalls;
    // per allocation: an RMS norm's fp32 copy of its 16-bit input (`.to(torch.float32)`), saved
    // for its backward. In fp32 the norm saves its input instead, an fp32 tensor as well: from a
    // 16-bit recording to fp32 the copy keeps its bytes (measured: the decoder +5.3% -> +1.6%,
    // Llama +2.4% -> 0.0%). To amp-bf16 it is doubled with the rest, as before: kept, the
    // decoder went from +0.2% to -5.2%.
    std::vector<uint8_t> m_normCopy;
    // per allocation: a LoRA adapter of peft's (its parameters; in the forward its dropout,
    // projections and scaling, not their sum), which peft keeps fp32 in a bf16/fp16 model
    // (cast_adapter_dtype), casting the adapter's input up and the sum back
    std::vector<uint8_t> m_adapterFp32;
    std::vector<uint64_t> m_inputSizes; // the first iteration's inputs (token ids: B x L x 8 bytes)
    double m_backwardHalfShare = 0; // share of forward activation bytes that autocast halves
    // per allocation: a convolution's workspace (freed before any other allocation, in a
    // program whose forward runs convolutions): optional under a capacity (TraceOp::optional)
    std::vector<uint8_t> m_convWorkspace;
    // per allocation: the bytes an fp32 weight-gradient workspace holds over its input-gradient one
    std::vector<uint64_t> m_filterWorkspaceExtra;
    bool m_convolutionalNetwork = false;
    // some op of the recording is a matrix product (cuBLAS made its workspace)
    bool m_matrixProducts = false;
    // per allocation: made inside transformers' loss (loss_utils upcasts the logits to fp32),
    // fp32 whatever the model's precision
    std::vector<uint8_t> m_upcastLoss;
    // per size of a forward tensor: its bytes and those in an upcast loss; in a pure 16-bit
    // model a backward buffer of that size (a gradient has its tensor's dtype) is 16-bit
    // unless m_backwardUpcast says it is the loss's
    struct SizeDtypes {
        int64_t bytes = 0, upcast = 0, half = 0; // half: made by an op autocast runs in 16 bits
    };
    std::unordered_map<uint64_t, SizeDtypes> m_forwardBySize;
    // per allocation: a backward buffer made while an upcast-loss forward tensor of its size
    // is alive (the loss's own gradients, fp32)
    std::vector<uint8_t> m_backwardUpcast;
    // per allocation: made inside a reference selective scan (transformers' Mamba without the
    // fused kernels, mamba_ssm's selective_scan_ref), which upcasts its inputs and computes in
    // fp32 whatever the model's precision; and the backward buffers made while such a tensor
    // of their size is alive (its gradients, fp32 too)
    std::vector<uint8_t> m_fp32Scan;
    std::vector<uint8_t> m_backwardFp32Scan;
    // the scan's per-token products (its state times C): at 16 bits each reads a 16-bit copy of
    // the fp32 state, saved for the backward as long as the state is
    struct ScanProduct {
        int32_t product = -1; // the product's output
        int32_t state = -1; // the state it reads
    };
    std::vector<ScanProduct> m_scanProducts;
    // per allocation: a temporary of a convolution's backward (its input's gradient, its
    // workspaces; where the recording names its operators), 16-bit under autocast as the
    // convolution ran
    std::vector<uint8_t> m_convolutionBackwardTemp;
    // per iteration with an upcast loss: its logits, the gradient the backward casts back to
    // 16 bits (-1: none) and where
    struct UpcastLoss {
        int32_t logits = -1;
        int32_t gradient = -1;
        int64_t castAt = 0;
    };
    std::vector<UpcastLoss> m_upcastLosses;
    // per allocation: the log-softmax of torch.nn.functional.cross_entropy on logits that are
    // not upcast first. Under autocast ATen's cross_entropy asks log_softmax for the logits'
    // 16-bit dtype (that output is saved for the backward) and nll_loss, an fp32 op, casts it
    // to the fp32 tensor the fp32 recording holds: half its bytes more, as long.
    std::vector<uint8_t> m_crossEntropy;
    // per such log-softmax: the first two backward buffers of its size made while it lives
    // (nll_loss's gradient, fp32 under autocast, and log_softmax's, 16-bit; -1: none)
    struct CrossEntropyCall {
        int32_t logSoftmax = -1;
        int32_t nllGradient = -1;
        int32_t softmaxGradient = -1;
    };
    std::vector<CrossEntropyCall> m_crossEntropyCalls;
    // the same call recorded under autocast (its tensors' allocations; -1: none)
    struct AmpCrossEntropy {
        int32_t logSoftmax = -1, copy = -1, nllGradient = -1, cast = -1, softmaxGradient = -1;
    };
    std::vector<AmpCrossEntropy> m_ampCrossEntropyCalls;
    // per allocation: the bytes per element it has in an autocast recording (2: the
    // log-softmax and its gradient, 4: nll_loss's gradient), to be given the logits' dtype; 0: not one
    std::vector<uint8_t> m_ampCrossEntropy;
    std::vector<uint8_t> m_crossEntropyGradient; // per allocation: 1 nll_loss's gradient, 2 log_softmax's
    // per allocation: labelled a gradient but a workspace (made in an earlier iteration,
    // alive at the end, where later iterations make their gradients anew)
    std::vector<uint8_t> m_persistentWorkspace;
    // RMS norms (a squared input and its mean on one line): in a 16-bit model they square an
    // fp32 copy of the input, saved with the normalized output
    struct UpcastNorm {
        int64_t event = 0; // where the square is made
        int32_t square = -1; // its allocation
        int64_t freeEvent = 0; // where the normalized output is freed
    };
    std::vector<UpcastNorm> m_upcastNorms;
    // whether the trace has any parameter, activation, gradient or optimizer state (a model a
    // precision change acts on)
    bool m_modelTensors = false;
    // some iteration has a forward and a backward (a training step to accumulate over)
    bool m_trains = false;
    // per allocation: a large weight that no matrix product reads (an embedding's table,
    // known where the recording names the backward's operators): autocast makes no copy
    std::vector<uint8_t> m_uncastWeight;
    // per allocation: bytes that do not follow the dtype (dropout's bool mask, a backward
    // reduction's fp32 buffer)
    std::vector<uint8_t> m_fixedBytes;
    // per allocation: an embedding's output one sequence long, the batch's token embedding this
    // many times its size (a position embedding, [1, L, H]); 0 elsewhere
    std::vector<uint32_t> m_perSequence;
    std::vector<ReductionBuffer> m_reductions; // per allocation: a reduction's buffer (grows to a cap)
    // per allocation: a forward allocation of half a large weight's bytes that the same call
    // follows with another allocation (autocast's copy, made before the product's output; an
    // fp32 output of that size is the last of its call)
    std::vector<uint8_t> m_weightCopy;
    // per allocation: one of a shared weight's gradients, summed into its gradient (freed right
    // after the gradient is made, with another of the same bytes)
    std::vector<uint8_t> m_gradPartial; // 1: the first made, 2: another
    struct TiedGradient {
        int32_t gradient = -1, first = -1; // the gradient, its first partial
    };
    std::vector<TiedGradient> m_tiedGradients;
    bool m_attention = false; // the forward calls attention (its frames or its operator)
    // the gradients of the iteration that makes the most, by size (the trainable parameters);
    // empty where the trace has no backward
    std::map<uint64_t, int64_t> m_gradientSizes;
    std::map<uint64_t, int64_t> m_matrixGradientSizes; // of those, made by a matrix product's backward
    std::map<uint64_t, int64_t> m_kernelGradientSizes; // of those, made by a convolution's backward
};

// The repeated blocks of each iteration's forward (see ModelWhatIf).
ForwardBlocks findForwardBlocks(const Replay& replay, size_t deviceIndex, const DeviceAttribution& attribution);
// The same, reading stacks through `stacks` (made once per snapshot).
ForwardBlocks findForwardBlocks(const Replay& replay, size_t deviceIndex, const DeviceAttribution& attribution,
                                const PythonStacks& stacks);

} // namespace memscope
