#include "analysis/incremental_analysis.h"

#include <chrono>

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace memscope {

namespace {

double msSince(std::chrono::steady_clock::time_point t0)
{
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

} // namespace

IncrementalAnalysis::IncrementalAnalysis() : IncrementalAnalysis(Options{}) { }

IncrementalAnalysis::IncrementalAnalysis(Options options) : m_options(std::move(options))
{
    m_view = std::make_shared<LiveView>();
}

IncrementalAnalysis::~IncrementalAnalysis() { stop(); }

void IncrementalAnalysis::mirrorPools(const Snapshot& s)
{
    for (size_t i = m_strings.size(); i < s.strings.size(); ++i)
        m_strings.push_back(std::string(s.strings.view(StringId{static_cast<int32_t>(i)})));
    for (size_t i = m_frames.size(); i < s.frames.size(); ++i)
        m_frames.push_back(s.frames.frame(FrameId{static_cast<int32_t>(i)}));
    for (size_t i = m_stacks.size(); i < s.stacks.size(); ++i) {
        const auto f = s.stacks.frames(StackId{static_cast<int32_t>(i)});
        m_stacks.push_back(std::vector<FrameId>(f.begin(), f.end()));
    }
    for (size_t i = m_annotations.size(); i < s.annotations.size(); ++i)
        m_annotations.push_back(s.annotations[i]);
    if (s.segments.size() != m_segmentsSeen) {
        m_segments = s.segments;
        m_segmentsSeen = s.segments.size();
        for (auto& d : m_devices)
            d->replay.setSegments(m_segments);
    }
    if (s.allocatorSettings.size() != m_settings.size())
        m_settings = s.allocatorSettings;
    m_traceOverflowed = s.traceOverflowed;
    m_traceMaxEntries = s.traceMaxEntries;
    m_path = s.path;
}

void IncrementalAnalysis::ingestDevice(size_t index, const DeviceTrace& trace, int64_t base)
{
    while (m_devices.size() <= index) {
        auto d = std::make_unique<DeviceState>();
        d->ordinal = index == m_devices.size() ? trace.device : 0;
        d->replay = IncrementalDeviceReplay(d->ordinal);
        d->replay.setDetailEvents(m_options.detailEvents);
        d->replay.setSegments(m_segments);
        m_devices.push_back(std::move(d));
    }
    DeviceState& d = *m_devices[index];
    d.replay.setTraceLimits(m_traceOverflowed, m_traceMaxEntries);
    const EventTable& t = trace.events;
    const int64_t first = d.replay.eventCount();
    const int64_t last = base + static_cast<int64_t>(t.count());
    if (last <= first)
        return;
    if (first < base)
        throw std::runtime_error("live rows " + std::to_string(first) + " to " + std::to_string(base) + " of device " +
                                 std::to_string(d.ordinal) + " were released before they were analysed");
    d.replay.append(t, static_cast<size_t>(base), static_cast<size_t>(last));
    for (int64_t abs = first; abs < last; ++abs) {
        const size_t k = static_cast<size_t>(abs - base);
        d.rows.push_back(
            Row{t.action[k], t.stack[k], t.userMetadata[k], t.compileContext[k], t.addr[k], t.size[k], t.stream[k], t.timeUs[k]});
    }
    for (const auto& [row, free] : t.deviceFree)
        if (base + row >= first)
            d.deviceFree.emplace_back(base + row, free);
    d.hasTime = d.hasTime || t.hasTime;
    if (m_options.detailEvents > 0 && last > m_options.detailEvents)
        d.rows.evictBefore(static_cast<size_t>(last - m_options.detailEvents));
    m_events += last - first;
}

int64_t IncrementalAnalysis::ingest(LiveRecording& recording)
{
    const Snapshot& s = recording.model();
    const int64_t before = m_events;
    try {
        std::lock_guard<std::mutex> lock(m_stateMutex);
        mirrorPools(s);
        for (size_t i = 0; i < s.devices.size(); ++i)
            ingestDevice(i, s.devices[i], recording.eventBase(i));
        m_received = static_cast<int64_t>(recording.stats().events);
    } catch (const std::exception& e) {
        std::lock_guard<std::mutex> lock(m_stateMutex);
        m_ingestError = std::string("live update failed: ") + e.what();
    }
    recording.releaseEvents();
    return m_events - before;
}

int64_t IncrementalAnalysis::ingest(const Snapshot& growing)
{
    const int64_t before = m_events;
    try {
        std::lock_guard<std::mutex> lock(m_stateMutex);
        mirrorPools(growing);
        for (size_t i = 0; i < growing.devices.size(); ++i)
            ingestDevice(i, growing.devices[i], 0);
        m_received = m_events;
    } catch (const std::exception& e) {
        std::lock_guard<std::mutex> lock(m_stateMutex);
        m_ingestError = std::string("live update failed: ") + e.what();
    }
    return m_events - before;
}

std::shared_ptr<const LiveView> IncrementalAnalysis::publish(const LiveClient* client, double ingestMs)
{
    auto v = std::make_shared<LiveView>();
    {
        std::lock_guard<std::mutex> lock(m_stateMutex);
        v->devices.reserve(m_devices.size());
        for (const auto& d : m_devices) {
            v->devices.push_back(d->replay.view());
            v->heldBytes += static_cast<int64_t>(d->replay.heldBytes() + d->rows.heldBytes());
            v->rowBytes += static_cast<int64_t>(d->rows.heldBytes());
        }
        v->events = m_events;
        v->received = m_received;
        v->error = m_ingestError;
    }
    v->bounded = m_options.detailEvents > 0;
    v->ingestMs = ingestMs;
    if (client) {
        v->stats = client->stats();
        v->received = std::max<int64_t>(v->received, static_cast<int64_t>(v->stats.events));
        v->state = client->state();
        if (client->finished())
            v->connectionError = client->error();
    }
    std::lock_guard<std::mutex> lock(m_viewMutex);
    v->analysis = m_analysis;
    v->analysisEvents = m_analysisEvents;
    v->analysisMs = m_analysisMs;
    if (v->error.empty())
        v->error = m_analysisError;
    v->revision = ++m_revision;
    if (m_view && m_view->analysis && m_analysisRunning.load())
        m_retired.push_back(std::move(m_view)); // may hold the last reference to an old analysis
    m_view = v;
    return v;
}

void IncrementalAnalysis::retire(std::shared_ptr<const LiveView> view)
{
    if (!view || !m_analysisRunning.load())
        return;
    std::lock_guard<std::mutex> lock(m_viewMutex);
    m_retired.push_back(std::move(view));
}

std::shared_ptr<const Snapshot> IncrementalAnalysis::baseSnapshot() const
{
    std::lock_guard<std::mutex> lock(m_stateMutex);
    return m_base;
}

std::shared_ptr<const LiveView> IncrementalAnalysis::view() const
{
    std::lock_guard<std::mutex> lock(m_viewMutex);
    return m_view;
}

std::shared_ptr<const Snapshot> IncrementalAnalysis::mirroredSnapshot() const
{
    // Take the base (the last full analysis's Snapshot) and a view of the rows after it under
    // the lock (a pointer per chunk), build the Snapshot outside it: the base's columns and
    // pools, then the rows and pool entries that arrived since.
    struct DeviceCopy {
        int ordinal;
        ChunkedSeries<Row>::View rows;
        std::vector<std::pair<int64_t, uint64_t>> deviceFree;
        bool hasTime;
    };
    std::vector<DeviceCopy> devices;
    ChunkedSeries<std::string>::View strings;
    ChunkedSeries<Frame>::View frames;
    ChunkedSeries<std::vector<FrameId>>::View stacks;
    std::shared_ptr<const Snapshot> base;
    auto snap = std::make_shared<Snapshot>();
    {
        std::lock_guard<std::mutex> lock(m_stateMutex);
        base = m_base;
        for (size_t i = 0; i < m_devices.size(); ++i) {
            const DeviceState& d = *m_devices[i];
            const size_t inBase = base && i < base->devices.size() ? base->devices[i].events.count() : 0;
            if (d.rows.firstHeld() > inBase)
                return nullptr; // bounded: the detail before the window is on disk only
            devices.push_back({d.ordinal, d.rows.view(), d.deviceFree, d.hasTime});
        }
        strings = m_strings.view();
        frames = m_frames.view();
        stacks = m_stacks.view();
        snap->annotations = m_annotations;
        snap->segments = m_segments;
        snap->allocatorSettings = m_settings;
        snap->traceOverflowed = m_traceOverflowed;
        snap->traceMaxEntries = m_traceMaxEntries;
        snap->path = m_path;
    }
    snap->format = SnapshotFormat::Live;
    size_t firstString = 1, firstFrame = 0, firstStack = 0;
    if (base) {
        for (size_t i = 1; i < base->strings.size(); ++i)
            snap->strings.intern(base->strings.view(StringId{static_cast<int32_t>(i)}));
        snap->frames = base->frames;
        snap->stacks = base->stacks;
        firstString = base->strings.size();
        firstFrame = base->frames.size();
        firstStack = base->stacks.size();
    }
    for (size_t i = firstString; i < strings.size(); ++i)
        snap->strings.intern(strings[i]);
    for (size_t i = firstFrame; i < frames.size(); ++i)
        if (snap->frames.intern(frames[i]).value != static_cast<int32_t>(i))
            throw std::runtime_error("live frames are not distinct: frame " + std::to_string(i));
    for (size_t i = firstStack; i < stacks.size(); ++i)
        if (snap->stacks.intern(stacks[i]).value != static_cast<int32_t>(i))
            throw std::runtime_error("live stacks are not distinct: stack " + std::to_string(i));
    for (size_t di = 0; di < devices.size(); ++di) {
        const DeviceCopy& d = devices[di];
        DeviceTrace t;
        t.device = d.ordinal;
        EventTable& e = t.events;
        e.reserve(d.rows.size());
        size_t from = 0;
        if (base && di < base->devices.size()) {
            const EventTable& b = base->devices[di].events;
            from = b.count();
            e.action.insert(e.action.end(), b.action.begin(), b.action.end());
            e.addr.insert(e.addr.end(), b.addr.begin(), b.addr.end());
            e.size.insert(e.size.end(), b.size.begin(), b.size.end());
            e.timeUs.insert(e.timeUs.end(), b.timeUs.begin(), b.timeUs.end());
            e.stack.insert(e.stack.end(), b.stack.begin(), b.stack.end());
            for (size_t k = 0; k < from; ++k) {
                e.stream.push_back(b.stream[k]);
                e.userMetadata.push_back(b.userMetadata[k]);
                e.compileContext.push_back(b.compileContext[k]);
            }
        }
        for (size_t i = from; i < d.rows.size(); ++i) {
            const Row& r = d.rows[i];
            e.push(r.action, r.addr, r.size, r.stream, r.time, r.stack, r.meta, r.context);
        }
        for (const auto& [row, free] : d.deviceFree)
            if (row < static_cast<int64_t>(d.rows.size()))
                e.deviceFree.emplace(row, free);
        e.hasTime = d.hasTime;
        snap->devices.push_back(std::move(t));
    }
    return snap;
}

std::shared_ptr<const Analysis> IncrementalAnalysis::runFullAnalysis()
{
    const auto t0 = std::chrono::steady_clock::now();
    try {
        auto snap = mirroredSnapshot();
        if (!snap)
            return nullptr;
        int64_t events = 0;
        for (const DeviceTrace& t : snap->devices)
            events += static_cast<int64_t>(t.events.count());
        AnalysisOptions options;
        options.until = m_options.fullAnalysisUntil;
        options.warmPages = false; // the resident peak matters here, and the machine is busy
        {
            // The Snapshot is the mirror from now on: the rows it holds are let go (whole
            // chunks; at most one per device stays), so the analysed events are held once.
            std::lock_guard<std::mutex> lock(m_stateMutex);
            m_base = snap;
            for (size_t i = 0; i < m_devices.size() && i < snap->devices.size(); ++i)
                m_devices[i]->rows.evictBefore(snap->devices[i].events.count());
        }
        auto a = analyze(AnalysisSource::recording(snap, m_options.name), options);
        std::lock_guard<std::mutex> lock(m_viewMutex);
        m_analysis = a;
        m_analysisEvents = events;
        m_analysisMs = msSince(t0);
        m_analysisError.clear();
        return a;
    } catch (const std::exception& e) {
        std::lock_guard<std::mutex> lock(m_viewMutex);
        m_analysisError = std::string("live analysis failed: ") + e.what();
        m_analysisMs = msSince(t0);
        return nullptr;
    }
}

void IncrementalAnalysis::start(LiveClient& client, std::function<void()> onPublished)
{
    stop();
    {
        std::lock_guard<std::mutex> lock(m_wakeMutex);
        m_stop = false;
    }
    m_ingestThread = std::thread(&IncrementalAnalysis::ingestLoop, this, &client, onPublished);
    if (m_options.detailEvents <= 0) {
        m_analysisRunning = true;
        m_analysisThread = std::thread(&IncrementalAnalysis::analysisLoop, this, &client);
    }
}

void IncrementalAnalysis::stop()
{
    {
        std::lock_guard<std::mutex> lock(m_wakeMutex);
        m_stop = true;
    }
    m_wake.notify_all();
    if (m_ingestThread.joinable())
        m_ingestThread.join();
    if (m_analysisThread.joinable())
        m_analysisThread.join();
    m_analysisRunning = false;
    std::lock_guard<std::mutex> lock(m_viewMutex);
    m_retired.clear();
}

void IncrementalAnalysis::requestFullAnalysis()
{
    {
        std::lock_guard<std::mutex> lock(m_wakeMutex);
        m_analysisRequested = true;
    }
    m_wake.notify_all();
}

void IncrementalAnalysis::ingestLoop(LiveClient* client, std::function<void()> onPublished)
{
    uint64_t seenRevision = 0;
    uint64_t seenAnalysis = 0;
    bool finishedPublished = false;
    for (;;) {
        {
            std::unique_lock<std::mutex> lock(m_wakeMutex);
            m_wake.wait_for(lock, std::chrono::milliseconds(m_options.ingestPeriodMs), [&] { return m_stop; });
            if (m_stop)
                return;
        }
        const uint64_t revision = client->revision();
        uint64_t analysisRevision;
        {
            std::lock_guard<std::mutex> lock(m_viewMutex);
            analysisRevision = static_cast<uint64_t>(m_analysisEvents) ^ static_cast<uint64_t>(m_analysisMs * 1000);
        }
        const bool finished = client->finished();
        if (revision == seenRevision && analysisRevision == seenAnalysis && (finishedPublished || !finished))
            continue;
        seenRevision = revision;
        seenAnalysis = analysisRevision;
        finishedPublished = finished;
        const auto t0 = std::chrono::steady_clock::now();
        client->withRecording([&](LiveRecording& r) { ingest(r); });
        publish(client, msSince(t0));
        if (onPublished)
            onPublished();
    }
}

void IncrementalAnalysis::analysisLoop(LiveClient* client)
{
    // A full analysis is seconds of CPU at 10M events; on two cores it must not delay the
    // updates (measured: p99 66 ms and 1.1 s gaps at equal priority). Threads it starts inherit this.
    if (m_options.analysisNice > 0)
        ::setpriority(PRIO_PROCESS, static_cast<id_t>(::syscall(SYS_gettid)), m_options.analysisNice);
    auto lastEnd = std::chrono::steady_clock::now();
    double lastCost = 0;
    for (;;) {
        bool requested = false;
        {
            std::unique_lock<std::mutex> lock(m_wakeMutex);
            m_wake.wait_for(lock, std::chrono::milliseconds(100), [&] { return m_stop || m_analysisRequested; });
            if (m_stop)
                return;
            requested = m_analysisRequested;
            m_analysisRequested = false;
        }
        {
            // Old views, and with them old full analyses, are freed here, at this thread's priority.
            std::vector<std::shared_ptr<const LiveView>> retired;
            {
                std::lock_guard<std::mutex> lock(m_viewMutex);
                retired.swap(m_retired);
            }
        }
        int64_t events, analysed;
        {
            std::lock_guard<std::mutex> lock(m_stateMutex);
            events = m_events;
        }
        {
            std::lock_guard<std::mutex> lock(m_viewMutex);
            analysed = m_analysisEvents;
        }
        if (events == analysed || events == 0)
            continue;
        const double share = std::clamp(m_options.fullAnalysisShare, 0.01, 1.0);
        const double wait = std::max<double>(m_options.minFullAnalysisIntervalMs, lastCost * (1 - share) / share);
        const bool due = requested || client->finished() || msSince(lastEnd) >= wait;
        if (!due)
            continue;
        const auto t0 = std::chrono::steady_clock::now();
        runFullAnalysis();
        lastCost = msSince(t0);
        lastEnd = std::chrono::steady_clock::now();
    }
}

} // namespace memscope
