// A distributed job opened as one (core/job): ranks found in each launcher's layout, each
// rank's peaks equal to its own torch counters, summaries written and read back, the
// communication memory of the real DDP job, and the device shown first on a multi-device
// file with an OOM (core, `memscope summary`, `diagnose` and `report`).
#include "analysis/analysis.h"
#include "attribute/collective_memory.h"
#include "common/load_error.h"
#include "job/job_summary_writer.h"
#include "job/rank_discovery.h"
#include "job/rank_set.h"
#include "job/rank_summary.h"

#include "support/cli_run.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include <fstream>

using namespace memscope;

namespace {

const QString kRanks = QStringLiteral(MEMSCOPE_TESTDATA_DIR "/ranks");
const QString kMulti = QStringLiteral(MEMSCOPE_TESTDATA_DIR "/multi");

QJsonObject readJson(const QString& path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    return QJsonDocument::fromJson(f.readAll()).object();
}

// torch's own counters for rank r of the DDP job.
struct Counters {
    int64_t requestedPeak = 0;
    int64_t reservedPeak = 0;
};
Counters counters(int rank)
{
    const QJsonObject s = readJson(kRanks + QStringLiteral("/ddp_rank%1.stats.json").arg(rank));
    return {s.value(QStringLiteral("memory_stats")).toObject().value(QStringLiteral("requested_bytes.all.peak")).toInteger(),
            s.value(QStringLiteral("max_reserved")).toInteger()};
}

// Copies the job's rank r snapshot to dir/relative, making the folders.
bool place(const QString& dir, int rank, const QString& relative)
{
    const QString to = dir + QLatin1Char('/') + relative;
    QDir().mkpath(QFileInfo(to).path());
    return QFile::copy(kRanks + QStringLiteral("/ddp_rank%1.pickle").arg(rank), to);
}

using test::CliRun;

CliRun runCli(const QStringList& args) { return test::runCli(QStringLiteral(MEMSCOPE_APP), args); }

// The summary of the real rank 0 with its timeline replaced.
std::string realSummaryWithTimeline(const std::string& timeline)
{
    RankSummary s;
    s.rank = 0;
    std::string text = rankSummaryJson(s);
    const size_t at = text.find("\"timeline\":\"");
    return text.substr(0, at) + "\"timeline\":\"" + timeline + "\"}";
}

} // namespace

class TestJob : public QObject {
    Q_OBJECT

private slots:
    void rankFromName_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<int>("rank"); // -1: none
        QTest::newRow("torchtitan") << "rank3_memory_snapshot.pickle" << 3;
        QTest::newRow("megatron") << "snapshot_12.pickle" << 12;
        QTest::newRow("megatron oom") << "snapshot_oom_rank-7.pickle" << 7;
        QTest::newRow("oom_rank") << "oom_rank5.pickle" << 5;
        QTest::newRow("rank_") << "trace_rank_9.pickle.gz" << 9;
        QTest::newRow("ddp") << "ddp_rank1.pickle" << 1;
        QTest::newRow("no rank") << "train.pickle" << -1;
        QTest::newRow("word only") << "ranking.pickle" << -1;
    }
    void rankFromName()
    {
        QFETCH(QString, name);
        QFETCH(int, rank);
        QCOMPARE(rankFromFileName(name.toStdString()).value_or(-1), rank);
    }

    // The real DDP job (2 x H200) opens as one job: each rank on its own device, its peaks
    // equal to that rank's torch counters to the byte.
    void ddpJobPeaksEqualCounters()
    {
        const auto set = RankSet::open(std::vector<std::string>{kRanks.toStdString()});
        QCOMPARE(set->size(), size_t(2));
        for (int r = 0; r < 2; ++r) {
            const RankEntry& e = set->ranks()[static_cast<size_t>(r)];
            QVERIFY2(e.ok(), e.error.c_str());
            QCOMPARE(e.summary.rank, r);
            QCOMPARE(e.summary.device, r);
            const Counters c = counters(r);
            QCOMPARE(e.summary.peakRequested, c.requestedPeak);
            QCOMPARE(e.summary.peakReserved, c.reservedPeak);
            QVERIFY(!e.summary.peakPhase.empty());
            QVERIFY(!e.summary.oom);
            QVERIFY(e.summary.timeline.size() == kRankTimelinePoints);
            int64_t high = 0;
            for (const RankTimelinePoint& p : e.summary.timeline)
                high = std::max(high, p.high);
            QCOMPARE(high, c.requestedPeak); // the compact timeline keeps the peak
        }
        const double mean = (counters(0).requestedPeak + counters(1).requestedPeak) / 2.0;
        QCOMPARE(set->meanPeak(), mean);
        QCOMPARE(set->ranks()[1].aboveMean, (counters(1).requestedPeak - mean) / mean);
        // No OOM: the highest peak opens first.
        const size_t expected = counters(1).requestedPeak > counters(0).requestedPeak ? 1 : 0;
        QCOMPARE(set->focusRank(), expected);
        // A rank's full analysis on demand is the same recording.
        const auto full = set->load(1);
        QCOMPARE(full->replay->devices[full->focusDevice()].peakRequested.bytes, counters(1).requestedPeak);
    }

    // DDP's gradient buckets: the stacks of the real job say c10d::Reducer::initialize_buckets
    // (at construction, and again from rebuild_buckets after the first step); the parameter
    // broadcast at construction is c10d::broadcast_coalesced. Neither is the model's forward.
    void ddpCommunicationMemory()
    {
        const auto a = analyze(AnalysisSource::file((kRanks + QStringLiteral("/ddp_rank0.pickle")).toStdString()),
                               {.load = {}, .until = AnalysisStage::Replayed});
        const size_t d = a->focusDevice();
        const Collectives c = findCollectives(*a->replay);
        const DeviceReplay& r = a->replay->devices[d];
        const DeviceCollectives& dc = c.devices[d];
        int64_t buckets = 0, bucketBytesAtPeak = 0, broadcast = 0;
        for (size_t i = 0; i < r.allocations.size(); ++i) {
            const Allocation& al = r.allocations[i];
            bool reducer = false, coalesced = false, distributed = false;
            if (al.stack.valid())
                for (FrameId f : a->snapshot->stacks.frames(al.stack)) {
                    const std::string_view name = a->snapshot->str(a->snapshot->frames.frame(f).name);
                    const std::string_view file = a->snapshot->str(a->snapshot->frames.frame(f).filename);
                    reducer = reducer || name.find("c10d::Reducer::initialize_buckets") != std::string_view::npos;
                    coalesced = coalesced || name.find("c10d::broadcast_coalesced") != std::string_view::npos;
                    distributed = distributed || name.find("c10d") != std::string_view::npos ||
                                  file.find("distributed") != std::string_view::npos;
                }
            const CollectiveKind kind = dc.allocationKind[i];
            if (!distributed)
                QCOMPARE(kind, CollectiveKind::None);
            if (reducer) {
                QCOMPARE(kind, CollectiveKind::GradientBucket);
                ++buckets;
                if (al.activeAfter(r.peakRequested.event.value))
                    bucketBytesAtPeak += static_cast<int64_t>(al.size);
            }
            if (coalesced) {
                QCOMPARE(kind, CollectiveKind::CollectiveBuffer);
                ++broadcast;
            }
        }
        QCOMPARE(buckets, int64_t(14)); // one at construction, 13 from rebuild_buckets
        QVERIFY(broadcast > 0);
        QVERIFY(bucketBytesAtPeak > 0);
        QCOMPARE(dc.atPeak[static_cast<size_t>(CollectiveKind::GradientBucket)], bucketBytesAtPeak);
        QVERIFY(dc.atPeakTotal() < r.peakRequested.bytes / 2); // the model itself is not communication
        // The curve agrees with the live set at the peak.
        QCOMPARE(dc.bytes[static_cast<size_t>(r.peakRequested.event.value)], dc.atPeakTotal());
    }

    // Each launcher's layout, made in a temp dir from the two real ranks.
    void layouts_data()
    {
        QTest::addColumn<QStringList>("files"); // "R:relative path"
        QTest::addColumn<QString>("open"); // the folder to open, relative
        QTest::addColumn<QStringList>("chosen"); // per rank, the file expected
        QTest::addColumn<int>("focus"); // the rank shown first, -1: the highest peak
        QTest::newRow("torchtitan") << QStringList{"0:out/memory_snapshot/iteration_10/rank0_memory_snapshot.pickle",
                                                   "1:out/memory_snapshot/iteration_10/rank1_memory_snapshot.pickle",
                                                   "0:out/memory_snapshot/iteration_20/rank0_memory_snapshot.pickle",
                                                   "1:out/memory_snapshot/iteration_20/rank1_memory_snapshot.pickle"}
                                    << "out"
                                    << QStringList{"iteration_20/rank0_memory_snapshot.pickle",
                                                   "iteration_20/rank1_memory_snapshot.pickle"}
                                    << -1;
        QTest::newRow("torchtitan OOM exit")
            << QStringList{"0:memory_snapshot/iteration_20/rank0_memory_snapshot.pickle",
                           "1:memory_snapshot/iteration_20/rank1_memory_snapshot.pickle",
                           "0:memory_snapshot/iteration_20_exit/rank0_memory_snapshot.pickle"}
            << "memory_snapshot"
            << QStringList{"iteration_20_exit/rank0_memory_snapshot.pickle", "iteration_20/rank1_memory_snapshot.pickle"} << 0;
        QTest::newRow("torchtune")
            << QStringList{"0:iteration_3/rank0_memory_snapshot.pickle", "1:iteration_3/rank1_memory_snapshot.pickle"} << "."
            << QStringList{"iteration_3/rank0_memory_snapshot.pickle", "iteration_3/rank1_memory_snapshot.pickle"} << -1;
        QTest::newRow("megatron") << QStringList{"0:snap/snapshot_0.pickle", "1:snap/snapshot_1.pickle",
                                                 "1:snap/snapshot_oom_rank-1.pickle"}
                                  << "snap" << QStringList{"snap/snapshot_0.pickle", "snap/snapshot_oom_rank-1.pickle"} << 1;
        QTest::newRow("oom_rank") << QStringList{"0:oom_rank0.pickle", "1:oom_rank1.pickle", "0:oom_rank0.stats.json"} << "."
                                  << QStringList{"oom_rank0.pickle", "oom_rank1.pickle"} << -2;
        // Names without a rank: the device the events are on.
        QTest::newRow("by device") << QStringList{"1:a.pickle", "0:b.pickle"} << "." << QStringList{"b.pickle", "a.pickle"} << -1;
    }
    void layouts()
    {
        QFETCH(QStringList, files);
        QFETCH(QString, open);
        QFETCH(QStringList, chosen);
        QFETCH(int, focus);
        QTemporaryDir dir;
        for (const QString& f : files) {
            if (f.endsWith(QStringLiteral(".json"))) {
                QVERIFY(QFile::copy(kRanks + QStringLiteral("/ddp_rank0.stats.json"), dir.filePath(f.mid(2))));
                continue;
            }
            QVERIFY(place(dir.path(), f.left(1).toInt(), f.mid(2)));
        }
        const auto set = RankSet::open(std::vector<std::string>{dir.filePath(open).toStdString()});
        QCOMPARE(set->size(), size_t(chosen.size()));
        for (int r = 0; r < chosen.size(); ++r) {
            const RankEntry& e = set->ranks()[static_cast<size_t>(r)];
            QVERIFY2(e.ok(), e.error.c_str());
            QCOMPARE(e.summary.rank, r);
            QVERIFY2(QString::fromStdString(e.source.path).endsWith(QLatin1Char('/') + chosen[r]), e.source.path.c_str());
            QCOMPARE(e.summary.peakRequested, counters(r).requestedPeak);
        }
        if (focus == -2) // every rank an OOM dump: the highest peak among them
            focus = -1;
        if (focus == -1)
            focus = counters(1).requestedPeak > counters(0).requestedPeak ? 1 : 0;
        QCOMPARE(set->ranks()[set->focusRank()].summary.rank, focus);
    }

    // `memscope summarize` on each node, then the folder of summaries alone opens as the job
    // with the same figures; a rank loads in full only where its snapshot is.
    void summariesWithoutSnapshots()
    {
        const auto full = RankSet::open(std::vector<std::string>{kRanks.toStdString()});
        QTemporaryDir dir;
        for (const RankEntry& e : full->ranks()) {
            std::ofstream out(dir.filePath(QStringLiteral("rank%1.pickle.summary.json").arg(e.summary.rank)).toStdString());
            out << rankSummaryJson(e.summary);
        }
        const auto set = RankSet::open(std::vector<std::string>{dir.path().toStdString()});
        QCOMPARE(set->size(), full->size());
        for (size_t i = 0; i < set->size(); ++i) {
            const RankSummary& a = full->ranks()[i].summary;
            const RankSummary& b = set->ranks()[i].summary;
            QCOMPARE(b.rank, a.rank);
            QCOMPARE(b.peakRequested, a.peakRequested);
            QCOMPARE(b.peakReserved, a.peakReserved);
            QCOMPARE(b.peakPhase, a.peakPhase);
            QCOMPARE(b.collectiveAtPeak, a.collectiveAtPeak);
            QCOMPARE(b.timeline.size(), a.timeline.size());
            QCOMPARE(b.timeline.back().high, a.timeline.back().high);
            QVERIFY(!set->ranks()[i].canLoad());
        }
        QVERIFY_THROWS_EXCEPTION(std::runtime_error, set->load(0));
        // ...and with rank 1's snapshot next to its summary, rank 1 opens in full.
        QVERIFY(place(dir.path(), 1, QStringLiteral("rank1.pickle")));
        const auto both = RankSet::open(std::vector<std::string>{dir.path().toStdString()});
        QVERIFY(!both->ranks()[0].canLoad());
        QVERIFY(both->ranks()[1].canLoad());
        QCOMPARE(both->load(1)->replay->devices[1].peakRequested.bytes, counters(1).requestedPeak);
    }

    void badSummary_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("message");
        QTest::newRow("not json") << "{"
                                  << "not JSON";
        QTest::newRow("other json") << "{\"devices\": []}"
                                    << "memscope_rank_summary: missing";
        QTest::newRow("wrong type") << "{\"memscope_rank_summary\": 1, \"rank\": \"one\"}"
                                    << "rank: expected an integer";
        // A real summary with its timeline cut short or spoiled.
        QTest::newRow("timeline cut") << QString::fromStdString(realSummaryWithTimeline("0 0 5"))
                                      << "expected four numbers a column, got 3";
        QTest::newRow("timeline spoiled") << QString::fromStdString(realSummaryWithTimeline("0 0 5 x"))
                                          << "byte 6 of it is not one";
    }
    void badSummary()
    {
        QFETCH(QString, text);
        QFETCH(QString, message);
        try {
            (void)parseRankSummary(text.toStdString(), "x.summary.json");
            QFAIL("no error");
        } catch (const LoadError& e) {
            QVERIFY2(QString::fromUtf8(e.what()).contains(QStringLiteral("x.summary.json")), e.what());
            QVERIFY2(QString::fromUtf8(e.what()).contains(message), e.what());
        }
        // In a job, the bad rank keeps its error and the others open.
        QTemporaryDir dir;
        QVERIFY(place(dir.path(), 0, QStringLiteral("rank0.pickle")));
        QFile f(dir.filePath(QStringLiteral("rank1.summary.json")));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(text.toUtf8());
        f.close();
        const auto set = RankSet::open(std::vector<std::string>{dir.path().toStdString()});
        QCOMPARE(set->size(), size_t(2));
        QVERIFY(set->ranks()[0].ok());
        QVERIFY(!set->ranks()[1].ok());
        QCOMPARE(set->focusRank(), size_t(0));
    }

    void emptyFolder()
    {
        QTemporaryDir dir;
        QVERIFY_THROWS_EXCEPTION(std::runtime_error, RankSet::open(std::vector<std::string>{dir.path().toStdString()}));
        QVERIFY_THROWS_EXCEPTION(std::runtime_error,
                                 RankSet::open(std::vector<std::string>{dir.filePath(QStringLiteral("none")).toStdString()}));
    }

    // One process on two GPUs with an OOM on one of them (tests/data/multi/make_oom_fixtures.py):
    // that device opens first, even where the other has the higher peak (oom0).
    void focusOnOomDevice_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<int>("device");
        QTest::newRow("oom on device 1") << "two_gpus_oom1.pickle" << 1;
        QTest::newRow("oom on device 0, the lower peak") << "two_gpus_oom0.pickle" << 0;
        QTest::newRow("no oom: the higher peak") << "two_gpus.pickle" << 1;
    }
    void focusOnOomDevice()
    {
        QFETCH(QString, file);
        QFETCH(int, device);
        const std::string path = (kMulti + QLatin1Char('/') + file).toStdString();
        const auto a = analyze(AnalysisSource::file(path));
        QCOMPARE(a->deviceCount(), size_t(2));
        QCOMPARE(a->replay->devices[a->focusDevice()].device, device);
        QCOMPARE(a->replay->devices[a->deviceIndex(std::nullopt)].device, device);
        // diagnose lists the focus device's findings first.
        const Diagnostics findings = a->findingsFocusFirst();
        QCOMPARE(findings.items.size(), a->diagnosis->items.size());
        QVERIFY(!findings.items.empty());
        QCOMPARE(findings.items.front().device, device);
        if (file.contains(QStringLiteral("oom")))
            QVERIFY(findings.first(DiagnosticKind::OutOfMemory, a->focusDevice()) != nullptr);

        const QString f = QString::fromStdString(path);
        CliRun r = runCli({QStringLiteral("summary"), f, QStringLiteral("--json")});
        QCOMPARE(r.exitCode, 0);
        QCOMPARE(QJsonDocument::fromJson(r.out).object().value(QStringLiteral("focus_device")).toInt(), device);
        r = runCli({QStringLiteral("diagnose"), f});
        QCOMPARE(r.exitCode, 0);
        const QByteArray firstFinding = r.out.mid(r.out.indexOf("\n["));
        QVERIFY2(firstFinding.contains(QStringLiteral("] device %1 ").arg(device).toUtf8()) &&
                     firstFinding.indexOf(QStringLiteral("] device %1 ").arg(device).toUtf8()) < firstFinding.indexOf("\n", 1),
                 r.out.constData());
        r = runCli({QStringLiteral("diagnose"), f, QStringLiteral("--json")});
        QCOMPARE(QJsonDocument::fromJson(r.out).array().first().toObject().value(QStringLiteral("device")).toInt(), device);
        QTemporaryDir out;
        r = runCli({QStringLiteral("report"), f, QStringLiteral("--out"), out.path()});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        QCOMPARE(readJson(out.filePath(QStringLiteral("report.json"))).value(QStringLiteral("device")).toInt(), device);
    }

    // The CLI: summary of a folder and of files named one by one, and summarize.
    void cli()
    {
        CliRun r = runCli({QStringLiteral("summary"), kRanks, QStringLiteral("--json")});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        QJsonObject job = QJsonDocument::fromJson(r.out).object();
        QCOMPARE(job.value(QStringLiteral("ranks_count")).toInt(), 2);
        const QJsonArray ranks = job.value(QStringLiteral("ranks")).toArray();
        for (int k = 0; k < 2; ++k) {
            const QJsonObject o = ranks[k].toObject();
            QCOMPARE(o.value(QStringLiteral("rank")).toInt(), k);
            QCOMPARE(o.value(QStringLiteral("peak_requested_bytes")).toInteger(), counters(k).requestedPeak);
            QCOMPARE(o.value(QStringLiteral("peak_reserved_bytes")).toInteger(), counters(k).reservedPeak);
            QVERIFY(o.value(QStringLiteral("communication_at_peak_bytes")).toInteger() > 0);
        }
        r = runCli({QStringLiteral("summary"), kRanks + QStringLiteral("/ddp_rank1.pickle"),
                    kRanks + QStringLiteral("/ddp_rank0.pickle"), QStringLiteral("--json")});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        QCOMPARE(QJsonDocument::fromJson(r.out)
                     .object()
                     .value(QStringLiteral("ranks"))
                     .toArray()[0]
                     .toObject()
                     .value(QStringLiteral("rank"))
                     .toInt(),
                 0);

        QTemporaryDir dir;
        for (int k = 0; k < 2; ++k) {
            r = runCli({QStringLiteral("summarize"), kRanks + QStringLiteral("/ddp_rank%1.pickle").arg(k), QStringLiteral("-o"),
                        dir.filePath(QStringLiteral("ddp_rank%1.pickle.summary.json").arg(k))});
            QVERIFY2(r.exitCode == 0, r.err.constData());
        }
        r = runCli({QStringLiteral("summary"), dir.path(), QStringLiteral("--json")});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const QJsonArray fromSummaries = QJsonDocument::fromJson(r.out).object().value(QStringLiteral("ranks")).toArray();
        QCOMPARE(fromSummaries.size(), 2);
        for (int k = 0; k < 2; ++k)
            QCOMPARE(fromSummaries[k].toObject().value(QStringLiteral("peak_requested_bytes")).toInteger(),
                     counters(k).requestedPeak);
        r = runCli({QStringLiteral("summary"), kRanks, QStringLiteral("--device"), QStringLiteral("1")});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains("--device is for one file"), r.err.constData());
        r = runCli({QStringLiteral("summarize"), kRanks + QStringLiteral("/ddp_rank0.pickle")});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains("usage: memscope summarize"), r.err.constData());
    }
};

QTEST_GUILESS_MAIN(TestJob)
#include "tst_job.moc"
