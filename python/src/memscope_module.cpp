// memscope._memscope: the Qt-free core bound for Python (pybind11). Every answer comes from
// analyze() and the core/io writers the command line prints; the Python side
// (memscope/__init__.py) turns JSON into dicts and columns into pandas. The GIL is released
// while the core works, so other Python threads run meanwhile.
#include "analysis/analysis.h"
#include "common/load_error.h"
#include "compare/comparison.h"
#include "compare/comparison_writer.h"
#include "io/allocation_table.h"
#include "io/diagnostics_json.h"
#include "io/point_json.h"
#include "io/report_json_writer.h"
#include "io/summary_writer.h"
#include "job/job_summary_writer.h"
#include "job/rank_set.h"
#include "mcp_command.h"
#include "query/point_report.h"
#include "whatif_command.h"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <mutex>

namespace py = pybind11;
using namespace memscope;

namespace {

template <typename T>
py::array_t<T> toArray(const std::vector<T>& v)
{
    py::array_t<T> a(static_cast<py::ssize_t>(v.size()));
    if (!v.empty())
        std::memcpy(a.mutable_data(), v.data(), v.size() * sizeof(T));
    return a;
}

// One opened snapshot. It is read and replayed on open (what `memscope summary` does); the
// attribution and the findings are computed from the same parsed Snapshot the first time an
// answer needs them, and kept.
class Handle {
public:
    explicit Handle(std::string path)
    {
        AnalysisOptions options;
        options.until = AnalysisStage::Replayed;
        py::gil_scoped_release release;
        m_analysis = analyze(AnalysisSource::file(path), options);
    }

    std::shared_ptr<const Analysis> at(AnalysisStage stage)
    {
        std::shared_ptr<const Analysis> a;
        {
            const std::lock_guard lock(m_mutex);
            a = m_analysis;
        }
        if (a->reached(stage))
            return a;
        std::shared_ptr<const Analysis> more;
        {
            py::gil_scoped_release release;
            AnalysisOptions options;
            options.until = stage;
            more = analyze(AnalysisSource::recording(a->snapshot, a->name), options);
        }
        const std::lock_guard lock(m_mutex);
        if (!m_analysis->reached(stage))
            m_analysis = more;
        return m_analysis;
    }

    std::shared_ptr<const Analysis> replayed() { return at(AnalysisStage::Replayed); }

    size_t index(std::optional<int> device) { return replayed()->deviceIndex(device); }

private:
    std::mutex m_mutex;
    std::shared_ptr<const Analysis> m_analysis;
};

std::vector<int> bindDevices(Handle& h)
{
    std::vector<int> out;
    for (const DeviceReplay& d : h.replayed()->replay->devices)
        out.push_back(d.device);
    return out;
}

std::string bindSummary(Handle& h, std::optional<int> device)
{
    const auto a = h.replayed();
    if (device)
        a->deviceIndex(device);
    std::optional<int> focus;
    if (a->deviceCount() > 0)
        focus = a->replay->devices[a->focusDevice()].device;
    return summaryJson(*a->replay, device, focus);
}

py::dict bindAllocations(Handle& h, std::optional<int> device)
{
    const auto a = h.at(AnalysisStage::Attributed);
    const size_t index = a->deviceIndex(device);
    AllocationTable t;
    {
        py::gil_scoped_release release;
        t = allocationTable(*a->attribution, index);
    }
    py::dict d;
    d["alloc_event"] = toArray(t.allocEvent);
    d["free_requested_event"] = toArray(t.freeRequestedEvent);
    d["free_event"] = toArray(t.freeEvent);
    d["alloc_time_us"] = toArray(t.allocTimeUs);
    d["has_time"] = toArray(t.hasTime);
    d["addr"] = toArray(t.addr);
    d["size"] = toArray(t.size);
    d["stream"] = toArray(t.stream);
    d["category"] = toArray(t.category);
    d["phase"] = toArray(t.phase);
    d["iteration"] = toArray(t.iteration);
    d["top_frame"] = toArray(t.topFrame);
    d["frame_texts"] = py::cast(t.frameTexts);
    d["op"] = toArray(t.op);
    d["op_texts"] = py::cast(t.opTexts);
    d["module"] = toArray(t.module);
    d["module_texts"] = py::cast(t.moduleTexts);
    return d;
}

// The device's curves in `columns` columns of equal runs of events, each column at its event
// of highest requested bytes (the peak is never averaged away): event index, time, requested,
// reserved, each category's bytes and the phase there (timeline.csv's columns).
py::dict bindTimeline(Handle& h, std::optional<int> device, size_t columns)
{
    const auto a = h.at(AnalysisStage::Attributed);
    const size_t index = a->deviceIndex(device);
    const DeviceReplay& d = a->replay->devices.at(index);
    const DeviceAttribution* at = a->attributed ? &a->attribution->devices.at(index) : nullptr;
    const EventTable& ev = a->snapshot->devices.at(index).events;
    const size_t n = static_cast<size_t>(d.eventCount);
    const size_t cols = std::min(n, std::max<size_t>(columns, 1));
    std::vector<int64_t> event(cols), time(cols), requested(cols), reserved(cols);
    std::vector<uint8_t> phase(cols);
    std::vector<std::vector<int64_t>> byCategory(kCategoryCount, std::vector<int64_t>(cols));
    {
        py::gil_scoped_release release;
        for (size_t c = 0; c < cols; ++c) {
            const size_t first = c * n / cols;
            const size_t last = (c + 1) * n / cols;
            const size_t e = d.requested.firstMaxIndex(first, last);
            event[c] = static_cast<int64_t>(e);
            time[c] = ev.timeUs[e];
            requested[c] = d.requested[e];
            reserved[c] = d.reserved[e];
            if (at) {
                phase[c] = static_cast<uint8_t>(at->eventPhase[e]);
                for (int k = 0; k < kCategoryCount; ++k)
                    byCategory[static_cast<size_t>(k)][c] = at->categoryBytes[static_cast<size_t>(k)][e];
            } else {
                phase[c] = static_cast<uint8_t>(Phase::Other);
            }
        }
    }
    py::dict out;
    out["time_us"] = toArray(time);
    out["event_index"] = toArray(event);
    out["requested_bytes"] = toArray(requested);
    out["reserved_bytes"] = toArray(reserved);
    for (Category c : kAllCategories)
        out[py::str(std::string(categoryName(c)))] = toArray(byCategory[static_cast<size_t>(c)]);
    out["phase"] = toArray(phase);
    return out;
}

std::string bindPointAt(Handle& h, std::optional<int> device, std::optional<int64_t> timeUs, size_t top)
{
    const auto a = h.at(AnalysisStage::Diagnosed);
    const size_t index = a->deviceIndex(device);
    py::gil_scoped_release release;
    const DeviceReplay& d = a->replay->devices.at(index);
    const int64_t event = timeUs ? eventAtTime(a->snapshot->devices.at(index).events, *timeUs) : peakEvent(d);
    return pointJson(*a->attribution, buildPointReport(*a->attribution, index, event), *a->frames, top);
}

std::string bindReport(Handle& h, std::optional<int> device)
{
    const auto a = h.at(AnalysisStage::Diagnosed);
    const size_t index = a->deviceIndex(device);
    py::gil_scoped_release release;
    const PointReport peak = buildPointReport(*a->attribution, index, peakEvent(a->replay->devices.at(index)));
    const Diagnostics findings = a->findingsFocusFirst();
    return reportJson(*a->attribution, peak, *a->frames, &findings);
}

std::string bindDiagnose(Handle& h, std::optional<int> device, size_t maxAllocations)
{
    const auto a = h.at(AnalysisStage::Diagnosed);
    std::optional<size_t> index;
    if (device)
        index = a->deviceIndex(device);
    py::gil_scoped_release release;
    return diagnosticsToJson(a->findingsFocusFirst(), *a->replay, *a->frames, index, 2, maxAllocations);
}

std::string bindDiff(Handle& a, Handle& b, std::optional<int> device, size_t callSites)
{
    const auto x = a.at(AnalysisStage::Attributed);
    const auto y = b.at(AnalysisStage::Attributed);
    py::gil_scoped_release release;
    ComparisonWriteOptions options;
    options.callSites = callSites;
    return comparisonJson(*compareRuns(x, y, {.device = device}), options);
}

std::string bindWhatif(const std::vector<std::string>& args)
{
    py::gil_scoped_release release;
    return runCapturingStdout(runWhatIf, args);
}

std::string bindRanks(const std::vector<std::string>& paths)
{
    py::gil_scoped_release release;
    return jobSummaryJson(*RankSet::open(paths));
}

} // namespace

PYBIND11_MODULE(_memscope, m)
{
    m.doc() = "memscope's core: PyTorch CUDA memory snapshots read, replayed, attributed and diagnosed";
    static py::exception<LoadError> snapshotError(m, "SnapshotError", PyExc_ValueError);
    py::register_exception_translator([](std::exception_ptr p) {
        try {
            if (p)
                std::rethrow_exception(p);
        } catch (const LoadError& e) {
            snapshotError(e.what());
        } catch (const LoadCancelled& e) {
            PyErr_SetString(PyExc_KeyboardInterrupt, e.what());
        }
    });

    py::class_<Handle>(m, "Handle")
        .def(py::init<std::string>(), py::arg("path"))
        .def("devices", &bindDevices)
        .def(
            "focus_device",
            [](Handle& h) {
        const auto a = h.replayed();
        return a->deviceCount() ? a->replay->devices[a->focusDevice()].device : 0;
            })
        .def("path", [](Handle& h) { return h.replayed()->name; })
        .def("summary_json", &bindSummary, py::arg("device") = std::nullopt)
        .def("allocations", &bindAllocations, py::arg("device") = std::nullopt)
        .def("timeline", &bindTimeline, py::arg("device") = std::nullopt, py::arg("columns") = 1000)
        .def("point_json", &bindPointAt, py::arg("device") = std::nullopt, py::arg("time_us") = std::nullopt, py::arg("top") = 10)
        .def("report_json", &bindReport, py::arg("device") = std::nullopt)
        .def("diagnose_json", &bindDiagnose, py::arg("device") = std::nullopt, py::arg("max_allocations") = 20);
    m.def("diff_json", &bindDiff, py::arg("a"), py::arg("b"), py::arg("device") = std::nullopt, py::arg("call_sites") = 15);
    m.def("whatif_json", &bindWhatif, py::arg("args"));
    m.def("ranks_json", &bindRanks, py::arg("paths"));
    m.def("categories", [] {
        std::vector<std::string> out;
        for (int c = 0; c < kCategoryCount; ++c) // by value: the codes of allocations()
            out.emplace_back(categoryName(static_cast<Category>(c)));
        return out;
    });
    m.def("category_colors", [] {
        std::vector<std::string> out;
        for (int c = 0; c < kCategoryCount; ++c) {
            char text[8];
            std::snprintf(text, sizeof text, "#%06x", categoryColor(static_cast<Category>(c)) & 0xffffffu);
            out.emplace_back(text);
        }
        return out;
    });
    m.def("category_labels", [] {
        std::vector<std::string> out;
        for (int c = 0; c < kCategoryCount; ++c)
            out.emplace_back(categoryLabel(static_cast<Category>(c)));
        return out;
    });
    m.def("phases", [] {
        std::vector<std::string> out;
        for (int p = 0; p < kPhaseCount; ++p)
            out.emplace_back(phaseName(static_cast<Phase>(p)));
        return out;
    });
    m.attr("__version__") = MEMSCOPE_VERSION;
}
