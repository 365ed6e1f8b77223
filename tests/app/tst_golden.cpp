// Golden outputs: what each headless command prints or writes on real samples, byte for byte,
// against tests/data/golden/SAMPLE.OUTPUT. The binary runs from the source root on a relative
// path, so the outputs that name their input hold what a user would type, the same on every
// machine. A difference fails with a unified diff; when the change is meant, regenerate every
// golden with scripts/update-golden.sh (MEMSCOPE_UPDATE_GOLDEN=1) and review the git diff.
//
// An output larger than kWholeLimit is kept as a digest (SAMPLE.OUTPUT.digest.txt): its size,
// line count, SHA-256, first and last lines, so that the goldens stay small and a diff still
// shows the start of what changed.
#include "support/cli_run.h"
#include "support/golden.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

#include <cstdio>

namespace {

constexpr qsizetype kWholeLimit = 32 * 1024;
constexpr int kDigestHead = 20;
constexpr int kDigestTail = 5;
constexpr int kDiffLines = 200;

QString goldenDir() { return QStringLiteral(MEMSCOPE_GOLDEN_DIR); }

// "name.csv" -> "name.digest.txt"
QString digestName(const QString& name) { return name.left(name.lastIndexOf(QLatin1Char('.'))) + QStringLiteral(".digest.txt"); }

QByteArray digest(const QByteArray& bytes)
{
    QList<QByteArray> lines = bytes.split('\n');
    if (!lines.isEmpty() && lines.last().isEmpty())
        lines.removeLast();
    QByteArray d = "memscope golden digest: the output is too large to keep whole\n";
    d += "bytes: " + QByteArray::number(bytes.size()) + "\n";
    d += "lines: " + QByteArray::number(lines.size()) + "\n";
    d += "sha256: " + QCryptographicHash::hash(bytes, QCryptographicHash::Sha256).toHex() + "\n";
    d += "first " + QByteArray::number(kDigestHead) + " lines:\n";
    for (qsizetype i = 0; i < std::min<qsizetype>(kDigestHead, lines.size()); ++i)
        d += lines[i] + "\n";
    d += "last " + QByteArray::number(kDigestTail) + " lines:\n";
    for (qsizetype i = std::max<qsizetype>(kDigestHead, lines.size() - kDigestTail); i < lines.size(); ++i)
        d += lines[i] + "\n";
    return d;
}

QByteArray readAll(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

// Compares (or, when updating, writes) one output; returns false, after printing the diff,
// when it differs from its golden.
bool matchesGolden(const QString& name, const QByteArray& output)
{
    const bool whole = output.size() <= kWholeLimit;
    const QString path = goldenDir() + QLatin1Char('/') + (whole ? name : digestName(name));
    if (memscope::test::updatingGoldens())
        QFile::remove(goldenDir() + QLatin1Char('/') + (whole ? digestName(name) : name));
    const QString failure = memscope::test::checkGolden(path, whole ? output : digest(output), kDiffLines);
    if (failure.isEmpty())
        return true;
    std::fprintf(stderr, "%s\n", qPrintable(failure));
    return false;
}

using memscope::test::CliRun;

CliRun runApp(const QStringList& args)
{
    return memscope::test::runCli(
        QStringLiteral(MEMSCOPE_APP), args,
        {.workingDirectory = QStringLiteral(MEMSCOPE_SOURCE_DIR), .timeoutMs = 600000, .offscreen = true});
}

struct Row {
    QString name; // the row's name in the test output
    QString file; // the sample, relative to the source root
    QStringList args; // "FILE" stands for the sample
    QString golden; // SAMPLE.OUTPUT; report's files are SAMPLE.report.json, .peak.csv, .timeline.csv
};

// One row per sample and command, and the text forms on a few samples (one per kind of run).
QList<Row> rows()
{
    const QList<std::pair<QString, QString>> samples = {
        {QStringLiteral("llm_bs16"), QStringLiteral("samples/llm_bs16.pickle")},
        {QStringLiteral("llm_bs2_cpp"), QStringLiteral("samples/llm_bs2_cpp.pickle")},
        {QStringLiteral("loss_leak"), QStringLiteral("samples/loss_leak.pickle")},
        {QStringLiteral("oom"), QStringLiteral("samples/oom.pickle")},
        {QStringLiteral("release"), QStringLiteral("samples/release.pickle")},
        {QStringLiteral("many_small"), QStringLiteral("samples/many_small.pickle")},
        {QStringLiteral("libtorch_mlp"), QStringLiteral("samples/libtorch_mlp.pickle")},
        {QStringLiteral("two_gpus"), QStringLiteral("tests/data/multi/two_gpus.pickle")},
    };
    const QString file = QStringLiteral("FILE");
    const QList<std::pair<QStringList, QString>> commands = {
        {{QStringLiteral("summary"), file, QStringLiteral("--json")}, QStringLiteral("summary.json")},
        {{QStringLiteral("diagnose"), file, QStringLiteral("--json")}, QStringLiteral("diagnose.json")},
        {{QStringLiteral("estimate"), file, QStringLiteral("--json")}, QStringLiteral("estimate.json")},
        {{QStringLiteral("allocations"), file, QStringLiteral("--csv"), QStringLiteral("-")}, QStringLiteral("allocations.csv")},
        {{QStringLiteral("report"), file}, QStringLiteral("report")},
    };
    const QList<std::pair<QStringList, QString>> textCommands = {
        {{QStringLiteral("summary"), file}, QStringLiteral("summary.txt")},
        {{QStringLiteral("diagnose"), file}, QStringLiteral("diagnose.txt")},
        {{QStringLiteral("estimate"), file}, QStringLiteral("estimate.txt")},
    };
    QList<Row> out;
    for (const auto& [name, path] : samples)
        for (const auto& [args, golden] : commands)
            out.append({name + QLatin1Char(' ') + golden, path, args, name + QLatin1Char('.') + golden});
    for (const auto& [name, path] : {samples[0], samples[2], samples[7]})
        for (const auto& [args, golden] : textCommands)
            out.append({name + QLatin1Char(' ') + golden, path, args, name + QLatin1Char('.') + golden});
    return out;
}

// The files a row's output goes to, whole.
QStringList goldenNames(const Row& row)
{
    if (row.args.first() == QLatin1String("report"))
        return {row.golden + QStringLiteral(".json"), row.golden + QStringLiteral(".peak.csv"),
                row.golden + QStringLiteral(".timeline.csv")};
    return {row.golden};
}

} // namespace

class TestGolden : public QObject {
    Q_OBJECT
private slots:
    void outputs_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("golden");
        for (const Row& row : rows())
            QTest::newRow(qPrintable(row.name)) << row.file << row.args << row.golden;
    }
    void outputs()
    {
        QFETCH(QString, file);
        QFETCH(QStringList, args);
        QFETCH(QString, golden);
        args.replaceInStrings(QRegularExpression(QStringLiteral("^FILE$")), file);
        const bool report = args.first() == QLatin1String("report");
        QTemporaryDir out;
        QVERIFY(out.isValid());
        if (report)
            args << QStringLiteral("--out") << out.path();
        const CliRun r = runApp(args);
        QVERIFY2(r.exitCode == 0, qPrintable(QStringLiteral("memscope %1 exited with %2: %3")
                                                 .arg(args.join(QLatin1Char(' ')))
                                                 .arg(r.exitCode)
                                                 .arg(QString::fromUtf8(r.err))));
        QList<std::pair<QString, QByteArray>> outputs;
        if (report) {
            const QStringList names = goldenNames({{}, file, args, golden});
            outputs = {{names[0], readAll(out.filePath(QStringLiteral("report.json")))},
                       {names[1], readAll(out.filePath(QStringLiteral("peak_report.csv")))},
                       {names[2], readAll(out.filePath(QStringLiteral("timeline.csv")))}};
        } else {
            QVERIFY2(r.err.isEmpty(), r.err.constData());
            outputs = {{golden, r.out}};
        }
        bool same = true;
        for (const auto& [name, bytes] : outputs) {
            QVERIFY2(!bytes.isEmpty(), qPrintable(name));
            same = matchesGolden(name, bytes) && same;
        }
        QVERIFY2(same, "the output differs from its golden (diff above); if the change is meant, run "
                       "scripts/update-golden.sh and review the goldens' git diff");
    }

    // Every file in tests/data/golden/ belongs to a row (a row dropped or renamed leaves none
    // behind); updating deletes the others.
    void noStrayGoldens()
    {
        QSet<QString> known;
        for (const Row& row : rows())
            for (const QString& name : goldenNames(row))
                known << name << digestName(name);
        QStringList stray;
        for (const QString& name : QDir(goldenDir()).entryList(QDir::Files)) {
            if (known.contains(name))
                continue;
            if (memscope::test::updatingGoldens() && QFile::remove(goldenDir() + QLatin1Char('/') + name))
                std::fprintf(stderr, "removed %s\n", qPrintable(name));
            else
                stray << name;
        }
        QVERIFY2(stray.isEmpty(), qPrintable(QStringLiteral("no row writes ") + stray.join(QStringLiteral(", "))));
    }
};

QTEST_GUILESS_MAIN(TestGolden)
#include "tst_golden.moc"
