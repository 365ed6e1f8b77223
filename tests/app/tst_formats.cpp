// Every snapshot variant that real users' files carry (issue 14) opens: tests/data/formats/
// holds one small real-derived file per variant (made by make_formats.py) and, for each,
// the golden output of `memscope summary --json`. A mismatch prints a unified diff; the
// goldens are rewritten only with MEMSCOPE_UPDATE_GOLDEN=1 (then review the diff in git).
#include "snapshot/snapshot_reader.h"

#include "support/cli_run.h"
#include "support/golden.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

using namespace memscope;

namespace {

const QString kDir = QStringLiteral(MEMSCOPE_TESTDATA_DIR "/formats");

std::string file(const char* name) { return (kDir + "/" + QString::fromLatin1(name)).toStdString(); }

using test::CliRun;

// Runs the memscope binary in the formats folder, so that "file" in its output is relative.
CliRun runCli(const QStringList& args) { return test::runCli(QStringLiteral(MEMSCOPE_APP), args, {.workingDirectory = kDir}); }

} // namespace

class TestFormats : public QObject {
    Q_OBJECT
private slots:
    void opensEveryVariant_data()
    {
        QTest::addColumn<QString>("name");
        const QStringList files = QDir(kDir).entryList({QStringLiteral("*.pickle"), QStringLiteral("*.json")}, QDir::Files,
                                                       QDir::Name);
        int rows = 0;
        for (const QString& name : files) {
            if (name.endsWith(QStringLiteral(".summary.json")) || name.startsWith(QStringLiteral("lfs_")))
                continue;
            QTest::newRow(qPrintable(name)) << name;
            ++rows;
        }
        QVERIFY(rows >= 15);
    }
    // summary --json equals its golden; diagnose and report open the file too.
    void opensEveryVariant()
    {
        QFETCH(QString, name);
        const CliRun summary = runCli({QStringLiteral("summary"), name, QStringLiteral("--json")});
        QVERIFY2(summary.exitCode == 0, summary.err.constData());
        const QString goldenPath = kDir + "/" + name + ".summary.json";
        const QString failure = test::checkGolden(goldenPath, summary.out);
        QVERIFY2(failure.isEmpty(), qPrintable(failure));

        const CliRun diagnose = runCli({QStringLiteral("diagnose"), name});
        QVERIFY2(diagnose.exitCode == 0, diagnose.err.constData());
        QTemporaryDir out;
        const CliRun report = runCli({QStringLiteral("report"), name, QStringLiteral("--out"), out.path()});
        QVERIFY2(report.exitCode == 0, report.err.constData());
        QVERIFY(QFile::exists(out.path() + "/index.html") || !QDir(out.path()).isEmpty());
    }

    void lfsPointerSaysSo()
    {
        const CliRun r = runCli({QStringLiteral("summary"), QStringLiteral("lfs_pointer.pickle")});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains("lfs_pointer.pickle: this file is a Git LFS pointer, not the snapshot: run git lfs pull"),
                 r.err.constData());
        QCOMPARE(r.err.count('\n'), 1);
    }

    // Regression (issue 14): a torch.compile frame's line 2^64-1 refused the whole file with
    // "at device_traces[0][1].frames[11].line: expected an integer, found int 18446744073709551615".
    void torchCompileLineIsUnknown_data()
    {
        QTest::addColumn<QString>("name");
        QTest::newRow("pickle") << QStringLiteral("compile_line.pickle");
        QTest::newRow("JSON") << QStringLiteral("compile_line.json");
    }
    void torchCompileLineIsUnknown()
    {
        QFETCH(QString, name);
        auto s = readSnapshotFile((kDir + "/" + name).toStdString());
        size_t unknownLines = 0, fx = 0;
        for (size_t i = 0; i < s->frames.size(); ++i) {
            const Frame& f = s->frames.frame(FrameId{static_cast<int32_t>(i)});
            if (s->str(f.name) == "_apply" || s->str(f.name) == "forward") {
                QCOMPARE(f.line, 0);
                QCOMPARE(s->str(f.fxNodeOp), std::string_view("call_function"));
                QCOMPARE(s->str(f.fxNodeTarget), std::string_view("aten.addmm.default"));
                ++unknownLines;
            } else {
                QVERIFY(f.line > 0 || s->str(f.filename).empty());
                QVERIFY(!f.fxNodeOp.valid() || s->str(f.fxNodeOp).empty());
            }
            fx += s->str(f.fxOriginalTrace).find("line 42") != std::string_view::npos;
        }
        QVERIFY(unknownLines > 0);
        QCOMPARE(fx, unknownLines);
        QCOMPARE(s->warnings.size(), size_t(1));
        QVERIFY2(s->warnings[0].find("line number outside") != std::string::npos, s->warnings[0].c_str());
    }

    // What newer recordings carry is kept in the model.
    void keepsNewerKeys()
    {
        {
            auto s = readSnapshotFile(file("pools.pickle"));
            const EventTable& t = s->devices[0].events;
            QVERIFY(!t.pool.empty());
            for (const auto& [row, pool] : t.pool) {
                QCOMPARE(t.action[row], Action::Alloc);
                QVERIFY(pool == (PoolId{1, 0}));
            }
            QCOMPARE(t.poolOf(t.pool.front().first).first, int64_t(1));
            size_t privateSegments = 0;
            for (const Segment& g : s->segments)
                privateSegments += g.poolId[0] == 1;
            QCOMPARE(privateSegments, s->segments.size() - 1);
            QVERIFY(s->warnings.empty());
        }
        {
            auto s = readSnapshotFile(file("forward_frames.pickle"));
            const EventTable& t = s->devices[0].events;
            QVERIFY(!t.forwardFrames.empty());
            const auto frames = s->stacks.frames(t.forwardFramesOf(t.forwardFrames.front().first));
            QCOMPARE(frames.size(), size_t(2));
            QCOMPARE(s->str(s->frames.frame(frames[0]).name), std::string_view("File \"train.py\", line 42, in forward"));
        }
        {
            auto s = readSnapshotFile(file("annotate_metadata.pickle"));
            const EventTable& t = s->devices[0].events;
            size_t annotations = 0;
            for (size_t i = 0; i < t.count(); ++i) {
                if (t.action[i] != Action::Annotate)
                    continue;
                ++annotations;
                QVERIFY(s->str(t.userMetadata[i]).starts_with("{\"marker\": \"step "));
            }
            QCOMPARE(annotations, size_t(2));
            QVERIFY(s->str(t.userMetadata[0]).starts_with("{\"step\": 0"));
            QVERIFY(s->warnings.empty());
        }
        {
            auto s = readSnapshotFile(file("host.pickle"));
            const DeviceTrace* host = s->device(-1);
            QVERIFY(host);
            QVERIFY(host->events.count() > 0);
            size_t hostSegments = 0;
            for (const Segment& g : s->segments)
                hostSegments += g.device == -1;
            QVERIFY(hostSegments > 0);
        }
    }
};

QTEST_GUILESS_MAIN(TestFormats)
#include "tst_formats.moc"
