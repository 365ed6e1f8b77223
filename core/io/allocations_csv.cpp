#include "io/allocations_csv.h"

#include "io/csv_field.h"
#include "snapshot/frame_classifier.h"

#include <string_view>
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

void writeAllocationsCsv(std::ostream& out, const Attribution& attribution, size_t deviceIndex)
{
    const Replay& replay = *attribution.replay;
    const Snapshot& s = *replay.snapshot;
    const DeviceReplay& d = replay.devices.at(deviceIndex);
    const DeviceAttribution& a = attribution.devices.at(deviceIndex);
    const DeviceTrace* trace = s.device(d.device);
    const FrameClassifier frames(s);

    // The text of each distinct stack, made once.
    std::vector<std::string> stackText(s.stacks.size());
    std::vector<uint8_t> done(s.stacks.size(), 0);
    auto topFrame = [&](StackId stack) -> const std::string& {
        static const std::string none;
        if (!stack.valid())
            return none;
        const size_t k = static_cast<size_t>(stack.value);
        if (!done[k]) {
            done[k] = 1;
            FrameId f = frames.topUserFrame(stack);
            if (!f.valid())
                for (FrameId g : s.stacks.frames(stack))
                    if (!isCaptureMachinery(s, g)) {
                        f = g;
                        break;
                    }
            if (f.valid())
                stackText[k] = csvField(describe(s, f));
        }
        return stackText[k];
    };

    out << "alloc_event,free_requested_event,free_event,alloc_time_us,addr,size,stream,category,phase,iteration,top_frame\n";
    std::string line;
    for (size_t j = 0; j < d.allocations.size(); ++j) {
        const Allocation& al = d.allocations[j];
        line.clear();
        line += std::to_string(al.allocEvent.value);
        line += ',';
        line += std::to_string(al.freeRequestedEvent.value);
        line += ',';
        line += std::to_string(al.freeEvent.value);
        line += ',';
        line += al.preexisting() || !trace ? std::string()
                                           : std::to_string(trace->events.timeUs[static_cast<size_t>(al.allocEvent.value)]);
        line += ',';
        line += std::to_string(al.addr);
        line += ',';
        line += std::to_string(al.size);
        line += ',';
        line += std::to_string(al.stream);
        line += ',';
        line += categoryName(a.allocationCategory[j]);
        line += ',';
        line += phaseName(a.allocationPhase[j]);
        line += ',';
        line += std::to_string(a.allocationIteration[j]);
        line += ',';
        line += topFrame(al.stack);
        line += '\n';
        out << line;
    }
}

} // namespace memscope
