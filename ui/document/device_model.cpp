#include "ui/document/device_model.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>

namespace memscope {

double DeviceModel::x(int64_t event, XAxisMode mode) const
{
    if (mode == XAxisMode::EventIndex)
        return static_cast<double>(event);
    if (!timeUs || timeUs->empty())
        return 0.0;
    const int64_t last = static_cast<int64_t>(timeUs->size()) - 1;
    return static_cast<double>((*timeUs)[static_cast<size_t>(std::clamp<int64_t>(event, 0, last))]) / 1e6;
}

int64_t DeviceModel::firstEventAtOrAfter(double value, XAxisMode mode) const
{
    const int64_t n = eventCount();
    if (mode == XAxisMode::EventIndex) {
        if (!(value > 0)) // NaN too: ceil(NaN) would cast to INT64_MIN
            return 0;
        if (value >= static_cast<double>(n))
            return n;
        return static_cast<int64_t>(std::ceil(value));
    }
    if (!timeUs)
        return 0;
    // x(i) < value, written as x() computes it so that the answer agrees with x() exactly.
    return static_cast<int64_t>(timeUs->partitionPoint([value](int64_t us) { return static_cast<double>(us) / 1e6 < value; }));
}

std::vector<int64_t> DeviceModel::firstEventsAtOrAfter(std::span<const double> ascending, XAxisMode mode) const
{
    std::vector<int64_t> out(ascending.size());
    if (mode == XAxisMode::EventIndex || !timeUs || timeUs->empty()) {
        for (size_t i = 0; i < ascending.size(); ++i)
            out[i] = firstEventAtOrAfter(ascending[i], mode);
        return out;
    }
    // The first edge bisects to its block; later ascending edges walk the blocks forward
    // from there (each block's first value read once in all) and bisect only inside the
    // block they land in; an edge that goes back (or NaN) is searched on its own.
    const CompactCurve& t = *timeUs;
    const size_t blocks = t.blockCount();
    size_t block = 0;
    double previous = -std::numeric_limits<double>::infinity();
    for (size_t i = 0; i < ascending.size(); ++i) {
        const double v = ascending[i];
        if (!(v >= previous)) {
            out[i] = firstEventAtOrAfter(v, mode);
            block = 0;
            previous = -std::numeric_limits<double>::infinity();
            continue;
        }
        auto before = [v](int64_t us) { return static_cast<double>(us) / 1e6 < v; };
        if (previous == -std::numeric_limits<double>::infinity()) { // the first: bisect to its block
            const size_t p = t.partitionPoint(before);
            block = p > 0 ? (p - 1) >> CompactCurve::kShift : 0;
        }
        previous = v;
        while (block + 1 < blocks && before(t[(block + 1) << CompactCurve::kShift]))
            ++block;
        out[i] = static_cast<int64_t>(t.partitionPointInBlock(block, before));
    }
    return out;
}

int64_t DeviceModel::eventAtX(double value, XAxisMode mode) const
{
    const int64_t n = eventCount();
    if (mode == XAxisMode::EventIndex)
        return std::clamp<int64_t>(static_cast<int64_t>(std::floor(value)), -1, n - 1);
    if (!timeUs)
        return -1;
    return static_cast<int64_t>(timeUs->partitionPoint([value](int64_t us) { return static_cast<double>(us) / 1e6 <= value; })) -
           1;
}

double DeviceModel::xMin(XAxisMode mode) const { return mode == XAxisMode::EventIndex ? 0.0 : 0.0; }

double DeviceModel::xMax(XAxisMode mode) const
{
    const int64_t n = eventCount();
    if (mode == XAxisMode::EventIndex)
        return static_cast<double>(std::max<int64_t>(n - 1, 1));
    const double last = timeUs && !timeUs->empty() ? static_cast<double>(timeUs->back()) / 1e6 : 0.0;
    return last <= 0 ? 1e-6 : last;
}

int64_t DeviceModel::categoryBytes(Category c, int64_t event) const
{
    const size_t k = static_cast<size_t>(c);
    if (!attribution)
        return c == Category::Other ? replay->requestedAfter(event) : 0;
    return event < 0 ? attribution->categoryAtStart[k] : attribution->categoryBytes[k][static_cast<size_t>(event)];
}

Phase DeviceModel::phaseAt(int64_t event) const
{
    if (!attribution || event < 0 || static_cast<size_t>(event) >= attribution->eventPhase.size())
        return Phase::Other;
    return attribution->eventPhase[static_cast<size_t>(event)];
}

int DeviceModel::iterationAt(int64_t event) const
{
    if (!attribution)
        return -1;
    const auto& its = attribution->iterations;
    auto it = std::upper_bound(its.begin(), its.end(), event, [](int64_t e, const Iteration& i) { return e < i.firstEvent; });
    if (it == its.begin())
        return -1;
    --it;
    return event <= it->lastEvent ? static_cast<int>(it - its.begin()) : -1;
}

namespace {

std::vector<AnnotationRange> annotationRanges(const Snapshot& s, const DeviceModel& m)
{
    std::vector<AnnotationRange> out;
    const int64_t lastUs = m.events->count() ? m.events->timeUs.back() : m.t0Us;
    for (const AnnotationSpan& span : m.queries->annotations) {
        AnnotationRange r;
        r.name = s.str(span.name);
        r.startUs = span.startUs;
        r.endUs = span.open() ? std::max(span.startUs, lastUs) : span.endUs; // open: to the last event
        out.push_back(std::move(r));
    }
    for (AnnotationRange& r : out) {
        const double s0 = static_cast<double>(r.startUs - m.t0Us) / 1e6;
        const double s1 = static_cast<double>(r.endUs - m.t0Us) / 1e6;
        r.firstEvent = m.firstEventAtOrAfter(s0, XAxisMode::Time);
        r.lastEvent = std::max<int64_t>(r.firstEvent, m.eventAtX(s1, XAxisMode::Time));
    }
    std::sort(out.begin(), out.end(), [](const AnnotationRange& a, const AnnotationRange& b) { return a.startUs < b.startUs; });
    return out;
}

std::string shortAnnotation(std::string_view name)
{
    const size_t hash = name.find('#');
    return std::string(hash == std::string_view::npos ? name : name.substr(hash + 1));
}

void buildBands(DeviceModel& m)
{
    std::unordered_map<std::string, uint32_t> labelIndex;
    std::vector<uint32_t> annotationStyle(m.annotations.size());
    for (size_t i = 0; i < m.annotations.size(); ++i) {
        auto [it, added] = labelIndex.try_emplace(shortAnnotation(m.annotations[i].name),
                                                  static_cast<uint32_t>(m.annotationLabels.size()));
        if (added)
            m.annotationLabels.push_back(it->first);
        annotationStyle[i] = static_cast<uint32_t>(kPhaseCount) + it->second;
    }
    const int64_t n = m.eventCount();
    static const std::vector<Iteration> none;
    const auto& its = n > 0 && m.attribution ? m.attribution->iterations : none;
    for (XAxisMode mode : {XAxisMode::Time, XAxisMode::EventIndex}) {
        auto xAt = [&](int64_t e) { return m.x(std::clamp<int64_t>(e, 0, n - 1), mode); };
        std::vector<Band> lanes;
        std::vector<Band> lines;
        size_t phases = 0;
        for (const Iteration& it : its)
            phases += it.phases.size();
        lanes.reserve(phases + m.annotations.size());
        lines.reserve(its.size());
        for (size_t i = 0; i < its.size(); ++i) {
            const Iteration& it = its[i];
            for (const PhaseRange& p : it.phases) {
                if (p.lastEvent < p.firstEvent)
                    continue;
                lanes.push_back({.x0 = xAt(p.firstEvent),
                                 .x1 = xAt(p.lastEvent + 1),
                                 .firstEvent = p.firstEvent,
                                 .lastEvent = p.lastEvent,
                                 .source = static_cast<int64_t>(i),
                                 .row = 0,
                                 .tag = static_cast<int>(p.phase),
                                 .style = static_cast<uint32_t>(p.phase)});
            }
            const double x = xAt(it.firstEvent);
            lines.push_back(
                {.x0 = x, .x1 = x, .firstEvent = it.firstEvent, .lastEvent = it.lastEvent, .source = static_cast<int64_t>(i)});
        }
        for (size_t i = 0; i < m.annotations.size(); ++i) {
            const AnnotationRange& a = m.annotations[i];
            Band b{.firstEvent = a.firstEvent,
                   .lastEvent = a.lastEvent,
                   .source = static_cast<int64_t>(i),
                   .row = 1,
                   .style = annotationStyle[i]};
            if (mode == XAxisMode::Time) {
                b.x0 = static_cast<double>(a.startUs - m.t0Us) / 1e6;
                b.x1 = static_cast<double>(a.endUs - m.t0Us) / 1e6;
            } else {
                b.x0 = static_cast<double>(a.firstEvent);
                b.x1 = static_cast<double>(a.lastEvent + 1);
            }
            lanes.push_back(b);
        }
        for (size_t i = 0; i < m.metadata().size(); ++i) {
            const MetadataSpan& md = m.metadata()[i];
            // A marker is one event wide; on the time axis, at least a hair wide.
            const double x0 = xAt(md.firstEvent);
            double x1 = xAt(md.lastEvent + 1);
            if (md.lastEvent + 1 >= n || x1 <= x0)
                x1 = mode == XAxisMode::EventIndex ? x0 + 1 : x0 + std::max(1e-6, (m.xMax(mode) - m.xMin(mode)) * 2e-3);
            lanes.push_back({.x0 = x0,
                             .x1 = x1,
                             .firstEvent = md.firstEvent,
                             .lastEvent = md.lastEvent,
                             .source = static_cast<int64_t>(i),
                             .row = 2,
                             .style = m.metadataStyle() + (md.marker ? 1u : 0u)});
        }
        m.laneBands[static_cast<size_t>(mode)] = std::make_shared<const BandSet>(std::move(lanes), m.laneRows());
        m.iterationLines[static_cast<size_t>(mode)] = std::make_shared<const BandSet>(std::move(lines), 1);
    }
}

} // namespace

DeviceModel buildDeviceModel(const Analysis& analysis, size_t deviceIndex, const DeviceModel* previous)
{
    const Replay& replay = *analysis.replay;
    DeviceModel m;
    m.index = deviceIndex;
    m.replay = &replay.devices.at(deviceIndex);
    m.attribution = analysis.attributed ? &analysis.attribution->devices.at(deviceIndex) : nullptr;
    m.events = &replay.snapshot->devices.at(deviceIndex).events;
    m.queries = &analysis.queriesOf(deviceIndex);
    m.device = m.replay->device;
    const EventTable& ev = *m.events;
    const size_t n = ev.count();
    const bool reuse = previous && previous->replay == m.replay;
    if (reuse) {
        m.t0Us = previous->t0Us;
        m.timeUs = previous->timeUs;
        m.annotations = previous->annotations;
    } else {
        m.t0Us = n ? ev.timeUs.front() : 0;
        auto time = std::make_shared<CompactCurve>();
        time->reserve(n);
        int64_t running = 0;
        for (size_t i = 0; i < n; ++i) {
            running = std::max(running, ev.timeUs[i] - m.t0Us);
            time->push_back(running);
        }
        m.timeUs = std::move(time);
    }
    m.requested = MinMaxPyramid(&m.replay->requested);
    m.reserved = MinMaxPyramid(&m.replay->reserved);

    for (Category c : kAllCategories) {
        const size_t k = static_cast<size_t>(c);
        if (!m.attribution) {
            // Before the Attributed stage nothing is drawn as a category (the curves alone are).
            m.categoryPresent[k] = false;
            continue;
        }
        const auto& curve = m.attribution->categoryBytes[k];
        m.categoryPresent[k] = m.attribution->categoryAtStart[k] > 0 ||
                               std::any_of(curve.begin(), curve.end(), [](int64_t v) { return v > 0; });
    }
    if (!reuse)
        m.annotations = annotationRanges(*replay.snapshot, m);
    buildBands(m);
    return m;
}

} // namespace memscope
