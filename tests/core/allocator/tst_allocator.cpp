// The caching-allocator model (core/allocator) on real recordings: the exact replay of every
// real snapshot with segment events, the settings what-if against runs recorded under those
// settings, and the largest batch against a batch sweep under a memory cap.
#include "allocator/what_if.h"
#include "analysis/analysis.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

#include <cmath>

using namespace memscope;

namespace {

const QString kAllocatorDir = QStringLiteral(MEMSCOPE_TESTDATA_DIR "/allocator");

QJsonObject readJson(const QString& path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    return QJsonDocument::fromJson(f.readAll()).object();
}

// NAME.stats.json next to NAME.pickle or NAME.pickle.gz; for multi-device runs, its device entry.
QJsonObject statsFor(const QString& pickle, int device)
{
    QString base = pickle;
    base.chop(pickle.endsWith(QStringLiteral(".gz")) ? 10 : 7);
    const QJsonObject s = readJson(base + QStringLiteral(".stats.json"));
    if (!s.contains(QStringLiteral("devices")))
        return s;
    const QJsonArray devs = s.value(QStringLiteral("devices")).toArray();
    for (int i = 0; i < devs.size(); ++i) {
        const QJsonObject d = devs[i].toObject();
        if (d.value(QStringLiteral("device")).toInt(i) == device)
            return d;
    }
    return {};
}

std::shared_ptr<const Analysis> load(const QString& path, AnalysisStage until = AnalysisStage::Replayed)
{
    AnalysisOptions o;
    o.until = until;
    return analyze(AnalysisSource::file(path.toStdString()), o);
}

SimulationResult replayExactly(const Analysis& a, size_t index)
{
    SimulationOptions o;
    o.settings = AllocatorSettings::fromSnapshot(a.snapshot->allocatorSettings);
    o.followRecording = true;
    return simulateDevice(*a.replay, index, nullptr, o);
}

QStringList realSnapshots()
{
    QStringList out;
    for (const QString& folder :
         {QStringLiteral(MEMSCOPE_SAMPLES_DIR), QStringLiteral(MEMSCOPE_TESTDATA_DIR "/oracle"),
          QStringLiteral(MEMSCOPE_TESTDATA_DIR "/real"), QStringLiteral(MEMSCOPE_TESTDATA_DIR "/diagnose"),
          QStringLiteral(MEMSCOPE_TESTDATA_DIR "/multi"), kAllocatorDir}) {
        const QDir dir(folder);
        for (const QString& name :
             dir.entryList({QStringLiteral("*.pickle"), QStringLiteral("*.pickle.gz")}, QDir::Files, QDir::Name)) {
            // multi/make_oom_fixtures.py appends an oom entry to a real trace without the
            // release of cached blocks torch records before one: edited, not real, for the allocator.
            if (name.startsWith(QLatin1String("two_gpus_oom")))
                continue;
            out << dir.filePath(name);
        }
    }
    return out;
}

// Where the model cannot equal torch's own counter, and why. Everything else must be exact.
struct Exception {
    const char* file;
    const char* what;
    const char* why;
};
const Exception kExceptions[] = {
    {"overflow_qwen_bs4.pickle", "allocated_peak",
     "the ring buffer kept the last 3000 entries only: torch's allocated peak (3392828928 B) was reached before them"},
};

const Exception* exceptionFor(const QString& path, const char* what)
{
    for (const Exception& e : kExceptions)
        if (path.endsWith(QLatin1String(e.file)) && qstrcmp(e.what, what) == 0)
            return &e;
    return nullptr;
}

} // namespace

class TstAllocator : public QObject {
    Q_OBJECT

private slots:
    void roundSize_data()
    {
        QTest::addColumn<qulonglong>("size");
        QTest::addColumn<QString>("conf");
        QTest::addColumn<qulonglong>("rounded");
        QTest::newRow("1 B") << 1ull << QString() << 512ull;
        QTest::newRow("512 B") << 512ull << QString() << 512ull;
        QTest::newRow("513 B") << 513ull << QString() << 1024ull;
        QTest::newRow("5 MB plain") << 5000000ull << QString() << 5000192ull;
        // 5,000,000 lies in [4 MiB, 8 MiB): four steps of 1 MiB, the next is 5 MiB
        QTest::newRow("5 MB, 4 divisions") << 5000000ull << QStringLiteral("roundup_power2_divisions:4") << 5242880ull;
        QTest::newRow("power of two stays") << 4194304ull << QStringLiteral("roundup_power2_divisions:4") << 4194304ull;
        // divisions apply only above 512 B x divisions
        QTest::newRow("small, 4 divisions") << 1200ull << QStringLiteral("roundup_power2_divisions:4") << 1536ull;
        // per interval: one division (plain) up to 512 MiB, 8 above; the first bound's value
        // also fills the intervals below it, as torch's parser does
        QTest::newRow("interval list, below")
            << 5000000ull << QStringLiteral("roundup_power2_divisions:[256:1,>:8]") << 5000192ull;
        QTest::newRow("interval list, above")
            << 600000000ull << QStringLiteral("roundup_power2_divisions:[256:1,>:8]") << 603979776ull;
        QTest::newRow("interval list, first fills below")
            << 5000000ull << QStringLiteral("roundup_power2_divisions:[256:8,>:1]") << 5242880ull;
    }
    void roundSize()
    {
        QFETCH(qulonglong, size);
        QFETCH(QString, conf);
        QFETCH(qulonglong, rounded);
        AllocatorSettings s;
        s.apply(conf.toStdString());
        QCOMPARE(CachingAllocatorModel::roundSize(size, s), rounded);
    }

    void allocationSize()
    {
        QCOMPARE(CachingAllocatorModel::allocationSize(512), 2ull << 20);
        QCOMPARE(CachingAllocatorModel::allocationSize(1 << 20), 2ull << 20);
        QCOMPARE(CachingAllocatorModel::allocationSize((1 << 20) + 512), 20ull << 20);
        QCOMPARE(CachingAllocatorModel::allocationSize(10ull << 20), 10ull << 20);
        QCOMPARE(CachingAllocatorModel::allocationSize((10ull << 20) + 512), 12ull << 20);
    }

    void settingsParse()
    {
        AllocatorSettings s;
        s.apply("expandable_segments:True,max_split_size_mb:64, garbage_collection_threshold:0.6");
        QVERIFY(s.expandableSegments);
        QCOMPARE(s.maxSplitSize, 64ull << 20);
        QCOMPARE(s.garbageCollectionThreshold, 0.6);
        QCOMPARE(s.toConf(), std::string("expandable_segments:True,max_split_size_mb:64,garbage_collection_threshold:0.6"));
        for (const char* bad : {"max_split_size_mb:10", "expandable_segments:maybe", "garbage_collection_threshold:1.5",
                                "roundup_power2_divisions:3", "no_such_key:1", "max_split_size_mb"}) {
            AllocatorSettings t;
            bool threw = false;
            try {
                t.apply(bad);
            } catch (const std::invalid_argument& e) {
                threw = true;
                QVERIFY2(std::string(e.what()).find(std::string(bad).substr(0, 8)) != std::string::npos, e.what());
            }
            QVERIFY2(threw, bad);
        }
    }

    void settingsFromSnapshot()
    {
        const auto a = load(kAllocatorDir + QStringLiteral("/alloc_maxsplit64.pickle.gz"), AnalysisStage::Loaded);
        const AllocatorSettings s = AllocatorSettings::fromSnapshot(a->snapshot->allocatorSettings);
        QCOMPARE(s.maxSplitSize, 64ull << 20);
        QVERIFY(!s.expandableSegments);
        const auto e = load(QStringLiteral(MEMSCOPE_TESTDATA_DIR "/real/expandable_qwen_bs4.pickle"), AnalysisStage::Loaded);
        QVERIFY(AllocatorSettings::fromSnapshot(e->snapshot->allocatorSettings).expandableSegments);
        const auto r = load(kAllocatorDir + QStringLiteral("/alloc_roundup4.pickle.gz"), AnalysisStage::Loaded);
        QCOMPARE(AllocatorSettings::fromSnapshot(r->snapshot->allocatorSettings).divisionsFor(100ull << 20), 4ull);
    }

    // Exact first: every real snapshot with segment events, replayed under its recorded
    // settings, gives the recorded alloc addresses, segment events, dump-time layout, the
    // reserved peak torch measured and its allocated_bytes.all.peak.
    void exactReplay_data()
    {
        QTest::addColumn<QString>("path");
        QTest::addColumn<int>("device");
        for (const QString& path : realSnapshots()) {
            const QJsonObject multi = readJson(path.left(path.lastIndexOf(QStringLiteral(".pickle"))) +
                                               QStringLiteral(".stats.json"));
            if (multi.contains(QStringLiteral("devices"))) {
                const QJsonArray devs = multi.value(QStringLiteral("devices")).toArray();
                for (int i = 0; i < devs.size(); ++i)
                    QTest::newRow(qPrintable(QFileInfo(path).fileName() + QStringLiteral(" d%1").arg(i))) << path << i;
            } else {
                QTest::newRow(qPrintable(QFileInfo(path).fileName())) << path << 0;
            }
        }
    }
    void exactReplay()
    {
        QFETCH(QString, path);
        QFETCH(int, device);
        const auto a = load(path);
        const auto index = a->findDevice(device);
        QVERIFY(index);
        const DeviceReplay& dr = a->replay->devices[*index];
        const SimulationResult r = replayExactly(*a, *index);
        QVERIFY2(r.exact, (r.firstMismatch + " " + r.layoutMismatch).c_str());
        QVERIFY(r.allocsChecked > 0);
        QCOMPARE(r.reservedPeak, dr.peakReserved.bytes);
        const QJsonObject stats = statsFor(path, device);
        if (stats.contains(QStringLiteral("max_reserved")))
            QCOMPARE(r.reservedPeak, static_cast<int64_t>(stats.value(QStringLiteral("max_reserved")).toDouble()));
        const QJsonValue allocatedPeak =
            stats.value(QStringLiteral("memory_stats")).toObject().value(QStringLiteral("allocated_bytes.all.peak"));
        if (!allocatedPeak.isUndefined()) {
            const auto torch = static_cast<int64_t>(allocatedPeak.toDouble());
            if (const Exception* e = exceptionFor(path, "allocated_peak")) {
                QVERIFY2(r.allocatedPeak != torch, "listed as an exception but now equal: drop it from kExceptions");
                QVERIFY(r.truncated || r.startStateGuessed);
                qInfo("%s: allocated peak %lld, torch %lld: %s", e->file, static_cast<long long>(r.allocatedPeak),
                      static_cast<long long>(torch), e->why);
            } else {
                QCOMPARE(r.allocatedPeak, torch);
            }
        }
        // the what-if path with the recorded settings and no capacity reproduces the recording
        SimulationOptions same;
        same.settings = AllocatorSettings::fromSnapshot(a->snapshot->allocatorSettings);
        const SimulationResult w = simulateDevice(*a->replay, *index, nullptr, same);
        if (dr.oomEvents.empty())
            QCOMPARE(w.reservedPeak, dr.peakReserved.bytes);
    }

    // At least 95% of the real snapshots are exact on every count; the others are listed.
    void exactShare()
    {
        int total = 0;
        int exact = 0;
        for (const QString& path : realSnapshots()) {
            const auto a = load(path);
            for (size_t i = 0; i < a->deviceCount(); ++i) {
                ++total;
                const SimulationResult r = replayExactly(*a, i);
                const QJsonValue peak = statsFor(path, a->replay->devices[i].device)
                                            .value(QStringLiteral("memory_stats"))
                                            .toObject()
                                            .value(QStringLiteral("allocated_bytes.all.peak"));
                const bool allocatedOk = peak.isUndefined() || static_cast<int64_t>(peak.toDouble()) == r.allocatedPeak;
                if (r.exact && allocatedOk)
                    ++exact;
                else
                    QVERIFY2(exceptionFor(path, "allocated_peak"), qPrintable(path));
            }
        }
        QVERIFY(total >= 30);
        QVERIFY2(exact * 100 >= total * 95, qPrintable(QStringLiteral("%1 of %2 exact").arg(exact).arg(total)));
    }

    // The default recording replayed under each other setting predicts the reserved peak of
    // the run recorded under it (same program, fresh process) within 2%.
    void settingsWhatIf_data()
    {
        QTest::addColumn<QString>("target");
        QTest::addColumn<QString>("conf");
        QTest::addColumn<double>("tolerance");
        QTest::newRow("expandable") << QStringLiteral("alloc_expandable") << QStringLiteral("expandable_segments:True") << 0.0;
        QTest::newRow("roundup4") << QStringLiteral("alloc_roundup4") << QStringLiteral("roundup_power2_divisions:4") << 0.0;
        QTest::newRow("gc06_maxsplit128") << QStringLiteral("alloc_gc06_maxsplit128")
                                          << QStringLiteral("garbage_collection_threshold:0.6,max_split_size_mb:128") << 0.0;
        QTest::newRow("maxsplit64") << QStringLiteral("alloc_maxsplit64") << QStringLiteral("max_split_size_mb:64") << 0.02;
    }
    void settingsWhatIf()
    {
        QFETCH(QString, target);
        QFETCH(QString, conf);
        QFETCH(double, tolerance);
        const auto a = load(kAllocatorDir + QStringLiteral("/alloc_default.pickle.gz"));
        const QJsonObject stats = readJson(kAllocatorDir + QLatin1Char('/') + target + QStringLiteral(".stats.json"));
        QCOMPARE(stats.value(QStringLiteral("alloc_conf")).toString(), conf);
        SimulationOptions o;
        o.settings = AllocatorSettings::fromSnapshot(a->snapshot->allocatorSettings);
        o.settings.apply(conf.toStdString());
        const SimulationResult r = simulateDevice(*a->replay, 0, nullptr, o);
        const double recorded = stats.value(QStringLiteral("max_reserved")).toDouble();
        const double error = std::abs(static_cast<double>(r.reservedPeak) - recorded) / recorded;
        qInfo("%s: predicted %lld, recorded %.0f (%.3f%%)", qPrintable(target), static_cast<long long>(r.reservedPeak), recorded,
              error * 100);
        QVERIFY(error <= tolerance);
        QVERIFY(!r.oom);
    }

    // The what-if's free space is taken at the allocated peak, not at the reserved peak. With
    // expandable segments the reserved plateau starts before the blocks fill it: read at its
    // first event, half the reserved bytes looked free at a peak where they were allocated.
    void fragmentationAtAllocatedPeak_data()
    {
        QTest::addColumn<QString>("conf");
        QTest::newRow("recorded") << QString();
        QTest::newRow("expandable") << QStringLiteral("expandable_segments:True");
        QTest::newRow("maxsplit64") << QStringLiteral("max_split_size_mb:64");
    }
    void fragmentationAtAllocatedPeak()
    {
        QFETCH(QString, conf);
        const auto a = load(kAllocatorDir + QStringLiteral("/alloc_default.pickle.gz"));
        SimulationOptions o;
        o.settings = AllocatorSettings::fromSnapshot(a->snapshot->allocatorSettings);
        if (!conf.isEmpty())
            o.settings.apply(conf.toStdString());
        o.keepCurve = true;
        const SimulationResult r = simulateDevice(*a->replay, 0, nullptr, o);
        QVERIFY(r.allocatedPeakEvent >= 0);
        // the event is the allocated peak's, and the reserved bytes are that event's
        QCOMPARE(r.reservedAtAllocatedPeak, r.reserved[static_cast<size_t>(r.allocatedPeakEvent)]);
        QVERIFY(r.reservedAtAllocatedPeak >= r.allocatedPeak);
        QVERIFY(r.reservedAtAllocatedPeak <= r.reservedPeak);
        QVERIFY(r.largestFreeAtAllocatedPeak <= r.unallocatedAtAllocatedPeak());
        QVERIFY(r.fragmentationAtAllocatedPeak() >= 0.0 && r.fragmentationAtAllocatedPeak() <= 1.0);
        // on this run the reserved peak comes after the allocated peak: there the blocks had
        // been freed again, and the figure read there was the bug
        QVERIFY(r.reservedPeakEvent > r.allocatedPeakEvent);
        QVERIFY(r.unallocatedAtAllocatedPeak() < r.fragmentationAtPeak());
        qInfo("%s: allocated peak %lld at event %lld, reserved there %lld (unallocated %.1f%%, fragmentation %.1f%%); "
              "at the reserved peak's first event (%lld): unallocated %.1f%%",
              qPrintable(conf), static_cast<long long>(r.allocatedPeak), static_cast<long long>(r.allocatedPeakEvent),
              static_cast<long long>(r.reservedAtAllocatedPeak), r.unallocatedFractionAtAllocatedPeak() * 100,
              r.fragmentationAtAllocatedPeak() * 100, static_cast<long long>(r.reservedPeakEvent),
              r.fragmentationFraction() * 100);
    }

    // Replayed under the cap it ran with, the batch-16 run runs out of memory where it did.
    void capacityOom()
    {
        const auto a = load(kAllocatorDir + QStringLiteral("/sweep_bs16.pickle.gz"), AnalysisStage::Attributed);
        const DeviceReplay& dr = a->replay->devices[0];
        QCOMPARE(dr.oomEvents.size(), size_t(1));
        const QJsonObject sweep = readJson(kAllocatorDir + QStringLiteral("/sweep.json"));
        SimulationOptions o;
        o.capacity = static_cast<uint64_t>(sweep.value(QStringLiteral("cap_gib")).toDouble() * 1073741824.0);
        const SimulationResult r = simulateDevice(*a->replay, 0, &a->attribution->devices[0], o);
        QVERIFY(r.oom);
        QCOMPARE(r.oom->event, dr.oomEvents[0].value);
        QCOMPARE(r.oom->size, a->snapshot->devices[0].events.size[static_cast<size_t>(dr.oomEvents[0].value)]);
        // without the cap it would have gone on
        o.capacity = AllocatorSettings::kNoLimit;
        const SimulationResult free = simulateDevice(*a->replay, 0, nullptr, o);
        QVERIFY(!free.oom);
        QCOMPARE(free.recordedOomsAvoided, int64_t(1));
    }

    // The batch sweep: batch 4 recorded, cap 6 GiB; the predicted largest batch lies between
    // the largest batch that ran and the smallest that failed.
    void maxBatchInSweep()
    {
        const QJsonObject sweep = readJson(kAllocatorDir + QStringLiteral("/sweep.json"));
        int64_t ran = 0;
        int64_t failed = std::numeric_limits<int64_t>::max();
        for (const QJsonValue& v : sweep.value(QStringLiteral("runs")).toArray()) {
            const QJsonObject run = v.toObject();
            const auto b = static_cast<int64_t>(run.value(QStringLiteral("batch")).toInt());
            if (run.value(QStringLiteral("ok")).toBool())
                ran = std::max(ran, b);
            else
                failed = std::min(failed, b);
        }
        QCOMPARE(ran, int64_t(8));
        QCOMPARE(failed, int64_t(16));
        const auto a = load(kAllocatorDir + QStringLiteral("/alloc_default.pickle.gz"), AnalysisStage::Attributed);
        QCOMPARE(readJson(kAllocatorDir + QStringLiteral("/alloc_default.stats.json")).value(QStringLiteral("batch")).toInt(), 4);
        SimulationOptions o;
        o.capacity = static_cast<uint64_t>(sweep.value(QStringLiteral("cap_gib")).toDouble() * 1073741824.0);
        const MaxBatchResult m = findMaxBatch(*a->replay, 0, a->attribution->devices[0], o, 4.0);
        qInfo("largest batch: %lld (ran %lld, failed %lld)", static_cast<long long>(m.maxBatch), static_cast<long long>(ran),
              static_cast<long long>(failed));
        QVERIFY(m.maxBatch >= ran);
        QVERIFY(m.maxBatch < failed);
        QVERIFY(!m.unbounded);
        QVERIFY(m.atMax && !m.atMax->oom);
        // the recorded batch replays as recorded
        const SimulationResult same = simulateBatch(*a->replay, 0, a->attribution->devices[0], SimulationOptions{}, 4.0, 4.0);
        QCOMPARE(same.reservedPeak, a->replay->devices[0].peakReserved.bytes);
        // and something does grow with the batch
        QVERIFY(batchBytesAtPeak(a->attribution->devices[0], a->replay->devices[0]) > 0);
    }
};

QTEST_GUILESS_MAIN(TstAllocator)
#include "tst_allocator.moc"
