#include "replay/replay.h"
#include "snapshot/snapshot_reader.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

using namespace memscope;

namespace {

// The replay of the device of that ordinal; null if the recording has none.
const DeviceReplay* replayOfDevice(const Replay& r, int device)
{
    for (const DeviceReplay& d : r.devices)
        if (d.device == device)
            return &d;
    return nullptr;
}

} // namespace

class TestReplay : public QObject {
    Q_OBJECT
private slots:
    // torch's own counters, recorded by the same process, are the truth.
    void peaksMatchTorchCounters_data()
    {
        QTest::addColumn<QString>("pickle");
        QTest::addColumn<qint64>("requestedPeak");
        QTest::addColumn<qint64>("maxReserved");
        int rows = 0;
        for (const QString& folder :
             {QStringLiteral(MEMSCOPE_SAMPLES_DIR), QStringLiteral(MEMSCOPE_TESTDATA_DIR "/oracle"),
              QStringLiteral(MEMSCOPE_TESTDATA_DIR "/real"), QStringLiteral(MEMSCOPE_TESTDATA_DIR "/diagnose"),
              QStringLiteral(MEMSCOPE_TESTDATA_DIR "/fields")}) {
            const QDir dir(folder);
            const auto stats = dir.entryList({QStringLiteral("*.stats.json")}, QDir::Files, QDir::Name);
            for (const QString& name : stats) {
                QFile f(dir.filePath(name));
                QVERIFY(f.open(QIODevice::ReadOnly));
                const QJsonObject o = QJsonDocument::fromJson(f.readAll()).object();
                const qint64 peak = o.value(QStringLiteral("memory_stats"))
                                        .toObject()
                                        .value(QStringLiteral("requested_bytes.all.peak"))
                                        .toInteger(-1);
                const qint64 reserved = o.value(QStringLiteral("max_reserved")).toInteger(-1);
                QVERIFY2(peak > 0 && reserved > 0, qPrintable(name));
                const QString base = name.left(name.size() - int(strlen(".stats.json")));
                QTest::newRow(qPrintable(base)) << dir.filePath(base + QStringLiteral(".pickle")) << peak << reserved;
                ++rows;
            }
        }
        QVERIFY(rows >= 20);
    }
    void peaksMatchTorchCounters()
    {
        QFETCH(QString, pickle);
        QFETCH(qint64, requestedPeak);
        QFETCH(qint64, maxReserved);
        auto r = replaySnapshot(readSnapshotFile(pickle.toStdString()));
        const DeviceReplay& d = r->devices.at(0);
        QCOMPARE(d.peakRequested.bytes, requestedPeak);
        QCOMPARE(d.peakReserved.bytes, maxReserved);
        QVERIFY(d.peakRequested.event.valid());
        QCOMPARE(d.requestedAfter(d.peakRequested.event.value), requestedPeak);
        QCOMPARE(d.peakRequested.timeUs, r->snapshot->devices[0].events.timeUs[size_t(d.peakRequested.event.value)]);
        // The live set at the peak adds up to the peak.
        int64_t sum = 0;
        for (AllocationId id : d.activeAfter(d.peakRequested.event.value))
            sum += static_cast<int64_t>(d.allocation(id).size);
        QCOMPARE(sum, requestedPeak);
        QCOMPARE(d.truncated, pickle.contains(QStringLiteral("overflow")));
    }

    // The requested curve (a CompactCurve, built 4096 events at a time) is the running sum of
    // the allocations' sizes at their alloc and free events, value for value, read one at a
    // time or a stretch at a time; its peak is the first highest event. llm_bs16 moves by
    // several GiB within a block (wide blocks), so does the late recording, which starts from a baseline.
    void requestedIsTheRunningSum_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<bool>("wide");
        QTest::newRow("llm_bs16") << QStringLiteral(MEMSCOPE_SAMPLES_DIR "/llm_bs16.pickle") << true;
        QTest::newRow("many_small") << QStringLiteral(MEMSCOPE_SAMPLES_DIR "/many_small.pickle") << false;
        QTest::newRow("oracle_qwen_bs4_late")
            << QStringLiteral(MEMSCOPE_TESTDATA_DIR "/oracle/oracle_qwen_bs4_late.pickle") << true;
        QTest::newRow("two_gpus") << QStringLiteral(MEMSCOPE_TESTDATA_DIR "/multi/two_gpus.pickle") << false;
    }
    void requestedIsTheRunningSum()
    {
        QFETCH(QString, file);
        QFETCH(bool, wide);
        auto r = replaySnapshot(readSnapshotFile(file.toStdString()));
        bool anyWide = false;
        for (const DeviceReplay& d : r->devices) {
            const size_t n = static_cast<size_t>(d.eventCount);
            QCOMPARE(d.requested.size(), n);
            std::vector<int64_t> delta(n + 1, 0);
            for (const Allocation& a : d.allocations) {
                if (a.allocEvent.valid())
                    delta[static_cast<size_t>(a.allocEvent.value)] += static_cast<int64_t>(a.size);
                if (a.freeEvent.valid())
                    delta[static_cast<size_t>(a.freeEvent.value)] -= static_cast<int64_t>(a.size);
            }
            std::vector<int64_t> stretch(n);
            d.requested.read(0, n, stretch.data());
            int64_t cur = d.requestedAtStart;
            Peak peak{cur, EventIndex{}, 0};
            for (size_t i = 0; i < n; ++i) {
                cur += delta[i];
                if (d.requested[i] != cur || stretch[i] != cur)
                    QFAIL(qPrintable(QStringLiteral("device %1 event %2: %3 (read %4), expected %5")
                                         .arg(d.device)
                                         .arg(i)
                                         .arg(d.requested[i])
                                         .arg(stretch[i])
                                         .arg(cur)));
                if (cur > peak.bytes)
                    peak = Peak{cur, EventIndex{static_cast<int64_t>(i)}, 0};
            }
            QCOMPARE(d.peakRequested.bytes, peak.bytes);
            QCOMPARE(d.peakRequested.event.value, peak.event.value);
            anyWide = anyWide || d.requested.wideBlocks() > 0;
        }
        QCOMPARE(anyWide, wide);
    }

    // One process on two GPUs (tests/data/multi/, samples/recording/record_two_gpus.py):
    // each device's replay equals that device's own counters.
    void everyDeviceMatchesItsCounters()
    {
        QFile f(QStringLiteral(MEMSCOPE_TESTDATA_DIR "/multi/two_gpus.stats.json"));
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QJsonArray devices = QJsonDocument::fromJson(f.readAll()).object().value(QStringLiteral("devices")).toArray();
        QCOMPARE(devices.size(), 2);
        auto r = replaySnapshot(readSnapshotFile(MEMSCOPE_TESTDATA_DIR "/multi/two_gpus.pickle"));
        QCOMPARE(r->devices.size(), size_t(2));
        for (const QJsonValue& v : devices) {
            const QJsonObject o = v.toObject();
            const int device = o.value(QStringLiteral("device")).toInt(-1);
            const DeviceReplay* d = replayOfDevice(*r, device);
            QVERIFY2(d, qPrintable(QStringLiteral("no replay of device %1").arg(device)));
            QVERIFY(d->eventCount > 1000);
            QCOMPARE(d->peakRequested.bytes, o.value(QStringLiteral("requested_peak")).toInteger(-1));
            QCOMPARE(d->peakReserved.bytes, o.value(QStringLiteral("max_reserved")).toInteger(-1));
        }
    }

    // Sharded training on two and four H100s (tests/data/whatif/shard/, record_shard_truth.py): DDP,
    // DDP with ZeroRedundancyOptimizer and FSDP2 (a Qwen2 and a GPT-2; the Qwen2 also checkpointed),
    // every rank on its own device, and the same training on one GPU. Each rank's replay of the
    // device it trained on equals its counters.
    void shardedRanksMatchTheirCounters_data()
    {
        QTest::addColumn<QString>("pickle");
        QTest::addColumn<int>("rank");
        QTest::addColumn<qint64>("requestedPeak");
        QTest::addColumn<qint64>("maxReserved");
        const QDir dir(QStringLiteral(MEMSCOPE_TESTDATA_DIR "/whatif/shard"));
        const auto counters = dir.entryList({QStringLiteral("*_rank*.json")}, QDir::Files, QDir::Name);
        QCOMPARE(counters.size(), 42);
        for (const QString& name : counters) {
            QFile f(dir.filePath(name));
            QVERIFY(f.open(QIODevice::ReadOnly));
            const QJsonObject o = QJsonDocument::fromJson(f.readAll()).object();
            const QString base = name.left(name.size() - int(strlen(".json")));
            QTest::newRow(qPrintable(base)) << dir.filePath(base + QStringLiteral(".pickle.gz"))
                                            << o.value(QStringLiteral("rank")).toInt(-1)
                                            << o.value(QStringLiteral("requested_peak")).toInteger(-1)
                                            << o.value(QStringLiteral("max_reserved")).toInteger(-1);
        }
    }
    void shardedRanksMatchTheirCounters()
    {
        QFETCH(QString, pickle);
        QFETCH(int, rank);
        QFETCH(qint64, requestedPeak);
        QFETCH(qint64, maxReserved);
        auto r = replaySnapshot(readSnapshotFile(pickle.toStdString()));
        const DeviceReplay* d = replayOfDevice(*r, rank); // torchrun's local rank is its device here
        QVERIFY2(d, qPrintable(QStringLiteral("no replay of device %1").arg(rank)));
        QVERIFY(d->eventCount > 1000);
        QCOMPARE(d->peakRequested.bytes, requestedPeak);
        QCOMPARE(d->peakReserved.bytes, maxReserved);
    }

    // Recording started after the model and optimizer existed: their blocks are in
    // `segments` but have no alloc in the trace.
    void preexistingFromSegments()
    {
        auto r = replaySnapshot(readSnapshotFile(MEMSCOPE_TESTDATA_DIR "/oracle/oracle_qwen_bs4_late.pickle"));
        const DeviceReplay& d = r->devices.at(0);
        QVERIFY(d.preexistingCount > 0);
        QCOMPARE(d.requestedAtStart, d.preexistingBytes);
        QVERIFY(d.preexistingBytes > 600 * 1024 * 1024); // the model's weights, ~610 MiB
        QVERIFY(!d.truncated);
        for (const Allocation& a : d.allocations)
            if (a.preexisting())
                QVERIFY(!a.allocEvent.valid());
    }

    void expandableSegmentsMapAndUnmap()
    {
        auto r = replaySnapshot(readSnapshotFile(MEMSCOPE_TESTDATA_DIR "/real/expandable_qwen_bs4.pickle"));
        const Snapshot& s = *r->snapshot;
        QVERIFY(std::count(s.devices[0].events.action.begin(), s.devices[0].events.action.end(), Action::SegmentMap) > 0);
        QVERIFY(std::any_of(s.segments.begin(), s.segments.end(), [](const Segment& g) { return g.expandable; }));
        QCOMPARE(r->devices[0].reservedAtStart, int64_t(0));
    }

    void liveSetAgreesWithCurveEverywhere()
    {
        auto r = replaySnapshot(readSnapshotFile(std::string(MEMSCOPE_SAMPLES_DIR) + "/many_small.pickle"));
        const DeviceReplay& d = r->devices.at(0);
        for (int64_t i = -1; i < d.eventCount; i += 997) {
            int64_t sum = 0;
            for (AllocationId id : d.activeAfter(i))
                sum += static_cast<int64_t>(d.allocation(id).size);
            QCOMPARE(sum, d.requestedAfter(i));
        }
    }

    void oomIsKept()
    {
        auto r = replaySnapshot(readSnapshotFile(std::string(MEMSCOPE_SAMPLES_DIR) + "/oom.pickle"));
        const DeviceReplay& d = r->devices.at(0);
        QCOMPARE(d.oomEvents.size(), size_t(1));
        const EventTable& ev = r->snapshot->devices[0].events;
        QVERIFY(ev.deviceFree.count(d.oomEvents[0].value));
    }

    void segmentFreeLowersReserved()
    {
        auto r = replaySnapshot(readSnapshotFile(std::string(MEMSCOPE_SAMPLES_DIR) + "/release.pickle"));
        const DeviceReplay& d = r->devices.at(0);
        QVERIFY(d.reserved.back() < d.peakReserved.bytes);
        QCOMPARE(d.preexistingBytes, int64_t(0));
    }
};

QTEST_GUILESS_MAIN(TestReplay)
#include "tst_replay.moc"
