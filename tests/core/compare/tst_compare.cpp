// Two recordings compared (issue 15): the deltas are report.json's to the byte, the axis lines
// the runs up by iteration and phase, and the changes the recordings were made to show are
// found (batch 2 moves the peak to the optimizer step, mixed precision shrinks activations,
// checkpointing moves them to the backward's recomputation). The gate's exit codes through
// the real binary.

#include "analysis/analysis.h"
#include "compare/comparison.h"
#include "compare/comparison_writer.h"
#include "compare/memory_gate.h"
#include "query/point_report.h"
#include "io/report_json_writer.h"

#include "support/cli_run.h"

#include <QDebug>
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>

using namespace memscope;

namespace {

std::string dataFile(const QString& name)
{
    if (name.startsWith(QLatin1String("samples/")))
        return std::string(MEMSCOPE_SAMPLES_DIR) + "/" + name.mid(8).toStdString();
    return std::string(MEMSCOPE_TESTDATA_DIR) + "/compare/" + name.toStdString();
}

// Each file is analysed once for the whole test.
std::shared_ptr<const Analysis> analysisOf(const QString& name)
{
    static std::map<QString, std::shared_ptr<const Analysis>> cache;
    auto& a = cache[name];
    if (!a)
        a = analyze(AnalysisSource::file(dataFile(name)), {.load = {}, .until = AnalysisStage::Attributed});
    return a;
}

std::shared_ptr<const Comparison> comparisonOf(const QString& a, const QString& b)
{
    return compareRuns(analysisOf(a), analysisOf(b));
}

// The file's own report.json, as `memscope report` writes it for the peak.
QJsonObject reportJsonOf(const QString& name)
{
    const auto an = analysisOf(name);
    const size_t index = an->focusDevice();
    const PointReport at = buildPointReport(*an->attribution, index, peakEvent(an->replay->devices[index]));
    const std::string text = reportJson(*an->attribution, at, *an->frames);
    return QJsonDocument::fromJson(QByteArray::fromStdString(text)).object();
}

int64_t cat(const PointReport& p, Category c) { return p.byCategory[static_cast<size_t>(c)]; }

constexpr int64_t GiB = int64_t(1) << 30;

const char* kBs16 = "samples/llm_bs16.pickle";
const char* kBs2 = "llm_bs2.pickle";
const char* kFp32 = "cmp_qwen_bs8_fp32.pickle";
const char* kAmp = "cmp_qwen_bs8_amp.pickle";
const char* kCkpt = "cmp_qwen_bs8_ckpt.pickle";

using test::CliRun;

CliRun runCli(const QStringList& args) { return test::runCli(QStringLiteral(MEMSCOPE_APP), args); }

} // namespace

class TestCompare : public QObject {
    Q_OBJECT

private slots:
    // Every figure of the diff equals the difference of the two files' own report.json, to the byte.
    void deltasAreReportJsonDifferences_data()
    {
        QTest::addColumn<QString>("a");
        QTest::addColumn<QString>("b");
        QTest::newRow("llm_bs16 vs llm_bs2") << kBs16 << kBs2;
        QTest::newRow("fp32 vs amp") << kFp32 << kAmp;
        QTest::newRow("fp32 vs checkpointing") << kFp32 << kCkpt;
        QTest::newRow("llm_bs16 vs llm_bs2_cpp (stacks=all)") << kBs16 << "samples/llm_bs2_cpp.pickle";
    }
    void deltasAreReportJsonDifferences()
    {
        QFETCH(QString, a);
        QFETCH(QString, b);
        const auto c = comparisonOf(a, b);
        const QJsonObject ra = reportJsonOf(a).value("peak").toObject();
        const QJsonObject rb = reportJsonOf(b).value("peak").toObject();
        const QJsonObject d = QJsonDocument::fromJson(QByteArray::fromStdString(comparisonJson(*c))).object();
        // "a" and "b" hold each file's report.json "peak" object, field for field.
        QCOMPARE(d.value("a").toObject().value("peak").toObject(), ra);
        QCOMPARE(d.value("b").toObject().value("peak").toObject(), rb);
        const QJsonObject delta = d.value("delta").toObject();
        QCOMPARE(delta.value("bytes").toInteger(), rb.value("bytes").toInteger() - ra.value("bytes").toInteger());
        QCOMPARE(c->peakDelta(), rb.value("bytes").toInteger() - ra.value("bytes").toInteger());
        const QJsonObject ca = ra.value("by_category").toObject(), cb = rb.value("by_category").toObject();
        const QJsonObject dc = delta.value("by_category").toObject();
        QCOMPARE(dc.size(), kCategoryCount);
        for (Category k : kAllCategories) {
            const QString name = QString::fromLatin1(categoryName(k).data(), static_cast<qsizetype>(categoryName(k).size()));
            const qint64 expected = cb.value(name).toInteger() - ca.value(name).toInteger();
            QCOMPARE(dc.value(name).toInteger(), expected);
            QCOMPARE(c->categoryDelta(k), expected);
        }
        // The CSV's rows carry the same numbers.
        std::ostringstream csv;
        writeComparisonCsv(csv, *c);
        QVERIFY(csv.str().find("peak,requested," + std::string(phaseName(c->a().peak.phase)) + "," +
                               std::string(phaseName(c->b().peak.phase)) + "," + std::to_string(c->a().peak.requested) + "," +
                               std::to_string(c->b().peak.requested) + "," + std::to_string(c->peakDelta()) + "\n") !=
                std::string::npos);
    }

    // Batch 2: the activations no longer dominate, so the peak moves to the optimizer step.
    void batchTwoMovesThePeakToTheOptimizerStep()
    {
        const auto c = comparisonOf(kBs16, kBs2);
        QVERIFY2(c->a().peak.phase == Phase::Forward || c->a().peak.phase == Phase::Backward,
                 phaseName(c->a().peak.phase).data());
        QCOMPARE(c->b().peak.phase, Phase::OptimizerStep);
        QVERIFY(c->peakDelta() < 0);
        QVERIFY(cat(c->a().peak, Category::Activation) > 3 * GiB);
        // The optimizer's peak itself hardly moved: the model is the same.
        const PhasePeak& sa = c->a().phases[static_cast<size_t>(Phase::OptimizerStep)];
        const PhasePeak& sb = c->b().phases[static_cast<size_t>(Phase::OptimizerStep)];
        QVERIFY(sa.present && sb.present);
        QVERIFY(std::abs(sb.bytes - sa.bytes) < (int64_t(1) << 20));
        QCOMPARE(sb.event, c->b().peak.event);
    }

    // bf16 autocast: activations shrink, at the peak and in the forward's peak.
    void mixedPrecisionShrinksActivations()
    {
        const auto c = comparisonOf(kFp32, kAmp);
        QVERIFY(c->categoryDelta(Category::Activation) < -256 * (int64_t(1) << 20));
        const auto fwd = static_cast<size_t>(Phase::Forward), act = static_cast<size_t>(Category::Activation);
        QVERIFY(c->b().phases[fwd].byCategory[act] < c->a().phases[fwd].byCategory[act]);
        QVERIFY(c->b().allocated[fwd][act] < c->a().allocated[fwd][act]);
        // The weights and Adam's state are fp32 in both.
        QCOMPARE(c->categoryDelta(Category::Parameter), int64_t(0));
        QCOMPARE(c->categoryDelta(Category::OptimizerState), int64_t(0));
    }

    // Checkpointing: the forward keeps almost no activations; the backward recomputes them.
    void checkpointingMovesActivationsToTheBackward()
    {
        const auto c = comparisonOf(kFp32, kCkpt);
        const auto fwd = static_cast<size_t>(Phase::Forward), bwd = static_cast<size_t>(Phase::Backward);
        const auto act = static_cast<size_t>(Category::Activation);
        const int64_t forwardActivationsGone = c->a().allocated[fwd][act] - c->b().allocated[fwd][act];
        QVERIFY(forwardActivationsGone > GiB);
        QVERIFY(c->b().allocated[fwd][act] * 10 < c->a().allocated[fwd][act]);
        // What the forward no longer keeps, the backward allocates again (and more: its own temporaries).
        QVERIFY(c->b().allocatedIn(Phase::Backward) - c->a().allocatedIn(Phase::Backward) >= forwardActivationsGone);
        QVERIFY(c->b().phases[bwd].byCategory[act] * 10 < c->a().phases[bwd].byCategory[act]);
        QVERIFY(cat(c->b().peak, Category::Activation) < cat(c->a().peak, Category::Activation));
    }

    // The axis: iteration k's phases start at the same x in both runs, never going back, and
    // the binned curves keep each run's peak.
    void axisAlignsIterationsAndPhases_data()
    {
        QTest::addColumn<QString>("file");
        for (const char* f : {kBs16, kBs2, kFp32, kAmp, kCkpt})
            QTest::newRow(f) << f;
    }
    void axisAlignsIterationsAndPhases()
    {
        QFETCH(QString, file);
        const auto an = analysisOf(file);
        const size_t index = an->focusDevice();
        const DeviceAttribution& a = an->attribution->devices[index];
        const AlignedAxis axis = alignEvents(a, an->replay->devices[index].eventCount);
        QCOMPARE(axis.iterations, 3);
        for (size_t i = 1; i < axis.position.size(); ++i)
            QVERIFY(axis.position[i] >= axis.position[i - 1]);
        for (const Iteration& it : a.iterations) {
            for (const PhaseRange& r : it.phases)
                if (r.phase == Phase::Forward) {
                    QCOMPARE(axis.position[static_cast<size_t>(r.firstEvent)], it.index + alignedPhaseOffset(Phase::Forward));
                    break;
                }
            QVERIFY(axis.position[static_cast<size_t>(it.lastEvent)] < it.index + 1);
            QVERIFY(axis.position[static_cast<size_t>(it.firstEvent)] >= it.index);
        }
        const auto c = compareRuns(an, an);
        int64_t highest = 0;
        for (size_t b = 0; b < c->curves.bins; ++b) {
            highest = std::max(highest, c->curves.total[0][b]);
            int64_t sum = 0;
            for (size_t k = 0; k < kCategoryCount; ++k)
                sum += c->curves.byCategory[0][k][b];
            QCOMPARE(sum, c->curves.total[0][b]); // categories add up to the total in every bin
            QCOMPARE(c->curves.deltaTotal(b), int64_t(0));
        }
        QCOMPARE(highest, c->a().peak.requested);
    }

    // A run against itself: nothing changes, every allocation at the peak is matched.
    void runAgainstItselfChangesNothing()
    {
        const auto c = comparisonOf(kFp32, kFp32);
        QCOMPARE(c->peakDelta(), int64_t(0));
        QVERIFY(!c->sites.empty());
        int64_t matched = 0;
        for (const CallSiteDelta& s : c->sites) {
            QCOMPARE(s.change, SiteChange::Same);
            QCOMPARE(s.matched, s.countA);
            matched += s.matched;
        }
        QCOMPARE(matched, static_cast<int64_t>(c->a().peak.live.size()));
    }

    // Call sites match across files by stack text; llm_bs2 was recorded by another script
    // (record_oracle.py, not train.py): its library calls still match llm_bs16's.
    void callSitesMatchAcrossFiles()
    {
        const auto c = comparisonOf(kBs16, kBs2);
        bool parametersMatched = false;
        int64_t sum = 0;
        for (const CallSiteDelta& s : c->sites) {
            sum += s.delta();
            if (s.category == Category::Parameter && s.matched > 0 && s.change == SiteChange::Same)
                parametersMatched = true;
        }
        QVERIFY(parametersMatched); // the same weights at the same sizes in both
        QCOMPARE(sum, c->peakDelta()); // the sites' deltas add up to the peak's
    }

    // The sites of one user line read apart (issue 29): in the Qwen2 runs every activation
    // comes from the loop's model call (record_oracle.py:86), so their user frames, and the
    // stack summaries of sites that differ only inside the model, repeat; their op and module
    // path tell them apart, on both pairs of real transformers recordings.
    void sitesOfOneUserLineReadApart_data()
    {
        QTest::addColumn<QString>("a");
        QTest::addColumn<QString>("b");
        QTest::newRow("fp32 vs bf16 autocast") << kFp32 << kAmp;
        QTest::newRow("fp32 vs checkpointing") << kFp32 << kCkpt;
    }
    void sitesOfOneUserLineReadApart()
    {
        QFETCH(QString, a);
        QFETCH(QString, b);
        const auto c = comparisonOf(a, b);
        std::map<std::string, std::vector<const CallSiteDelta*>> byUserFrame;
        for (const CallSiteDelta& s : c->sites)
            if (s.countA || s.countB) // live at either peak: the table's rows
                byUserFrame[s.topFrame].push_back(&s);
        const auto loop = std::max_element(byUserFrame.begin(), byUserFrame.end(),
                                           [](const auto& x, const auto& y) { return x.second.size() < y.second.size(); });
        QCOMPARE(QString::fromStdString(loop->first), QStringLiteral("record_oracle.py:86 <lambda>"));
        const auto& sites = loop->second;
        QVERIFY(sites.size() >= 20);
        std::set<std::string> summaries, named;
        size_t inModule = 0;
        for (const CallSiteDelta* s : sites) {
            summaries.insert(s->summary);
            // (a site of A not matched in B, q_proj called through checkpoint() in B, reads as
            // A's "removed" and B's "added": the change column tells those two apart)
            if (!named.insert(s->summary + "\n" + s->op + "\n" + s->module + "\n" + siteChangeName(s->change)).second)
                qInfo("reads like another row: %s | %s | %s | key %s", s->summary.c_str(), s->op.c_str(), s->module.c_str(),
                      s->key.c_str());
            inModule += s->module.empty() ? 0 : 1;
        }
        qInfo("%s: %zu sites of the loop's line, %zu distinct stack summaries, %zu with op and module; %zu in a module",
              loop->first.c_str(), sites.size(), summaries.size(), named.size(), inModule);
        QVERIFY(summaries.size() < sites.size()); // the user frames and summaries alone repeat
        QCOMPARE(named.size(), sites.size()); // with the op and the module, no two rows read the same
        QVERIFY(inModule * 10 >= sites.size() * 9);
    }

    void byteSizes_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<qint64>("bytes"); // -1: refused
        QTest::newRow("GiB") << "40GiB" << qint64(40) * GiB;
        QTest::newRow("GB") << "2GB" << qint64(2000000000);
        QTest::newRow("MiB fraction") << "1.5MiB" << qint64(1572864);
        QTest::newRow("KiB") << "4KiB" << qint64(4096);
        QTest::newRow("KB") << "4KB" << qint64(4000);
        QTest::newRow("MB with space") << "3 MB" << qint64(3000000);
        QTest::newRow("B") << "512B" << qint64(512);
        QTest::newRow("bare") << "512" << qint64(512);
        QTest::newRow("lower case") << "1gib" << qint64(GiB);
        QTest::newRow("negative") << "-1GiB" << qint64(-1);
        QTest::newRow("unknown unit") << "5GiBs" << qint64(-1);
        QTest::newRow("no number") << "GiB" << qint64(-1);
        QTest::newRow("empty") << "" << qint64(-1);
        QTest::newRow("percent") << "5%" << qint64(-1);
    }
    void byteSizes()
    {
        QFETCH(QString, text);
        QFETCH(qint64, bytes);
        const auto v = parseByteSize(text.toStdString());
        if (bytes < 0)
            QVERIFY(!v);
        else
            QCOMPARE(v.value_or(-1), bytes);
    }

    // Growth rules on a real comparison: the percentage is of A's figure, exact in bytes.
    void growthRules()
    {
        const auto c = comparisonOf(kBs2, kBs16); // the peak grows 2.61 GiB from 3.04 GiB (+85.6%)
        auto rule = [](GateRule::Kind k, const char* text) { return parseGateRule(k, "--x", text); };
        auto ok = [&](GateRule r) { return checkGrowth(*c, {r}).front().ok; };
        QVERIFY(!ok(rule(GateRule::Kind::PeakGrowth, "5%")));
        QVERIFY(ok(rule(GateRule::Kind::PeakGrowth, "90%")));
        QVERIFY(!ok(rule(GateRule::Kind::PeakGrowth, "2GiB")));
        QVERIFY(ok(rule(GateRule::Kind::PeakGrowth, "3GiB")));
        // Exactly the growth passes; a byte less fails.
        const std::string exact = std::to_string(c->peakDelta());
        QVERIFY(ok(rule(GateRule::Kind::PeakGrowth, exact.c_str())));
        QVERIFY(!ok(rule(GateRule::Kind::PeakGrowth, std::to_string(c->peakDelta() - 1).c_str())));
        // ACTIVATION was 0 at A's peak: any growth fails a percentage.
        QCOMPARE(c->a().peak.byCategory[static_cast<size_t>(Category::Activation)], int64_t(0));
        QVERIFY(!ok(rule(GateRule::Kind::CategoryGrowth, "ACTIVATION=1000%")));
        QVERIFY(ok(rule(GateRule::Kind::CategoryGrowth, "parameter=0%")));
        QVERIFY_THROWS_EXCEPTION(GateRuleError, rule(GateRule::Kind::CategoryGrowth, "WEIGHTS=5%"));
        QVERIFY_THROWS_EXCEPTION(GateRuleError, rule(GateRule::Kind::CategoryGrowth, "5%"));
        QVERIFY_THROWS_EXCEPTION(GateRuleError, rule(GateRule::Kind::MaxPeak, "5%"));
        QVERIFY_THROWS_EXCEPTION(GateRuleError, rule(GateRule::Kind::PeakGrowth, "x%"));
    }

    // ---- the gate through the real binary: 0 all hold, 1 a rule failed, 2 usage or input ----
    void cli_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<int>("exitCode");
        QTest::addColumn<QString>("err"); // stderr contains it ("" = stderr empty)
        QTest::addColumn<QString>("out"); // stdout contains it
        const QString bs16 = QString::fromStdString(dataFile(kBs16));
        const QString bs2 = QString::fromStdString(dataFile(kBs2));
        const QString missing = QDir::tempPath() + QStringLiteral("/memscope_no_such_file.pickle");
        const QString bad = QStringLiteral(MEMSCOPE_TESTDATA_DIR "/not_a_snapshot.pickle");
        auto row = [](const char* name, QStringList args, int code, const QString& err, const QString& out) {
            QTest::newRow(name) << args << code << err << out;
        };
        // check
        row("check passes", {"check", bs16, "--max-peak", "6GiB", "--max-category", "ACTIVATION=4GiB"}, 0, "",
            "ok    peak 5.65 GiB <= 6.00 GiB");
        row("check peak fails", {"check", bs16, "--max-peak=5GiB"}, 1,
            "memscope check: FAIL: peak 5.65 GiB > 5.00 GiB (--max-peak 5GiB)\n", "FAIL  peak");
        row("check category fails", {"check", bs16, "--max-peak", "40GiB", "--max-category", "ACTIVATION=3GB"}, 1,
            "FAIL: ACTIVATION at the peak 3.17 GiB > 2.79 GiB (--max-category ACTIVATION=3GB)", "ok    peak");
        row("check both categories, one fails",
            {"check", bs16, "--max-category", "PARAMETER=1GiB", "--max-category", "OPTIMIZER_STATE=1GiB"}, 1,
            "OPTIMIZER_STATE at the peak", "ok    PARAMETER");
        row("check --json", {"check", bs16, "--max-peak", "5GiB", "--json"}, 1, "FAIL", "\"pass\": false");
        row("check bad size", {"check", bs16, "--max-peak", "40GiBs"}, 2, "--max-peak: '40GiBs' is not a size", "");
        row("check unknown category", {"check", bs16, "--max-category", "WEIGHTS=1GiB"}, 2,
            "--max-category: unknown category 'WEIGHTS'", "");
        row("check category without size", {"check", bs16, "--max-category", "ACTIVATION"}, 2,
            "--max-category takes CATEGORY=SIZE, got 'ACTIVATION'", "");
        row("check no rule", {"check", bs16}, 2, "check needs a rule", "");
        row("check missing file", {"check", missing, "--max-peak", "1GiB"}, 2, "memscope check: " + missing, "");
        row("check not a snapshot", {"check", bad, "--max-peak", "1GiB"}, 2, "memscope check: " + bad, "");
        row("check no such device", {"check", bs16, "--device", "3", "--max-peak", "1GiB"}, 2, "has no device 3", "");
        row("check growth rule", {"check", bs16, "--fail-if-peak-grows", "5%"}, 2, "unknown option '--fail-if-peak-grows'", "");
        row("check --help", {"check", "--help"}, 0, "", "usage: memscope check FILE");
        // diff
        row("diff plain", {"diff", bs16, bs2}, 0, "", "the peak moved from backward to optimizer_step");
        row("diff shrink passes", {"diff", bs16, bs2, "--fail-if-peak-grows", "5%"}, 0, "", "ok    peak grew -2.61 GiB");
        row("diff peak grows", {"diff", bs2, bs16, "--fail-if-peak-grows", "5%"}, 1,
            "memscope diff: FAIL: peak grew +2.61 GiB from 3.04 GiB, over 5% (155.78 MiB) (--fail-if-peak-grows 5%)\n", "");
        row("diff peak grows, size limit", {"diff", bs2, bs16, "--fail-if-peak-grows=1GiB"}, 1, "over 1.00 GiB", "");
        row("diff category grows",
            {"diff", bs2, bs16, "--fail-if-peak-grows", "100%", "--fail-if-category-grows", "ACTIVATION=10%"}, 1,
            "FAIL: ACTIVATION at the peak grew +3.17 GiB from 0 B", "ok    peak grew");
        row("diff category holds", {"diff", bs2, bs16, "--fail-if-category-grows", "PARAMETER=0%"}, 0, "", "ok    PARAMETER");
        row("diff --json with gate", {"diff", bs2, bs16, "--json", "--fail-if-peak-grows", "5%"}, 1, "FAIL", "\"pass\": false");
        row("diff --csv", {"diff", bs16, bs2, "--csv"}, 0, "",
            "section,name,phase_a,phase_b,a,b,delta\npeak,requested,backward,optimizer_step,");
        row("diff bad percent", {"diff", bs16, bs2, "--fail-if-peak-grows", "five%"}, 2, "'five%' is not a percentage", "");
        row("diff bad size", {"diff", bs16, bs2, "--fail-if-peak-grows", "5 parsecs"}, 2, "is not a size", "");
        row("diff unknown category", {"diff", bs16, bs2, "--fail-if-category-grows", "FOO=5%"}, 2, "unknown category 'FOO'", "");
        row("diff one file", {"diff", bs16}, 2, "usage: memscope diff A B", "");
        row("diff three files", {"diff", bs16, bs2, bs2}, 2, "diff takes 2 files, got a further", "");
        row("diff missing file", {"diff", bs16, missing}, 2, "memscope diff: " + missing, "");
        row("diff --json and --csv", {"diff", bs16, bs2, "--json", "--csv"}, 2, "give --json or --csv, not both", "");
        row("diff max rule", {"diff", bs16, bs2, "--max-peak", "1GiB"}, 2, "unknown option '--max-peak'", "");
    }
    void cli()
    {
        QFETCH(QStringList, args);
        QFETCH(int, exitCode);
        QFETCH(QString, err);
        QFETCH(QString, out);
        const CliRun r = runCli(args);
        QVERIFY2(r.exitCode == exitCode,
                 qPrintable(QStringLiteral("exit %1, stderr: %2").arg(r.exitCode).arg(QString::fromUtf8(r.err))));
        if (err.isEmpty()) {
            QVERIFY2(r.err.isEmpty(), r.err.constData());
        } else {
            QVERIFY2(QString::fromUtf8(r.err).contains(err), r.err.constData());
            if (exitCode == 1)
                QCOMPARE(r.err.count('\n'), 1); // a failed rule: one line
        }
        QVERIFY2(QString::fromUtf8(r.out).contains(out), r.out.left(600).constData());
    }

    // diff --json against the report.json files `memscope report` itself writes: "a" and "b"
    // are their "peak" objects, and every delta is the difference of their figures.
    void cliJsonMatchesReportJson()
    {
        QTemporaryDir dir;
        auto reportOf = [&](const char* name) {
            const QString out = dir.filePath(QString::fromLatin1(name));
            const CliRun r = runCli({"report", QString::fromStdString(dataFile(name)), "--out", out});
            if (r.exitCode != 0)
                qWarning() << r.err;
            QFile f(out + "/report.json");
            if (!f.open(QIODevice::ReadOnly))
                return QJsonObject();
            return QJsonDocument::fromJson(f.readAll()).object().value("peak").toObject();
        };
        const QJsonObject ra = reportOf(kBs16), rb = reportOf(kBs2);
        QVERIFY(!ra.isEmpty() && !rb.isEmpty());
        const CliRun r = runCli(
            {"diff", QString::fromStdString(dataFile(kBs16)), QString::fromStdString(dataFile(kBs2)), "--json"});
        QCOMPARE(r.exitCode, 0);
        const QJsonObject d = QJsonDocument::fromJson(r.out).object();
        QCOMPARE(d.value("a").toObject().value("peak").toObject(), ra);
        QCOMPARE(d.value("b").toObject().value("peak").toObject(), rb);
        const QJsonObject delta = d.value("delta").toObject();
        QCOMPARE(delta.value("bytes").toInteger(), rb.value("bytes").toInteger() - ra.value("bytes").toInteger());
        const QJsonObject ca = ra.value("by_category").toObject(), cb = rb.value("by_category").toObject();
        const QJsonObject dc = delta.value("by_category").toObject();
        QCOMPARE(dc.size(), kCategoryCount);
        for (auto it = dc.begin(); it != dc.end(); ++it)
            QCOMPARE(it.value().toInteger(), cb.value(it.key()).toInteger() - ca.value(it.key()).toInteger());
        QCOMPARE(delta.value("peak_phase").toObject().value("b").toString(), QStringLiteral("optimizer_step"));
        QVERIFY(!d.value("call_sites").toObject().value("at_peak").toArray().isEmpty());
        QVERIFY(d.value("a").toObject().value("phases").toObject().value("forward").isObject());
    }
};

QTEST_GUILESS_MAIN(TestCompare)
#include "tst_compare.moc"
