#include "attribute/attributor.h"
#include "diagnose/diagnoser.h"
#include "io/diagnostics_json.h"
#include "query/point_report.h"
#include "diagnose/growth_detector.h"
#include "diagnose/repeated_passes.h"
#include "replay/replay.h"
#include "snapshot/snapshot_reader.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSet>
#include <QTest>

#include <algorithm>

using namespace memscope;

namespace {

struct Analysed {
    std::shared_ptr<const Attribution> attribution;
    std::unique_ptr<FrameClassifier> frames;
    std::shared_ptr<const DiagnosisResult> result;

    const Replay& replay() const { return *attribution->replay; }
    const Snapshot& snapshot() const { return *attribution->replay->snapshot; }
    DeviceContext context(size_t i = 0) const
    {
        return DeviceContext{snapshot(), snapshot().devices.at(i), replay().devices.at(i), attribution->devices.at(i), *frames,
                             i};
    }
};

Analysed analyse(const QString& path)
{
    Analysed a;
    a.attribution = attribute(replaySnapshot(readSnapshotFile(path.toStdString())));
    a.frames = std::make_unique<FrameClassifier>(a.snapshot());
    a.result = diagnose(*a.attribution, *a.frames);
    return a;
}

QString sample(const char* name) { return QStringLiteral(MEMSCOPE_SAMPLES_DIR "/%1.pickle").arg(QLatin1String(name)); }

// Every real snapshot: samples/, tests/data/oracle/, tests/data/real/.
QStringList allPickles()
{
    QStringList out;
    for (const QString& dirPath : {QStringLiteral(MEMSCOPE_SAMPLES_DIR), QStringLiteral(MEMSCOPE_TESTDATA_DIR "/oracle"),
                                   QStringLiteral(MEMSCOPE_TESTDATA_DIR "/real")}) {
        const QDir dir(dirPath);
        for (const QString& f : dir.entryList({QStringLiteral("*.pickle")}, QDir::Files, QDir::Name))
            out << dir.filePath(f);
    }
    return out;
}

QJsonObject statsOf(const QString& pickle)
{
    QString base = pickle;
    base.chop(int(strlen(".pickle")));
    QFile f(base + QStringLiteral(".stats.json"));
    if (!f.open(QIODevice::ReadOnly))
        return {};
    return QJsonDocument::fromJson(f.readAll()).object();
}

// The allocs whose innermost frame of the program's own file is `file:line`: one per pass
// of the recorded loops (the batch creation line).
std::vector<int64_t> allocsAtLine(const Snapshot& s, const DeviceTrace& t, const char* file, int line)
{
    std::vector<int64_t> out;
    const EventTable& ev = t.events;
    for (size_t i = 0; i < ev.count(); ++i) {
        if (ev.action[i] != Action::Alloc || !ev.stack[i].valid())
            continue;
        for (FrameId f : s.stacks.frames(ev.stack[i])) {
            const Frame& fr = s.frames.frame(f);
            if (s.str(fr.filename).ends_with(file)) {
                if (fr.line == line)
                    out.push_back(static_cast<int64_t>(i));
                break;
            }
        }
    }
    return out;
}

// Truth for growth, computed without core/diagnose: the live bytes just before the same
// statement of consecutive passes; the median of the steps after the first (warm-up) one.
int64_t trueRetainedPerStep(const DeviceReplay& d, const std::vector<int64_t>& marks)
{
    std::vector<int64_t> steps;
    for (size_t k = 1; k + 1 < marks.size(); ++k)
        steps.push_back(d.requestedAfter(marks[k + 1] - 1) - d.requestedAfter(marks[k] - 1));
    std::sort(steps.begin(), steps.end());
    return steps.empty() ? 0 : steps[steps.size() / 2];
}

bool isLeakRun(const QString& name) { return name == QLatin1String("loss_leak") || name == QLatin1String("generate_keep"); }

} // namespace

class TestDiagnose : public QObject {
    Q_OBJECT
private slots:
    // loss_leak keeps every loss (and its graph), generate_keep its logits: memory grows by
    // the same amount every pass; the finding must say how much within 10%, and where.
    void growthIsMeasured_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<int>("markLine"); // the loop's first statement (the batch)
        QTest::addColumn<int>("passes");
        QTest::addColumn<QString>("site"); // the statement that keeps the tensors
        QTest::newRow("loss_leak") << sample("loss_leak") << 74 << 6 << QStringLiteral("train.py:75 loss_leak");
        QTest::newRow("generate_keep") << sample("generate_keep") << 87 << 4 << QStringLiteral("train.py:88 generate_keep");
    }
    void growthIsMeasured()
    {
        QFETCH(QString, file);
        QFETCH(int, markLine);
        QFETCH(int, passes);
        QFETCH(QString, site);
        const Analysed a = analyse(file);
        const DeviceReplay& d = a.replay().devices.at(0);
        const auto marks = allocsAtLine(a.snapshot(), a.snapshot().devices.at(0), "train.py", markLine);
        QCOMPARE(int(marks.size()), passes);
        const int64_t truth = trueRetainedPerStep(d, marks);
        QVERIFY(truth > 0);

        const Diagnostic* g = a.result->first(DiagnosticKind::Growth);
        QVERIFY2(g, "no growth finding");
        qInfo("%s: %lld bytes per iteration, truth %lld (%.2f%%); %s", qPrintable(QFileInfo(file).baseName()),
              static_cast<long long>(g->bytesPerIteration), static_cast<long long>(truth),
              100.0 * double(g->bytesPerIteration - truth) / double(truth), g->message.c_str());
        QVERIFY2(std::llabs(g->bytesPerIteration - truth) * 10 <= truth, "more than 10% from the true retained bytes");
        QCOMPARE(g->iterations, passes);
        QVERIFY(g->severity >= Severity::Warning);
        QVERIFY(QString::fromStdString(g->message).contains(site));
        // Evidence: retained allocations, each alive at the end, their call sites by bytes.
        QVERIFY(!g->allocations.empty());
        QVERIFY(!g->sites.empty());
        for (AllocationId id : g->allocations)
            QVERIFY(d.allocation(id).activeAfter(d.eventCount - 1));
        for (size_t i = 1; i < g->sites.size(); ++i)
            QVERIFY(g->sites[i - 1].bytes >= g->sites[i].bytes);
        // The figure and the field agree.
        QCOMPARE(g->figure("bytes_per_iteration")->value, g->bytesPerIteration);

        // The same from the passes found in the stacks alone (without the attribution's iterations).
        const auto found = findRepeatedPasses(a.snapshot(), a.snapshot().devices.at(0));
        QCOMPARE(int(found.size()), passes);
        for (size_t k = 0; k < found.size(); ++k) {
            QVERIFY(found[k].firstEvent <= marks[k]);
            QVERIFY(found[k].lastEvent >= marks[k]);
        }
        const auto g2 = detectGrowth(a.context(), found);
        QVERIFY(g2.has_value());
        QVERIFY2(std::llabs(g2->bytesPerIteration - truth) * 10 <= truth, "stack passes: more than 10% off");
    }

    // No other real run grows: healthy training (llm_bs16, llm_bs2_cpp, many_small), the
    // labelled CNN/MLP/AMP/checkpointing runs, no_grad inference loops, a late start, a ring
    // buffer that lost its start, expandable segments.
    void noGrowthElsewhere_data()
    {
        QTest::addColumn<QString>("file");
        for (const QString& f : allPickles())
            if (!isLeakRun(QFileInfo(f).baseName()))
                QTest::newRow(qPrintable(QFileInfo(f).baseName())) << f;
    }
    void noGrowthElsewhere()
    {
        QFETCH(QString, file);
        const Analysed a = analyse(file);
        const Diagnostic* g = a.result->first(DiagnosticKind::Growth);
        QVERIFY2(!g, g ? g->message.c_str() : "");
        // Live memory really is flat from the second iteration on where the run trained.
        const DeviceAttribution& at = a.attribution->devices.at(0);
        const DeviceReplay& d = a.replay().devices.at(0);
        const bool trains = std::find(at.eventPhase.begin(), at.eventPhase.end(), Phase::OptimizerStep) != at.eventPhase.end();
        if (at.iterations.size() >= 3 && trains) {
            const int64_t l1 = d.requestedAfter(at.iterations[1].firstEvent - 1);
            const int64_t ln = d.requestedAfter(at.iterations.back().firstEvent - 1);
            QVERIFY(std::llabs(ln - l1) <= (int64_t{1} << 20));
        }
    }

    // Forward passes with no backward that keep their graph: the two leaking runs. Not the
    // no_grad inference loops, not training.
    void missingNoGrad_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<bool>("expected");
        for (const QString& f : allPickles()) {
            const QString name = QFileInfo(f).baseName();
            QTest::newRow(qPrintable(name)) << f << isLeakRun(name);
        }
    }
    void missingNoGrad()
    {
        QFETCH(QString, file);
        QFETCH(bool, expected);
        const Analysed a = analyse(file);
        const Diagnostic* n = a.result->first(DiagnosticKind::MissingNoGrad);
        QVERIFY2(bool(n) == expected, n ? n->message.c_str() : "not flagged");
        if (!n)
            return;
        // The kept tensors are alive after the last allocation of their pass and come from many call sites.
        QVERIFY(n->allocations.size() >= 8);
        QVERIFY(n->sites.size() >= 4);
        const DeviceAttribution& at = a.attribution->devices.at(0);
        QVERIFY(std::find(at.eventPhase.begin(), at.eventPhase.end(), Phase::Backward) == at.eventPhase.end());
    }

    // release: torch.cuda.empty_cache() handed back the 256 MiB segment the model's weight had used.
    void cacheHandedBack()
    {
        const Analysed a = analyse(sample("release"));
        const EventTable& ev = a.snapshot().devices.at(0).events;
        int64_t segmentFrees = 0;
        int64_t firstFree = -1;
        for (size_t i = 0; i < ev.count(); ++i)
            if (ev.action[i] == Action::SegmentFree) {
                segmentFrees += static_cast<int64_t>(ev.size[i]);
                if (firstFree < 0)
                    firstFree = static_cast<int64_t>(i);
            }
        QCOMPARE(segmentFrees, int64_t{268435456});
        const Diagnostic* c = a.result->first(DiagnosticKind::CacheReleased);
        QVERIFY(c);
        QCOMPARE(c->bytes, segmentFrees);
        QCOMPARE(c->event, firstFree);
        const DeviceReplay& d = a.replay().devices.at(0);
        QCOMPARE(c->figure("reserved_before")->value, d.reservedAfter(firstFree - 1));
        QCOMPARE(c->figure("reserved_after")->value, d.reservedAfter(firstFree - 1) - segmentFrees);
        QVERIFY(QString::fromStdString(c->message).contains(QStringLiteral("empty_cache()")));
        QVERIFY(QString::fromStdString(c->message).contains(QStringLiteral("train.py:119")));
        QCOMPARE(c->severity, Severity::Info);
        // No other run hands cache back.
        for (const char* other : {"llm_bs16", "loss_leak", "oom"})
            QVERIFY(!analyse(sample(other)).result->first(DiagnosticKind::CacheReleased));
    }

    // oom: 128 MiB asked while the driver reported 135 GiB free: a per-process cap.
    void oomExplained()
    {
        const Analysed a = analyse(sample("oom"));
        const DeviceReplay& d = a.replay().devices.at(0);
        const EventTable& ev = a.snapshot().devices.at(0).events;
        QCOMPARE(d.oomEvents.size(), size_t{1});
        const int64_t i = d.oomEvents.front().value;
        const auto oom = a.result->ofKind(DiagnosticKind::OutOfMemory);
        QCOMPARE(oom.size(), size_t{1});
        const Diagnostic& o = *oom.front();
        QCOMPARE(o.severity, Severity::Error);
        QCOMPARE(o.event, i);
        QCOMPARE(o.bytes, int64_t{134217728});
        QCOMPARE(o.figure("requested_size")->value, static_cast<int64_t>(ev.size[size_t(i)]));
        QCOMPARE(o.figure("device_free")->value, int64_t{145061183488});
        QCOMPARE(o.figure("reserved")->value, d.reservedAfter(i));
        QCOMPARE(o.figure("live")->value, d.requestedAfter(i));
        QCOMPARE(o.figure("reserved_unused")->value, d.reservedAfter(i) - d.requestedAfter(i));
        QCOMPARE(o.figure("live_tensors")->value, int64_t(d.activeAfter(i).size()));
        // The largest live allocations, largest first: 192 MiB blocks.
        QCOMPARE(o.figure("largest_live")->value, int64_t{201326592});
        QVERIFY(o.allocations.size() == d.activeAfter(i).size());
        for (size_t k = 1; k < o.allocations.size(); ++k)
            QVERIFY(d.allocation(o.allocations[k - 1]).size >= d.allocation(o.allocations[k]).size);
        QCOMPARE(o.sites.size(), size_t{1});
        QCOMPARE(o.sites.front().bytes, d.requestedAfter(i));
        const QString msg = QString::fromStdString(o.message);
        QVERIFY(msg.contains(QStringLiteral("128.00 MiB")));
        QVERIFY(msg.contains(QStringLiteral("cap")));
    }

    // The peak: activation-bound with batch 16, optimizer-bound with batch 2 (the article's lesson).
    void peakBound_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<int>("kind");
        QTest::newRow("llm_bs16") << sample("llm_bs16") << int(DiagnosticKind::ActivationBoundPeak);
        QTest::newRow("oracle_qwen_bs16") << sample("oracle_qwen_bs16") << int(DiagnosticKind::ActivationBoundPeak);
        QTest::newRow("llm_bs2_cpp") << sample("llm_bs2_cpp") << int(DiagnosticKind::OptimizerBoundPeak);
        QTest::newRow("many_small") << sample("many_small") << int(DiagnosticKind::OptimizerBoundPeak);
        QTest::newRow("cnn_bs32") << QStringLiteral(MEMSCOPE_TESTDATA_DIR "/oracle/oracle_cnn_bs32.pickle")
                                  << int(DiagnosticKind::ActivationBoundPeak);
        QTest::newRow("qwen_bs8_ckpt") << QStringLiteral(MEMSCOPE_TESTDATA_DIR "/oracle/oracle_qwen_bs8_ckpt.pickle")
                                       << int(DiagnosticKind::OptimizerBoundPeak);
        // DDP: activations 36% of the peak, but the largest part and 61% of what lies beyond
        // parameters and optimizer state; the message says both
        QTest::newRow("ddp_rank0") << QStringLiteral(MEMSCOPE_TESTDATA_DIR "/ranks/ddp_rank0.pickle")
                                   << int(DiagnosticKind::ActivationBoundPeak);
        QTest::newRow("qwen_infer") << QStringLiteral(MEMSCOPE_TESTDATA_DIR "/oracle/oracle_qwen_infer.pickle")
                                    << int(DiagnosticKind::Peak);
    }
    void peakBound()
    {
        QFETCH(QString, file);
        QFETCH(int, kind);
        const Analysed a = analyse(file);
        int peaks = 0;
        for (DiagnosticKind k : {DiagnosticKind::ActivationBoundPeak, DiagnosticKind::OptimizerBoundPeak, DiagnosticKind::Peak})
            peaks += int(a.result->ofKind(k).size());
        QCOMPARE(peaks, 1);
        const Diagnostic* p = a.result->first(DiagnosticKind(kind));
        QVERIFY(p);
        const DeviceReplay& d = a.replay().devices.at(0);
        QCOMPARE(p->bytes, d.peakRequested.bytes);
        QCOMPARE(p->event, d.peakRequested.event.value);
        QVERIFY(!p->fix.empty());
        if (p->kind == DiagnosticKind::ActivationBoundPeak) // says why: the largest part, and both shares
            QVERIFY2(p->message.find("its largest part (") != std::string::npos &&
                         p->message.find("of what lies beyond parameters and optimizer state)") != std::string::npos,
                     p->message.c_str());
    }

    // The op behind the peak's call sites: in llm_bs16 every activation's user frame is the
    // loop's one line (train.py:61); the op tells them apart (sdpa, linear, silu), and a
    // backward temporary of a stack with no user frame names its autograd node.
    void opTellsCallSitesApart()
    {
        const Analysed a = analyse(sample("llm_bs16"));
        const PointReport r = buildPointReport(*a.attribution, 0, peakEvent(a.replay().devices.at(0)));
        QSet<QString> userFrames, ops;
        bool sdpa = false;
        for (const CallSite& s : r.callSites) {
            if (s.category != Category::Activation)
                continue;
            userFrames << QString::fromStdString(a.frames->frameText(a.frames->topUserFrame(s.stack)));
            const QString op = QString::fromStdString(a.frames->opText(s.stack));
            ops << op;
            sdpa = sdpa || op.startsWith(QStringLiteral("sdpa_attention.py:"));
        }
        QCOMPARE(userFrames.size(), 1); // train.py:61 llm_train
        QVERIFY2(ops.size() >= 4, qPrintable(QStringList(ops.values()).join(QStringLiteral("; "))));
        QVERIFY(sdpa);
        QVERIFY(!ops.contains(QString()));
    }

    // Unused cache: reserved minus in use, from the dump-time segments.
    void unusedCache()
    {
        const Analysed a = analyse(sample("llm_bs16"));
        const Diagnostic* c = a.result->first(DiagnosticKind::UnusedCache);
        QVERIFY(c);
        int64_t reserved = 0, active = 0, largest = 0, freeTotal = 0;
        for (const Segment& s : a.snapshot().segments) {
            reserved += int64_t(s.totalSize);
            for (const Block& b : s.blocks)
                if (b.state == BlockState::Inactive) {
                    freeTotal += int64_t(b.size);
                    largest = std::max(largest, int64_t(b.size));
                } else {
                    active += int64_t(b.size);
                }
        }
        QCOMPARE(c->figure("reserved")->value, reserved);
        QCOMPARE(c->bytes, reserved - active);
        QCOMPARE(c->figure("free_total")->value, freeTotal);
        QCOMPARE(c->figure("largest_free_block")->value, largest);
        QVERIFY(c->figure("empty_cache_returns")->value <= c->bytes);
        QVERIFY(c->figure("empty_cache_returns")->value > 0);
    }

    // report.json's "diagnostics": kind, severity, message, bytes; bytes_per_iteration for growth.
    void json()
    {
        const Analysed a = analyse(sample("loss_leak"));
        const std::string text = diagnosticsToJson(*a.result, a.replay(), *a.frames);
        QJsonParseError err{};
        const QJsonDocument doc = QJsonDocument::fromJson(QByteArray::fromStdString(text), &err);
        QCOMPARE(err.error, QJsonParseError::NoError);
        QVERIFY(doc.isArray());
        const QJsonArray arr = doc.array();
        QCOMPARE(arr.size(), qsizetype(a.result->items.size()));
        bool growth = false;
        for (const QJsonValue& v : arr) {
            const QJsonObject o = v.toObject();
            for (const char* key : {"kind", "severity", "message", "bytes", "fix", "evidence"})
                QVERIFY2(o.contains(QLatin1String(key)), key);
            QVERIFY(diagnosticKindFromName(o.value(QStringLiteral("kind")).toString().toStdString()).has_value());
            if (o.value(QStringLiteral("kind")).toString() == QLatin1String("growth")) {
                growth = true;
                QCOMPARE(qint64(o.value(QStringLiteral("bytes_per_iteration")).toDouble()),
                         qint64(a.result->first(DiagnosticKind::Growth)->bytesPerIteration));
                const QJsonArray sites =
                    o.value(QStringLiteral("evidence")).toObject().value(QStringLiteral("call_sites")).toArray();
                QVERIFY(!sites.isEmpty());
                QCOMPARE(sites.first().toObject().value(QStringLiteral("top_user_frame")).toString(),
                         QStringLiteral("train.py:75 loss_leak"));
            } else {
                QVERIFY(!o.contains(QStringLiteral("bytes_per_iteration")));
            }
        }
        QVERIFY(growth);
        QVERIFY(!diagnosticsText(*a.result, *a.frames).empty());
    }

    // Passes found from the stacks match the number of steps each labelled run made.
    void repeatedPasses_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<int>("passes");
        QTest::newRow("llm_bs16") << sample("llm_bs16") << 3;
        QTest::newRow("llm_bs2_cpp") << sample("llm_bs2_cpp") << 3;
        QTest::newRow("many_small") << sample("many_small") << 40;
        QTest::newRow("linear3") << sample("linear3") << 3;
        for (const QString& f : allPickles()) {
            const QJsonObject stats = statsOf(f);
            if (stats.contains(QStringLiteral("steps")) && stats.value(QStringLiteral("max_entries")).toInt() >= 200000)
                QTest::newRow(qPrintable(QFileInfo(f).baseName())) << f << stats.value(QStringLiteral("steps")).toInt();
        }
        // A ring buffer that kept only the end of the last step: no loop to find, not a model's layers.
        QTest::newRow("overflow_qwen_bs4") << QStringLiteral(MEMSCOPE_TESTDATA_DIR "/real/overflow_qwen_bs4.pickle") << 0;
    }
    void repeatedPasses()
    {
        QFETCH(QString, file);
        QFETCH(int, passes);
        auto replay = replaySnapshot(readSnapshotFile(file.toStdString()));
        const auto found = findRepeatedPasses(*replay->snapshot, replay->snapshot->devices.at(0));
        QCOMPARE(int(found.size()), passes);
        for (size_t k = 1; k < found.size(); ++k)
            QCOMPARE(found[k].firstEvent, found[k - 1].lastEvent + 1);
    }
};

QTEST_GUILESS_MAIN(TestDiagnose)
#include "tst_diagnose.moc"
