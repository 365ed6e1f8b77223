// `memscope estimate`'s what-if options are aliases of `memscope whatif`'s model-level changes
// (docs/ALLOCATOR.md, "One model behind estimate and whatif"): the same peaks, to the byte, on
// the whatif truth recordings; values no change stands for are refused, naming the alias.
#include "support/cli_run.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

using namespace memscope;

namespace {

const QString kDir = QStringLiteral(MEMSCOPE_TESTDATA_DIR "/whatif");

QJsonObject run(const QStringList& args)
{
    const test::CliRun r = test::runCli(QStringLiteral(MEMSCOPE_APP), args);
    if (r.exitCode != 0)
        qWarning("%s: %s", qPrintable(args.join(QLatin1Char(' '))), r.err.constData());
    return r.exitCode == 0 ? QJsonDocument::fromJson(r.out).object() : QJsonObject{};
}

} // namespace

class TstEstimateAliases : public QObject {
    Q_OBJECT

private slots:
    void sameNumbersAsWhatIf_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QStringList>("estimate");
        QTest::addColumn<QStringList>("whatif");
        QTest::addColumn<QString>("options"); // what estimate says it replayed
        const QString llm = QStringLiteral("whatif_llm_base.pickle.gz");
        const QString cnn = QStringLiteral("whatif_cnn_base.pickle.gz");
        QTest::newRow("bytes per param 2 = precision bf16")
            << llm << QStringList{"--what-if-bytes-per-param", "2"} << QStringList{"--precision", "bf16"}
            << QStringLiteral("--precision bf16");
        QTest::newRow("bytes per param 4 on an fp32 run = as recorded")
            << llm << QStringList{"--what-if-bytes-per-param", "4"} << QStringList{"--precision", "fp32"}
            << QStringLiteral("--precision fp32");
        QTest::newRow("states 1 = sgd-momentum")
            << llm << QStringList{"--what-if-states", "1"} << QStringList{"--optimizer", "sgd-momentum"}
            << QStringLiteral("--optimizer sgd-momentum");
        QTest::newRow("states 0 = sgd, cnn") << cnn << QStringList{"--what-if-states", "0"} << QStringList{"--optimizer", "sgd"}
                                             << QStringLiteral("--optimizer sgd");
        QTest::newRow("what-if batch = batch")
            << llm << QStringList{"--recorded-batch", "8", "--what-if-batch", "16"}
            << QStringList{"--recorded-batch", "8", "--batch", "16"} << QStringLiteral("--batch 16 --recorded-batch 8");
        QTest::newRow("what-if seq = seq") << llm << QStringList{"--seq", "256", "--what-if-seq", "512"}
                                           << QStringList{"--recorded-seq", "256", "--seq", "512"}
                                           << QStringLiteral("--seq 512 --recorded-seq 256");
        QTest::newRow("whatif's own options, combined")
            << llm << QStringList{"--checkpoint", "all", "--precision", "amp-bf16", "--what-if-states", "0"}
            << QStringList{"--checkpoint", "all", "--precision", "amp-bf16", "--optimizer", "sgd"}
            << QStringLiteral("--checkpoint all --precision amp-bf16 --optimizer sgd");
        QTest::newRow("accumulate") << llm << QStringList{"--recorded-batch", "8", "--accumulate", "4"}
                                    << QStringList{"--recorded-batch", "8", "--accumulate", "4"}
                                    << QStringLiteral("--accumulate 4");
    }
    void sameNumbersAsWhatIf()
    {
        QFETCH(QString, file);
        QFETCH(QStringList, estimate);
        QFETCH(QStringList, whatif);
        QFETCH(QString, options);
        const QString path = kDir + QLatin1Char('/') + file;
        const QJsonObject e = run(QStringList{QStringLiteral("estimate"), path, QStringLiteral("--json")} + estimate);
        const QJsonObject w = run(QStringList{QStringLiteral("whatif"), path, QStringLiteral("--json")} + whatif);
        QVERIFY(!e.isEmpty() && !w.isEmpty());
        const QJsonObject replayed = e.value(QStringLiteral("replayed_what_if")).toObject();
        QVERIFY(!replayed.isEmpty());
        QCOMPARE(replayed.value(QStringLiteral("whatif_options")).toString(), options);
        for (const char* key : {"requested_peak_bytes", "allocated_peak_bytes", "reserved_peak_bytes"}) {
            const QString k = QLatin1String(key);
            QVERIFY2(w.value(k).toDouble() > 0, key);
            QCOMPARE(replayed.value(k).toDouble(), w.value(k).toDouble());
        }
    }

    void refusedValues_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("message");
        QTest::newRow("states 1.5") << QStringList{"--what-if-states", "1.5"}
                                    << QStringLiteral("--what-if-states is an alias of --optimizer: 2 (adamw), 1 "
                                                      "(sgd-momentum) or 0 (sgd), got '1.5'");
        QTest::newRow("bytes 3") << QStringList{"--what-if-bytes-per-param", "3"}
                                 << QStringLiteral("--what-if-bytes-per-param is an alias of --precision: 4 (fp32) or 2 "
                                                   "(bf16), got '3'");
        QTest::newRow("both") << QStringList{"--what-if-states", "1", "--optimizer", "sgd"}
                              << QStringLiteral("--what-if-states is an alias of --optimizer: give one of them");
        QTest::newRow("precision fp8") << QStringList{"--precision", "fp8"}
                                       << QStringLiteral("--precision takes fp32, bf16, fp16, amp-bf16 or amp-fp16, got 'fp8'");
    }
    void refusedValues()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, message);
        const test::CliRun r = test::runCli(
            QStringLiteral(MEMSCOPE_APP),
            QStringList{QStringLiteral("estimate"), kDir + QStringLiteral("/whatif_llm_base.pickle.gz")} + args);
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains(message.toUtf8()), r.err.constData());
    }
};

QTEST_GUILESS_MAIN(TstEstimateAliases)
#include "tst_estimate_aliases.moc"
