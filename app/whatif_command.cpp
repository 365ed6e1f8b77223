#include "whatif_command.h"

#include "command_line.h"

#include "allocator/model_what_if.h"
#include "allocator/reduction_buffers.h"
#include "allocator/what_if.h"
#include "analysis/analysis.h"
#include "common/format_bytes.h"

#include <cmath>
#include <cstdio>
#include <iostream>
#include <sstream>

namespace memscope {

namespace {

// "80GiB", "80 GB", "81920MiB", "85899345920": bytes (KiB/MiB/GiB/TiB binary, KB/MB/GB/TB decimal).
uint64_t parseCapacity(const std::string& text)
{
    char* end = nullptr;
    const double x = std::strtod(text.c_str(), &end);
    std::string unit(end ? end : "");
    while (!unit.empty() && unit.front() == ' ')
        unit.erase(unit.begin());
    for (char& c : unit)
        c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
    double mult = 0;
    if (unit.empty() || unit == "B")
        mult = 1;
    else if (unit == "KIB" || unit == "K")
        mult = 1024.0;
    else if (unit == "MIB" || unit == "M")
        mult = 1024.0 * 1024;
    else if (unit == "GIB" || unit == "G")
        mult = 1024.0 * 1024 * 1024;
    else if (unit == "TIB" || unit == "T")
        mult = 1024.0 * 1024 * 1024 * 1024;
    else if (unit == "KB")
        mult = 1e3;
    else if (unit == "MB")
        mult = 1e6;
    else if (unit == "GB")
        mult = 1e9;
    else if (unit == "TB")
        mult = 1e12;
    if (end == text.c_str() || !std::isfinite(x) || x <= 0 || mult == 0 || x * mult >= 1.8e19)
        throw UsageError("--capacity takes a size such as 80GiB, 80GB or a number of bytes, got '" + text + "'");
    return static_cast<uint64_t>(std::llround(x * mult));
}

std::string jsonString(const std::string& s)
{
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (static_cast<unsigned char>(c) < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            out += buf;
        } else {
            out += c;
        }
    }
    return out + "\"";
}

std::string settingsText(const AllocatorSettings& s)
{
    const std::string conf = s.toConf();
    return conf.empty() ? "torch's defaults" : conf;
}

void oomJson(std::ostream& o, const std::optional<SimulatedOom>& oom)
{
    if (!oom) {
        o << "null";
        return;
    }
    o << "{\"event\": " << oom->event << ", \"time_us\": " << oom->timeUs << ", \"size_bytes\": " << oom->size
      << ", \"rounded_size_bytes\": " << oom->roundedSize << ", \"phase\": " << jsonString(std::string(phaseName(oom->phase)))
      << ", \"reserved_bytes\": " << oom->reserved << ", \"allocated_bytes\": " << oom->allocated << "}";
}

std::string oomText(const std::optional<SimulatedOom>& oom)
{
    if (!oom)
        return "no";
    std::ostringstream o;
    o << "yes, at event " << oom->event << " (" << phaseLabel(oom->phase) << ", time_us " << oom->timeUs << "): asking "
      << formatBytes(static_cast<int64_t>(oom->size)) << " with " << formatBytes(oom->reserved) << " reserved, "
      << formatBytes(oom->allocated) << " allocated";
    return o.str();
}

std::string changesJson(const ModelChanges& c)
{
    std::ostringstream o;
    o << "{\"checkpoint\": ";
    if (!c.checkpoint)
        o << "null";
    else if (*c.checkpoint < 0)
        o << "\"all\"";
    else
        o << *c.checkpoint;
    o << ", \"precision\": " << (c.precision ? jsonString(std::string(precisionName(*c.precision))) : std::string("null"))
      << ", \"optimizer\": " << (c.optimizer ? jsonString(std::string(optimizerName(*c.optimizer))) : std::string("null"))
      << ", \"accumulate\": " << c.accumulate << ", \"seq\": ";
    if (c.seq)
        o << *c.seq;
    else
        o << "null";
    o << ", \"batch\": ";
    if (c.batch)
        o << *c.batch;
    else
        o << "null";
    o << ", \"shard\": ";
    if (c.shard)
        o << "{\"kind\": " << jsonString(std::string(shardKindName(c.shard->kind))) << ", \"ranks\": " << c.shard->ranks << "}";
    else
        o << "null";
    o << "}";
    return o.str();
}

std::string planChangesText(const PlanRow& r)
{
    std::string t = r.changes.describe();
    if (!r.settings.empty())
        t += (t.empty() ? "" : " ") + std::string("--set ") + r.settings;
    return t.empty() ? "(as recorded)" : t;
}

ModelChanges parseChanges(const CommandLine& cl)
{
    ModelChanges c;
    if (auto v = cl.value("--checkpoint")) {
        if (*v == "all") {
            c.checkpoint = -1;
        } else {
            char* end = nullptr;
            const long n = std::strtol(v->c_str(), &end, 10);
            if (end == v->c_str() || *end != 0 || n < 1 || n > 1000000)
                throw UsageError("--checkpoint takes all or a number of blocks >= 1, got '" + *v + "'");
            c.checkpoint = static_cast<int>(n);
        }
    }
    if (auto v = cl.value("--precision")) {
        c.precision = precisionFromName(*v);
        if (!c.precision)
            throw UsageError("--precision takes fp32, bf16, fp16, amp-bf16 or amp-fp16, got '" + *v + "'");
    }
    if (auto v = cl.value("--optimizer")) {
        c.optimizer = optimizerFromName(*v);
        if (!c.optimizer)
            throw UsageError("--optimizer takes adamw, adam, sgd, sgd-momentum, adafactor, adamw-8bit or adamw-fused, got '" +
                             *v + "'");
    }
    if (auto v = cl.positive("--accumulate")) {
        if (*v != std::floor(*v) || *v > 4096)
            throw UsageError("--accumulate takes a whole number of micro-batches, got '" + cl.value("--accumulate").value_or("") +
                             "'");
        c.accumulate = static_cast<int>(*v);
    }
    c.seq = cl.positive("--seq");
    if (auto v = cl.value("--shard")) {
        c.shard = shardingFromText(*v);
        if (!c.shard)
            throw UsageError("--shard takes ddp:N, zero1:N or fsdp2:N (N ranks, each training the recorded batch), got '" + *v +
                             "'");
    }
    return c;
}

// The peaks of one simulated run, as both the allocator and the model-level what-if print them.
void printPeaks(const SimulationResult& what, std::optional<int64_t> recordedReserved)
{
    const char* untilOom = what.oom ? " (up to the out-of-memory error)" : "";
    std::cout << "  requested peak      " << formatBytes(what.requestedPeak) << untilOom << "\n"
              << "  allocated peak      " << formatBytes(what.allocatedPeak) << " (rounded blocks)" << untilOom << "\n"
              << "  reserved peak       " << formatBytes(what.reservedPeak) << untilOom
              << (recordedReserved ? " (recorded " + formatBytes(*recordedReserved) + ")" : std::string()) << "\n"
              << "  unallocated         " << formatBytes(what.unallocatedAtAllocatedPeak()) << " of "
              << formatBytes(what.reservedAtAllocatedPeak) << " reserved at the allocated peak ("
              << static_cast<int>(std::lround(what.unallocatedFractionAtAllocatedPeak() * 100)) << "%)\n"
              << "  fragmentation       " << static_cast<int>(std::lround(what.fragmentationAtAllocatedPeak() * 100))
              << "% there (1 - largest free block / free bytes); largest free block "
              << formatBytes(what.largestFreeAtAllocatedPeak) << "\n"
              << "  out of memory       " << oomText(what.oom) << "\n";
    if (what.recordedOomsAvoided > 0)
        std::cout << "  " << what.recordedOomsAvoided << " recorded out-of-memory error(s) would not happen\n";
    if (what.workspacesDropped > 0)
        std::cout << "  " << what.workspacesDropped
                  << " convolution workspace(s) did not fit and were done without (cuDNN takes a plan with less)\n";
}

// A batch in the recording's own units where it named none: 3 is three recorded batches.
std::string batchText(int64_t batch, bool recordedUnits)
{
    return std::to_string(batch) + (recordedUnits ? "x the recorded batch" : "");
}

void printSearch(const MaxBatchResult& search, bool recordedUnits = false)
{
    std::cout << "\nlargest batch that fits: " << batchText(search.maxBatch, recordedUnits);
    if (search.unbounded)
        std::cout << " (or more: nothing that grows with the batch ran out)";
    if (search.safeBatch >= 0)
        std::cout << "; with " << std::lround(kReservedMargin * 100)
                  << "% of the capacity and a segment of its largest tensor to spare (the what-if's error): " << search.safeBatch
                  << (recordedUnits ? "x" : "");
    std::cout << "\n  probes:";
    for (const BatchProbe& p : search.probes)
        std::cout << " " << p.batch << (p.fits ? " fits" : " OOM") << ";";
    std::cout << "\n";
}

int runModelWhatIf(const CommandLine& cl, const std::string& file, const Analysis& analysis, size_t index,
                   const AllocatorSettings& settings, const AllocatorSettings& recorded, std::optional<uint64_t> capacity,
                   ModelChanges changes, std::optional<double> batch, double recordedBatch, bool maxBatch, bool plan, bool json)
{
    const Replay& replay = *analysis.replay;
    const DeviceReplay& dr = replay.devices[index];
    if (!analysis.attribution || index >= analysis.attribution->devices.size())
        throw UsageError(file + ": no attribution for this device, so the model-level changes cannot be placed");
    const DeviceAttribution& attribution = analysis.attribution->devices[index];
    ModelWhatIf model(replay, index, attribution);
    RecordedSetup setup = model.recorded();
    setup.batch = recordedBatch;
    setup.batchKnown = cl.positive("--recorded-batch").has_value();
    if (auto l = cl.positive("--recorded-seq")) {
        setup.seq = *l;
        setup.seqKnown = true;
    }
    if (auto v = cl.value("--recorded-precision")) {
        const auto p = precisionFromName(*v);
        if (!p)
            throw UsageError("--recorded-precision takes fp32, bf16, fp16, amp-bf16 or amp-fp16, got '" + *v + "'");
        setup.precision = *p;
        setup.precisionEvidence = "given";
    }
    if (auto v = cl.value("--recorded-optimizer")) {
        const auto o = optimizerFromName(*v);
        if (!o)
            throw UsageError(
                "--recorded-optimizer takes adamw, adam, sgd, sgd-momentum, adafactor, adamw-8bit or adamw-fused, got '" + *v +
                "'");
        setup.optimizer = *o;
        setup.optimizerStates = optimizerStateRatio(*o);
        setup.optimizerEvidence = "given";
    }
    model.setRecorded(setup);
    if (batch)
        changes.batch = *batch;

    SimulationOptions options;
    options.settings = settings;
    if (capacity)
        options.capacity = *capacity;
    ChangeResult what = model.simulate(changes, options);
    if (capacity && !what.result.oom && isTight(what.result.reservedPeak, *capacity))
        what.notes.push_back("tight: the reserved peak is within " + std::to_string(std::lround(kReservedMargin * 100)) +
                             "% of the capacity, the what-if's bound on reserved bytes; the real run may not fit");
    std::optional<MaxBatchResult> search;
    if (maxBatch) {
        search = model.maxBatch(changes, options);
        search->safeBatch = model.safeBatch(changes, options, search->maxBatch);
    }
    std::vector<PlanRow> rows;
    if (plan)
        rows = model.plan(options);

    if (json) {
        const SimulationResult& w = what.result;
        std::ostringstream o;
        o << "{\n  \"file\": " << jsonString(file) << ",\n  \"device\": " << dr.device
          << ",\n  \"recorded_settings\": " << jsonString(recorded.toConf())
          << ",\n  \"settings\": " << jsonString(settings.toConf()) << ",\n  \"capacity_bytes\": ";
        if (capacity)
            o << *capacity;
        else
            o << "null";
        o << ",\n  \"recorded_batch\": " << recordedBatch << ",\n  \"batch\": " << changes.batch.value_or(recordedBatch)
          << ",\n  \"recorded\": {\"requested_peak_bytes\": " << dr.peakRequested.bytes
          << ", \"reserved_peak_bytes\": " << dr.peakReserved.bytes << "}"
          << ",\n  \"recorded_setup\": {\"precision\": " << jsonString(std::string(precisionName(setup.precision)))
          << ", \"precision_evidence\": " << jsonString(setup.precisionEvidence)
          << ", \"optimizer\": " << jsonString(std::string(optimizerName(setup.optimizer)))
          << ", \"optimizer_state_per_parameter\": " << setup.optimizerStates
          << ", \"optimizer_evidence\": " << jsonString(setup.optimizerEvidence)
          << ", \"checkpointing\": " << (setup.checkpointedBlocks > 0 ? "true" : "false") << ", \"blocks\": " << setup.blocks
          << ", \"block_runs\": " << model.blocks().runs() << ", \"block_loop\": " << jsonString(model.blocks().loopFrame)
          << ", \"operators_recorded\": " << (setup.operatorsRecorded ? "true" : "false")
          << ", \"lightning\": " << (setup.lightning ? "true" : "false")
          << ", \"compiled\": " << (setup.compiled ? "true" : "false") << "}"
          << ",\n  \"changes\": " << changesJson(changes) << ",\n  \"compute_cost\": " << what.computeCost
          << ",\n  \"cost\": " << jsonString(what.cost) << ",\n  \"reserved_peak_bytes\": " << w.reservedPeak
          << ",\n  \"allocated_peak_bytes\": " << w.allocatedPeak << ",\n  \"requested_peak_bytes\": " << w.requestedPeak
          << ",\n  \"fragmentation_bytes\": " << w.fragmentationAtPeak()
          << ",\n  \"fragmentation_fraction\": " << w.fragmentationFraction() << ",\n  \"oom\": ";
        oomJson(o, w.oom);
        if (!what.ranks.empty()) {
            o << ",\n  \"ranks\": [";
            for (size_t k = 0; k < what.ranks.size(); ++k) {
                const RankPeak& p = what.ranks[k];
                o << (k ? ", " : "") << "{\"rank\": " << p.rank << ", \"reserved_peak_bytes\": " << p.reservedPeak
                  << ", \"allocated_peak_bytes\": " << p.allocatedPeak << ", \"requested_peak_bytes\": " << p.requestedPeak
                  << ", \"oom\": " << (p.oom ? "true" : "false") << "}";
            }
            o << "]";
        }
        o << ",\n  \"notes\": [";
        for (size_t k = 0; k < what.notes.size(); ++k)
            o << (k ? ", " : "") << jsonString(what.notes[k]);
        o << "]";
        if (search) {
            o << ",\n  \"max_batch\": " << search->maxBatch;
            if (search->safeBatch >= 0)
                o << ",\n  \"max_batch_safe\": " << search->safeBatch;
            o << ",\n  \"max_batch_unbounded\": " << (search->unbounded ? "true" : "false") << ",\n  \"probes\": [";
            for (size_t k = 0; k < search->probes.size(); ++k)
                o << (k ? ", " : "") << "{\"batch\": " << search->probes[k].batch
                  << ", \"fits\": " << (search->probes[k].fits ? "true" : "false")
                  << ", \"reserved_peak_bytes\": " << search->probes[k].reservedPeak << "}";
            o << "]";
        }
        if (plan) {
            o << ",\n  \"plan\": [";
            for (size_t k = 0; k < rows.size(); ++k) {
                const PlanRow& r = rows[k];
                o << (k ? "," : "") << "\n    {\"changes\": " << changesJson(r.changes)
                  << ", \"settings\": " << jsonString(r.settings) << ", \"reserved_peak_bytes\": " << r.reservedPeak
                  << ", \"allocated_peak_bytes\": " << r.allocatedPeak << ", \"fits\": " << (r.fits ? "true" : "false")
                  << ", \"tight\": " << (r.tight ? "true" : "false") << ", \"compute_cost\": " << r.computeCost
                  << ", \"cost\": " << jsonString(r.cost) << ", \"max_batch\": " << r.maxBatch
                  << ", \"max_batch_safe\": " << r.safeBatch << "}";
            }
            o << "\n  ]";
        }
        o << "\n}\n";
        std::cout << o.str();
        return 0;
    }

    std::cout << file << ", device " << dr.device << "\n"
              << "recorded run: precision " << precisionName(setup.precision) << " (" << setup.precisionEvidence << ")\n"
              << "              optimizer " << optimizerName(setup.optimizer) << " (" << setup.optimizerEvidence << ")\n"
              << "              " << setup.blocks << " repeated block(s) in the forward"
              << (model.blocks().runs() > 1 ? ", run " + std::to_string(model.blocks().runs()) + " times a step" : std::string())
              << (model.blocks().loopFrame.empty() ? std::string() : " (loop at " + model.blocks().loopFrame + ")")
              << (setup.checkpointedBlocks > 0 ? ", checkpointed" : ", not checkpointed") << "\n"
              << "              batch " << recordedBatch
              << (setup.batchKnown ? "" : " (the recorded batch; --recorded-batch to name it)") << "\n"
              << "              op dtypes from "
              << (setup.operatorsRecorded ? "the ATen operators (native frames recorded: stacks=\"all\")"
                                          : "Python frames only (stacks=\"python\"; stacks=\"all\" names each operator)")
              << "\n"
              << (setup.lightning ? "              trainer Lightning (its mixed precision runs autocast without the cast cache)\n"
                                  : "")
              << (setup.compiled ? "              compiled with torch.compile (inductor)\n" : "")
              << "allocator settings: " << settingsText(settings) << "\n"
              << "capacity: " << (capacity ? formatBytes(static_cast<int64_t>(*capacity)) : std::string("unlimited")) << "\n"
              << "changes: " << (changes.empty() ? std::string("none") : changes.describe()) << "\n";
    printPeaks(what.result, dr.peakReserved.bytes);
    if (!what.ranks.empty()) {
        std::cout << "  per rank (the peaks above are the rank that reserves most):\n";
        for (const RankPeak& p : what.ranks)
            std::cout << "    rank " << p.rank << ": reserved " << formatBytes(p.reservedPeak) << ", allocated "
                      << formatBytes(p.allocatedPeak) << (p.oom ? ", out of memory" : "") << "\n";
    }
    std::cout << "  cost                " << what.cost << "\n";
    for (const std::string& n : what.notes)
        std::cout << "  note: " << n << "\n";
    if (search) {
        printSearch(*search, !setup.batchKnown);
    }
    if (plan) {
        std::cout << "\nplan under " << formatBytes(static_cast<int64_t>(*capacity)) << " (cheapest first):\n";
        for (const PlanRow& r : rows) {
            if (!r.fits)
                continue;
            std::cout << "  " << planChangesText(r) << "\n      reserved peak " << formatBytes(r.reservedPeak)
                      << (r.tight ? " (tight: within the what-if's error of the capacity)" : "") << ", cost " << r.cost
                      << ", largest batch " << batchText(r.maxBatch, !setup.batchKnown) << " (" << r.safeBatch
                      << (setup.batchKnown ? "" : "x") << " with " << std::lround(kReservedMargin * 100)
                      << "% and a largest tensor's segment to spare)\n";
        }
        size_t misses = 0;
        for (const PlanRow& r : rows)
            misses += r.fits ? 0 : 1;
        if (misses > 0)
            std::cout << "  (" << misses << " other change(s) do not fit; --json lists them)\n";
    }
    return 0;
}

} // namespace

ModelChanges parseModelChanges(const CommandLine& cl) { return parseChanges(cl); }

int runWhatIf(const std::vector<std::string>& args)
{
    const char* usage = kWhatIfUsage;
    const CommandLine cl(args, {.command = "whatif",
                                .flags = {"--json", "--max-batch", "--plan"},
                                .options = {{"--device"},
                                            {"--set"},
                                            {"--capacity"},
                                            {"--recorded-batch"},
                                            {"--batch"},
                                            {"--checkpoint"},
                                            {"--precision"},
                                            {"--optimizer"},
                                            {"--accumulate"},
                                            {"--seq"},
                                            {"--shard"},
                                            {"--recorded-seq"},
                                            {"--recorded-precision"},
                                            {"--recorded-optimizer"}}});
    const std::optional<int> device = cl.device();
    const std::string file = cl.operand();
    if (file.empty())
        throw UsageError(usage);
    const bool json = cl.has("--json");
    const bool maxBatch = cl.has("--max-batch");
    const std::optional<double> batch = cl.positive("--batch");
    const double recordedBatch = cl.positive("--recorded-batch").value_or(1.0);
    std::optional<uint64_t> capacity;
    if (auto c = cl.value("--capacity"))
        capacity = parseCapacity(*c);
    if (batch && maxBatch)
        throw UsageError("--batch and --max-batch exclude each other");
    if (maxBatch && !capacity)
        throw UsageError("--max-batch needs --capacity (the memory the batch must fit in)");

    // the attribution names the phase of an out-of-memory and what grows with the batch
    AnalysisOptions options;
    options.until = AnalysisStage::Attributed;
    const auto analysis = analyze(AnalysisSource::file(file), options);
    const size_t index = analysis->deviceIndex(device);
    const Replay& replay = *analysis->replay;
    const DeviceReplay& dr = replay.devices[index];
    const DeviceAttribution* attribution = analysis->attribution && index < analysis->attribution->devices.size()
                                               ? &analysis->attribution->devices[index]
                                               : nullptr;

    const AllocatorSettings recorded = AllocatorSettings::fromSnapshot(analysis->snapshot->allocatorSettings);
    AllocatorSettings settings = recorded;
    for (std::string s : cl.values("--set")) {
        for (char& c : s)
            if (c == '=')
                c = ':';
        try {
            settings.apply(s);
        } catch (const std::invalid_argument& e) {
            throw UsageError(std::string("--set: ") + e.what());
        }
    }

    const ModelChanges changes = parseChanges(cl);
    const bool plan = cl.has("--plan");
    if (plan && !capacity)
        throw UsageError("--plan needs --capacity (the memory the changes must fit in)");
    if (changes.seq && !cl.positive("--recorded-seq"))
        throw UsageError("--seq needs --recorded-seq (the sequence length the recording ran with)");
    const bool modelLevel = !changes.empty() || plan || cl.value("--recorded-precision") || cl.value("--recorded-optimizer");
    if (modelLevel)
        return runModelWhatIf(cl, file, *analysis, index, settings, recorded, capacity, changes, batch, recordedBatch, maxBatch,
                              plan, json);

    // The exact replay under the recorded settings says how far the model can be trusted here.
    SimulationOptions exactOptions;
    exactOptions.settings = recorded;
    exactOptions.followRecording = true;
    const SimulationResult exact = simulateDevice(replay, index, attribution, exactOptions);

    SimulationOptions whatOptions;
    whatOptions.settings = settings;
    if (capacity)
        whatOptions.capacity = *capacity;
    SimulationResult what;
    std::optional<MaxBatchResult> search;
    // autocast's weight copies (a mixed-precision recording) and a shared weight's partial
    // gradients keep their bytes at any batch, as in the model-level what-if
    std::vector<uint8_t> copies;
    if ((maxBatch || batch) && attribution) {
        ModelWhatIf model(replay, index, *attribution);
        RecordedSetup setup = model.recorded();
        setup.batch = recordedBatch;
        setup.batchKnown = cl.positive("--recorded-batch").has_value();
        model.setRecorded(setup);
        copies = model.fixedAtAnyBatch();
    }
    if (maxBatch) {
        if (!attribution)
            throw UsageError(file + ": no attribution for this device, so nothing is known to grow with the batch");
        search = findMaxBatch(replay, index, *attribution, whatOptions, recordedBatch, 1 << 16, &copies);
        SimulationOptions safeOptions = whatOptions;
        safeOptions.capacity = safeCapacity(whatOptions.capacity);
        search->safeBatch = findMaxBatch(replay, index, *attribution, safeOptions, recordedBatch, 1 << 16, &copies).maxBatch;
        what = search->atMax ? *search->atMax
                             : simulateBatch(replay, index, *attribution, whatOptions, 1.0, recordedBatch, &copies);
    } else if (batch) {
        if (!attribution)
            throw UsageError(file + ": no attribution for this device, so nothing is known to grow with the batch");
        what = simulateBatch(replay, index, *attribution, whatOptions, *batch, recordedBatch, &copies);
    } else {
        what = simulateDevice(replay, index, attribution, whatOptions);
    }
    const double shownBatch = search ? static_cast<double>(search->maxBatch) : batch.value_or(recordedBatch);
    const std::string capNote = (batch || search)
                                    ? reductionCapNote(reductionBuffers(replay, index), dr, shownBatch / recordedBatch)
                                    : std::string();

    if (json) {
        std::ostringstream o;
        o << "{\n  \"file\": " << jsonString(file) << ",\n  \"device\": " << dr.device
          << ",\n  \"recorded_settings\": " << jsonString(recorded.toConf())
          << ",\n  \"settings\": " << jsonString(settings.toConf()) << ",\n  \"capacity_bytes\": ";
        if (capacity)
            o << *capacity;
        else
            o << "null";
        o << ",\n  \"recorded_batch\": " << recordedBatch << ",\n  \"batch\": " << shownBatch
          << ",\n  \"recorded\": {\"requested_peak_bytes\": " << dr.peakRequested.bytes
          << ", \"reserved_peak_bytes\": " << dr.peakReserved.bytes << "}"
          << ",\n  \"exact_replay\": {\"exact\": " << (exact.exact ? "true" : "false")
          << ", \"reserved_peak_bytes\": " << exact.reservedPeak << ", \"allocated_peak_bytes\": " << exact.allocatedPeak
          << ", \"allocs_checked\": " << exact.allocsChecked << ", \"address_mismatches\": " << exact.addressMismatches
          << ", \"segment_run_mismatches\": " << exact.segmentRunMismatches
          << ", \"layout_matches\": " << (exact.layoutMatches ? "true" : "false")
          << ", \"first_mismatch\": " << jsonString(exact.firstMismatch) << ", \"caveat\": " << jsonString(exact.caveat)
          << "},\n  \"reserved_peak_bytes\": " << what.reservedPeak << ",\n  \"allocated_peak_bytes\": " << what.allocatedPeak
          << ",\n  \"requested_peak_bytes\": " << what.requestedPeak << ",\n  \"reserved_peak_event\": " << what.reservedPeakEvent
          << ",\n  \"allocated_peak_event\": " << what.allocatedPeakEvent
          << ",\n  \"reserved_at_allocated_peak_bytes\": " << what.reservedAtAllocatedPeak
          << ",\n  \"unallocated_at_peak_bytes\": " << what.unallocatedAtAllocatedPeak()
          << ",\n  \"unallocated_fraction\": " << what.unallocatedFractionAtAllocatedPeak()
          << ",\n  \"fragmentation_fraction\": " << what.fragmentationAtAllocatedPeak()
          << ",\n  \"largest_free_block_at_peak_bytes\": " << what.largestFreeAtAllocatedPeak
          << ",\n  \"segments_created\": " << what.segmentsCreated << ",\n  \"segments_released\": " << what.segmentsReleased
          << ",\n  \"recorded_ooms_avoided\": " << what.recordedOomsAvoided << ",\n  \"changes\": ";
        ModelChanges shown;
        if (batch || search)
            shown.batch = shownBatch;
        o << changesJson(shown) << ",\n  \"notes\": [";
        if (!capNote.empty())
            o << jsonString(capNote);
        o << "],\n  \"oom\": ";
        oomJson(o, what.oom);
        if (search) {
            o << ",\n  \"max_batch\": " << search->maxBatch;
            if (search->safeBatch >= 0)
                o << ",\n  \"max_batch_safe\": " << search->safeBatch;
            o << ",\n  \"max_batch_unbounded\": " << (search->unbounded ? "true" : "false") << ",\n  \"probes\": [";
            for (size_t k = 0; k < search->probes.size(); ++k)
                o << (k ? ", " : "") << "{\"batch\": " << search->probes[k].batch
                  << ", \"fits\": " << (search->probes[k].fits ? "true" : "false")
                  << ", \"reserved_peak_bytes\": " << search->probes[k].reservedPeak << "}";
            o << "]";
        }
        o << "\n}\n";
        std::cout << o.str();
        return 0;
    }

    std::cout << file << ", device " << dr.device << "\n"
              << "recorded settings: " << settingsText(recorded) << "\n"
              << "exact replay under them: ";
    if (exact.exact)
        std::cout << "every alloc address, segment event and the dump-time layout agree; reserved peak "
                  << formatBytes(exact.reservedPeak) << " (recorded " << formatBytes(dr.peakReserved.bytes) << ")\n";
    else
        std::cout << "not exact (" << (exact.firstMismatch.empty() ? exact.layoutMismatch : exact.firstMismatch)
                  << "); reserved peak " << formatBytes(exact.reservedPeak) << " (recorded " << formatBytes(dr.peakReserved.bytes)
                  << ")\n";
    if (!exact.caveat.empty())
        std::cout << "  note: " << exact.caveat << "\n";
    std::cout << "\nwhat-if settings: " << settingsText(settings) << "\n"
              << "capacity: " << (capacity ? formatBytes(static_cast<int64_t>(*capacity)) : std::string("unlimited")) << "\n";
    if (batch || search)
        std::cout << "batch: " << shownBatch << " (recorded " << recordedBatch << ")\n";
    printPeaks(what, std::nullopt);
    if (!capNote.empty())
        std::cout << "  note: " << capNote << "\n";
    if (search)
        printSearch(*search);
    return 0;
}

} // namespace memscope
