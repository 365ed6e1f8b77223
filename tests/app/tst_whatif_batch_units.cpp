// `memscope whatif`'s batches are in the user's units where the recording's batch is named
// (--recorded-batch), and in recorded batches where it is not: "3x the recorded batch", never a
// bare 3 that reads as three samples (it read so on a batch-16 recording). On the libtorch MLP: its
// plan of 35 rows takes 0.3 s, llm_bs16's 7.5 s on one thread (past the run's 120 s under ASan).
#include "support/cli_run.h"

#include <QRegularExpression>
#include <QtTest>

using namespace memscope;

class TstWhatIfBatchUnits : public QObject {
    Q_OBJECT

private slots:
    void batchesSayTheirUnit_data()
    {
        QTest::addColumn<QStringList>("extra");
        QTest::addColumn<QString>("search"); // the largest batch's line, as a pattern
        QTest::addColumn<bool>("recordedUnits");
        QTest::newRow("unnamed batch") << QStringList{} << QStringLiteral("largest batch that fits: \\d+x the recorded batch;")
                                       << true;
        QTest::newRow("named batch 16") << QStringList{QStringLiteral("--recorded-batch"), QStringLiteral("16")}
                                        << QStringLiteral("largest batch that fits: \\d+;") << false;
    }
    void batchesSayTheirUnit()
    {
        QFETCH(QStringList, extra);
        QFETCH(QString, search);
        QFETCH(bool, recordedUnits);
        const test::CliRun r = test::runCli(QStringLiteral(MEMSCOPE_APP),
                                            QStringList{QStringLiteral("whatif"),
                                                        QStringLiteral(MEMSCOPE_SAMPLES_DIR "/libtorch_mlp.pickle"),
                                                        QStringLiteral("--capacity"), QStringLiteral("1GiB"),
                                                        QStringLiteral("--max-batch"), QStringLiteral("--plan")} +
                                                extra);
        QCOMPARE(r.exitCode, 0);
        const QString out = QString::fromUtf8(r.out);
        QVERIFY2(out.contains(QRegularExpression(search)), qPrintable(out));
        // every plan row names its largest batch in the same unit
        int rows = 0;
        for (const QString& line : out.split(QLatin1Char('\n'))) {
            const qsizetype at = line.indexOf(QStringLiteral("largest batch "));
            if (at < 0 || line.contains(QStringLiteral("that fits")))
                continue;
            ++rows;
            QCOMPARE(line.mid(at).contains(QStringLiteral("x the recorded batch (")), recordedUnits);
        }
        QVERIFY(rows > 5);
    }
};

QTEST_GUILESS_MAIN(TstWhatIfBatchUnits)
#include "tst_whatif_batch_units.moc"
