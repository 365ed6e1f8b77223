#include "io/allocations_csv.h"
#include "io/allocation_table.h"

#include "io/csv_field.h"
#include "snapshot/frame_classifier.h"
#include "snapshot/stack_labels.h"

#include <string_view>
#include <unordered_map>
#include <vector>

namespace memscope {

namespace {

bool isCaptureMachinery(const Snapshot& s, FrameId id)
{
    const Frame& f = s.frames.frame(id);
    const std::string_view file = s.str(f.filename);
    const std::string_view name = s.str(f.name);
    if (file.find("CUDACachingAllocator") != std::string_view::npos || file.find("memory_snapshot") != std::string_view::npos ||
        name.find("torch::unwind") != std::string_view::npos || name.find("CapturedTraceback") != std::string_view::npos ||
        name.find("CUDACachingAllocator") != std::string_view::npos)
        return true;
    // Tensor-creation plumbing under every op: the op itself says more.
    for (std::string_view p :
         {"at::detail::empty", "at::native::empty", "at::empty", "at::_ops::empty",
          "at::TensorIteratorBase::", "at::(anonymous namespace)::create_out", "at::(anonymous namespace)::wrapper_CUDA__empty",
          "at::(anonymous namespace)::(anonymous namespace)::wrapper_CUDA__empty",
          "c10::impl::", "at::native::(anonymous namespace)::resize", "at::native::resize_"})
        if (name.starts_with(p))
            return true;
    return false;
}

std::string describe(const Snapshot& s, FrameId id)
{
    const Frame& f = s.frames.frame(id);
    const std::string_view file = s.str(f.filename);
    std::string out;
    if (!file.empty() && file != "??") {
        out = file;
        if (f.line > 0)
            out += ":" + std::to_string(f.line);
    }
    const std::string_view name = s.str(f.name);
    if (!name.empty()) {
        if (!out.empty())
            out += ' ';
        out += name;
    }
    return out;
}

} // namespace

AllocationTable allocationTable(const Attribution& attribution, size_t deviceIndex)
{
    const Replay& replay = *attribution.replay;
    const Snapshot& s = *replay.snapshot;
    const DeviceReplay& d = replay.devices.at(deviceIndex);
    const DeviceAttribution& a = attribution.devices.at(deviceIndex);
    const DeviceTrace* trace = s.device(d.device);
    const FrameClassifier frames(s);

    AllocationTable t;
    const size_t n = d.allocations.size();
    t.allocEvent.resize(n);
    t.freeRequestedEvent.resize(n);
    t.freeEvent.resize(n);
    t.allocTimeUs.resize(n);
    t.hasTime.resize(n);
    t.addr.resize(n);
    t.size.resize(n);
    t.stream.resize(n);
    t.category.resize(n);
    t.phase.resize(n);
    t.iteration.resize(n);
    t.topFrame.resize(n);
    t.op.resize(n);
    t.module.resize(n);
    const StackLabels& labels = frames.labels();
    t.opTexts = labels.ops();
    t.moduleTexts.reserve(labels.paths().size());
    for (const ModulePath& p : labels.paths())
        t.moduleTexts.push_back(p.text);

    // The text of each distinct stack, made once: -2 not yet looked at, -1 none.
    std::vector<int32_t> stackText(s.stacks.size(), -2);
    std::unordered_map<std::string, int32_t> textIndex;
    auto topFrame = [&](StackId stack) -> int32_t {
        if (!stack.valid())
            return -1;
        int32_t& k = stackText[static_cast<size_t>(stack.value)];
        if (k == -2) {
            k = -1;
            FrameId f = frames.topUserFrame(stack);
            if (!f.valid())
                for (FrameId g : s.stacks.frames(stack))
                    if (!isCaptureMachinery(s, g)) {
                        f = g;
                        break;
                    }
            if (f.valid()) {
                std::string text = describe(s, f);
                const auto [it, added] = textIndex.try_emplace(text, static_cast<int32_t>(t.frameTexts.size()));
                if (added)
                    t.frameTexts.push_back(std::move(text));
                k = it->second;
            }
        }
        return k;
    };

    for (size_t j = 0; j < n; ++j) {
        const Allocation& al = d.allocations[j];
        t.allocEvent[j] = al.allocEvent.value;
        t.freeRequestedEvent[j] = al.freeRequestedEvent.value;
        t.freeEvent[j] = al.freeEvent.value;
        t.hasTime[j] = !al.preexisting() && trace;
        t.allocTimeUs[j] = t.hasTime[j] ? trace->events.timeUs[static_cast<size_t>(al.allocEvent.value)] : 0;
        t.addr[j] = al.addr;
        t.size[j] = al.size;
        t.stream[j] = al.stream;
        t.category[j] = static_cast<uint8_t>(a.allocationCategory[j]);
        t.phase[j] = static_cast<uint8_t>(a.allocationPhase[j]);
        t.iteration[j] = a.allocationIteration[j];
        t.topFrame[j] = topFrame(al.stack);
        t.op[j] = labels.opId(al.stack);
        t.module[j] = labels.moduleId(al.stack);
    }
    return t;
}

void writeAllocationsCsv(std::ostream& out, const Attribution& attribution, size_t deviceIndex)
{
    const AllocationTable t = allocationTable(attribution, deviceIndex);
    std::vector<std::string> frameFields;
    frameFields.reserve(t.frameTexts.size());
    for (const std::string& text : t.frameTexts)
        frameFields.push_back(csvField(text));

    std::vector<std::string> opFields, moduleFields;
    for (const std::string& text : t.opTexts)
        opFields.push_back(csvField(text));
    for (const std::string& text : t.moduleTexts)
        moduleFields.push_back(csvField(text));

    out << "alloc_event,free_requested_event,free_event,alloc_time_us,addr,size,stream,category,phase,iteration,top_frame,op,"
           "module\n";
    std::string line;
    for (size_t j = 0; j < t.rows(); ++j) {
        line.clear();
        line += std::to_string(t.allocEvent[j]);
        line += ',';
        line += std::to_string(t.freeRequestedEvent[j]);
        line += ',';
        line += std::to_string(t.freeEvent[j]);
        line += ',';
        if (t.hasTime[j])
            line += std::to_string(t.allocTimeUs[j]);
        line += ',';
        line += std::to_string(t.addr[j]);
        line += ',';
        line += std::to_string(t.size[j]);
        line += ',';
        line += std::to_string(t.stream[j]);
        line += ',';
        line += categoryName(static_cast<Category>(t.category[j]));
        line += ',';
        line += phaseName(static_cast<Phase>(t.phase[j]));
        line += ',';
        line += std::to_string(t.iteration[j]);
        line += ',';
        if (t.topFrame[j] >= 0)
            line += frameFields[static_cast<size_t>(t.topFrame[j])];
        line += ',';
        line += opFields[t.op[j]];
        line += ',';
        line += moduleFields[t.module[j]];
        line += '\n';
        out << line;
    }
}

} // namespace memscope
