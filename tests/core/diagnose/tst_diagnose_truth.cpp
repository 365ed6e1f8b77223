// The diagnoses on real runs the detectors were not tuned on (tests/data/diagnose/, recorded
// on a GPU by samples/recording/record_diagnose.py), against what each program knew it did
// (NAME.truth.json): a growth finding exactly when the loop keeps memory, its bytes per
// iteration within 10% of torch's own requested_bytes.all.current step to step; missing
// no_grad exactly when passes run forward with autograd and no backward; the OOM with the
// size torch's error names; empty_cache() only where the program called it.
#include "attribute/attributor.h"
#include "diagnose/diagnoser.h"
#include "snapshot/frame_classifier.h"
#include "replay/replay.h"
#include "snapshot/snapshot_reader.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QTest>

#include <algorithm>

using namespace memscope;

namespace {

QString dataDir() { return QStringLiteral(MEMSCOPE_TESTDATA_DIR "/diagnose"); }

QJsonObject truthOf(const QString& name)
{
    QFile f(dataDir() + QLatin1Char('/') + name + QStringLiteral(".truth.json"));
    if (!f.open(QIODevice::ReadOnly))
        return {};
    return QJsonDocument::fromJson(f.readAll()).object();
}

// The steady growth: the median step-to-step change of torch's requested bytes after the
// first (warm-up) step.
qint64 trueGrowth(const QJsonObject& truth)
{
    std::vector<qint64> steps;
    const QJsonArray a = truth.value(QStringLiteral("retained_per_step")).toArray();
    for (qsizetype i = 1; i < a.size(); ++i)
        steps.push_back(a.at(i).toInteger());
    if (steps.empty())
        return 0;
    std::sort(steps.begin(), steps.end());
    return steps[steps.size() / 2];
}

} // namespace

class TestDiagnoseTruth : public QObject {
    Q_OBJECT
private slots:
    void matchesTheProgram_data()
    {
        QTest::addColumn<QString>("name");
        const QDir dir(dataDir());
        const auto files = dir.entryList({QStringLiteral("*.truth.json")}, QDir::Files, QDir::Name);
        for (const QString& f : files) {
            const QString name = f.left(f.size() - int(strlen(".truth.json")));
            QTest::newRow(qPrintable(name)) << name;
        }
        QVERIFY(files.size() >= 8);
    }
    void matchesTheProgram()
    {
        QFETCH(QString, name);
        const QJsonObject truth = truthOf(name);
        QVERIFY(!truth.isEmpty());
        const auto attribution = attribute(
            replaySnapshot(readSnapshotFile((dataDir() + QLatin1Char('/') + name + ".pickle").toStdString())));
        const FrameClassifier frames(*attribution->replay->snapshot);
        const auto result = diagnose(*attribution, frames);
        for (const Diagnostic& d : result->items)
            qInfo("%s %s", diagnosticKindName(d.kind).data(), d.message.c_str());

        const Diagnostic* growth = result->first(DiagnosticKind::Growth);
        QCOMPARE(growth != nullptr, truth.value(QStringLiteral("growth")).toBool());
        if (growth) {
            const qint64 expected = trueGrowth(truth);
            QVERIFY(expected > 0);
            qInfo("growth %lld per iteration, torch says %lld", static_cast<long long>(growth->bytesPerIteration),
                  static_cast<long long>(expected));
            QVERIFY2(std::llabs(growth->bytesPerIteration - expected) * 10 <= expected,
                     "more than 10% from torch's step-to-step requested bytes");
            QCOMPARE(growth->iterations, truth.value(QStringLiteral("steps")).toInt());
            QVERIFY(QString::fromStdString(growth->message).contains(QStringLiteral("record_diagnose.py:")));
        }

        QCOMPARE(result->first(DiagnosticKind::MissingNoGrad) != nullptr,
                 truth.value(QStringLiteral("missing_no_grad")).toBool());

        const Diagnostic* oom = result->first(DiagnosticKind::OutOfMemory);
        QCOMPARE(oom != nullptr, truth.value(QStringLiteral("oom")).toBool());
        if (oom) {
            // torch: "Tried to allocate 96.00 MiB."; memscope formats sizes the same way.
            const auto m = QRegularExpression(QStringLiteral("Tried to allocate ([0-9.]+ [KMG]iB)"))
                               .match(truth.value(QStringLiteral("oom_message")).toString());
            QVERIFY(m.hasMatch());
            QVERIFY2(QString::fromStdString(oom->message).contains(m.captured(1)), oom->message.c_str());
        }

        bool emptyCache = false;
        for (const Diagnostic* d : result->ofKind(DiagnosticKind::CacheReleased))
            emptyCache = emptyCache || d->message.find("empty_cache()") != std::string::npos;
        QCOMPARE(emptyCache, truth.value(QStringLiteral("cache_released")).toBool());

        // One peak finding; "activation-bound" only when saved activations are most of what
        // lies above the parameters and optimizer state.
        int peaks = 0;
        for (DiagnosticKind k : {DiagnosticKind::ActivationBoundPeak, DiagnosticKind::OptimizerBoundPeak, DiagnosticKind::Peak})
            peaks += int(result->ofKind(k).size());
        QCOMPARE(peaks, 1);
        if (const Diagnostic* p = result->first(DiagnosticKind::ActivationBoundPeak)) {
            const qint64 act = p->figure("peak_ACTIVATION")->value;
            const qint64 above = p->bytes - p->figure("peak_PARAMETER")->value - p->figure("peak_OPTIMIZER_STATE")->value;
            QVERIFY2(act * 2 >= above, p->message.c_str());
        }
    }
};

QTEST_GUILESS_MAIN(TestDiagnoseTruth)
#include "tst_diagnose_truth.moc"
