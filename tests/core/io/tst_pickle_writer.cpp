#include "support/snapshot_compare.h"

#include "io/pickle_writer.h"
#include "snapshot/snapshot_reader.h"

#include <QDir>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <fstream>

using namespace memscope;

// Write every sample back as a pickle, read it again, compare; and let Python's own
// pickle.load (with every global refused) check it equals the original file's data.
class TestPickleWriter : public QObject {
    Q_OBJECT
private slots:
    void roundTrip_data()
    {
        sampleRows();
        QTest::newRow("release.json") << QStringLiteral(MEMSCOPE_TESTDATA_DIR "/release.json");
        QTest::newRow("release.p2") << QStringLiteral(MEMSCOPE_TESTDATA_DIR "/release.p2.pickle");
    }
    // The samples, pickled by Python (what pythonLoadsIt compares against).
    static void sampleRows()
    {
        QTest::addColumn<QString>("file");
        for (const char* f : {"linear3.pickle", "release.pickle", "oom.pickle", "llm_bs16.pickle", "llm_bs2_cpp.pickle",
                              "libtorch_mlp.pickle", "many_small.pickle", "loss_leak.pickle"})
            QTest::newRow(f) << QStringLiteral(MEMSCOPE_SAMPLES_DIR "/") + QString::fromLatin1(f);
    }

    void roundTrip()
    {
        QFETCH(QString, file);
        auto original = readSnapshotFile(file.toStdString());
        const std::string bytes = pickleSnapshot(*original);
        QCOMPARE(static_cast<uint8_t>(bytes[0]), uint8_t(0x80));
        QCOMPARE(static_cast<uint8_t>(bytes[1]), uint8_t(4));
        QCOMPARE(static_cast<uint8_t>(bytes[2]), uint8_t(0x95)); // framed, as Python writes protocol 4
        auto back = readSnapshotBytes({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, "written");
        QCOMPARE(back->pickleProtocol, 4);
        QCOMPARE(QString::fromStdString(test::compareSnapshots(*original, *back)), QString());
    }

    // Every format variant of tests/data/formats read, written, read again: the same model,
    // including what newer recordings carry (pool_id, forward_frames, compile_context,
    // user_metadata, FX frame fields, segment_pool_id, host_segments/host_traces). The
    // "carries" column names what the file is there for, so a writer that drops it and a
    // reader that never kept it cannot both pass unnoticed.
    void roundTripFormats_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("carries");
        const QDir dir(QStringLiteral(MEMSCOPE_TESTDATA_DIR "/formats"));
        const QStringList files = dir.entryList({QStringLiteral("*.pickle"), QStringLiteral("*.json")}, QDir::Files, QDir::Name);
        QVERIFY(files.size() >= 15);
        for (const QString& f : files) {
            if (f.endsWith(QLatin1String(".summary.json")) || f == QLatin1String("lfs_pointer.pickle"))
                continue;
            QString carries;
            if (f.startsWith(QLatin1String("pools")))
                carries = QStringLiteral("pool_id");
            else if (f.startsWith(QLatin1String("forward_frames")) || f.startsWith(QLatin1String("newer_keys")))
                carries = QStringLiteral("forward_frames");
            else if (f.startsWith(QLatin1String("host")))
                carries = QStringLiteral("host");
            else if (f.startsWith(QLatin1String("compile_line")))
                carries = QStringLiteral("fx");
            else if (f.startsWith(QLatin1String("annotate_metadata")))
                carries = QStringLiteral("annotate");
            QTest::newRow(qPrintable(f)) << dir.filePath(f) << carries;
        }
        // The real recordings with pools (segment_pool_id), compile_context and user_metadata.
        const QDir fields(QStringLiteral(MEMSCOPE_TESTDATA_DIR "/fields"));
        for (const QString& f : fields.entryList({QStringLiteral("*.pickle")}, QDir::Files, QDir::Name))
            QTest::newRow(qPrintable(f)) << fields.filePath(f) << QString();
    }
    void roundTripFormats()
    {
        QFETCH(QString, file);
        QFETCH(QString, carries);
        auto original = readSnapshotFile(file.toStdString());
        const std::string bytes = pickleSnapshot(*original);
        auto back = readSnapshotBytes({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, "written");
        QCOMPARE(QString::fromStdString(test::compareSnapshots(*original, *back)), QString());
        size_t pools = 0, forward = 0, annotate = 0, contexts = 0, fx = 0;
        bool host = false;
        for (const DeviceTrace& d : back->devices) {
            pools += d.events.pool.size();
            forward += d.events.forwardFrames.size();
            host = host || d.device == -1;
            for (size_t i = 0; i < d.events.count(); ++i) {
                annotate += d.events.action[i] == Action::Annotate;
                contexts += !back->str(d.events.compileContext[i]).empty() && back->str(d.events.compileContext[i]) != "N/A";
            }
        }
        for (size_t f = 0; f < back->frames.size(); ++f)
            fx += back->frames.frame(FrameId{static_cast<int32_t>(f)}).fxNodeName.valid();
        if (carries == QLatin1String("pool_id")) {
            QCOMPARE(pools, size_t{8});
            QVERIFY(std::any_of(back->segments.begin(), back->segments.end(), [](const Segment& g) { return g.poolId[0] == 1; }));
        } else if (carries == QLatin1String("forward_frames")) {
            QVERIFY(forward > 0);
        } else if (carries == QLatin1String("host")) {
            QVERIFY(host);
            QVERIFY(std::any_of(back->segments.begin(), back->segments.end(), [](const Segment& g) { return g.device == -1; }));
        } else if (carries == QLatin1String("fx")) {
            QVERIFY(fx > 0);
        } else if (carries == QLatin1String("annotate")) {
            QCOMPARE(annotate, size_t{2});
            QVERIFY(contexts > 0);
        }
    }

    void pythonLoadsIt_data() { sampleRows(); }

    void pythonLoadsIt()
    {
        QFETCH(QString, file);
        const QString python = QStandardPaths::findExecutable(QStringLiteral("python3"));
        QVERIFY2(!python.isEmpty(), "python3 is needed (scripts/install-deps.sh installs it)");
        QTemporaryDir dir;
        const QString out = dir.filePath(QStringLiteral("written.pickle"));
        writePickleSnapshotFile(*readSnapshotFile(file.toStdString()), out.toStdString());
        static const char* script = R"(
import io, math, pickle, sys
class R(pickle.Unpickler):
    def find_class(self, m, n): raise pickle.UnpicklingError("global " + m + "." + n)
def load(p):
    with open(p, "rb") as f: return R(f).load()
a, b = load(sys.argv[1]), load(sys.argv[2])
def norm(x):
    if isinstance(x, dict): return {k: norm(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)): return [norm(v) for v in x]
    if isinstance(x, float): return round(x, 5)
    return x
for k in ("segments", "device_traces", "allocator_settings", "external_annotations"):
    if norm(a.get(k)) != norm(b.get(k)):
        print("differs:", k); sys.exit(1)
print("equal", sum(len(t) for t in b["device_traces"]))
)";
        QProcess p;
        p.start(python, {QStringLiteral("-c"), QString::fromLatin1(script), file, out});
        QVERIFY(p.waitForFinished(120000));
        const QString output = QString::fromUtf8(p.readAllStandardOutput() + p.readAllStandardError());
        QVERIFY2(p.exitCode() == 0, qPrintable(output));
        QVERIFY(output.startsWith(QLatin1String("equal")));
    }

    void opcodesAreTheViewersOwn()
    {
        // MemoryViz.js knows a fixed set of opcodes; walk the stream and refuse others.
        auto s = readSnapshotFile(MEMSCOPE_SAMPLES_DIR "/oom.pickle");
        const std::string b = pickleSnapshot(*s);
        size_t i = 2;
        int seen = 0;
        while (i < b.size()) {
            const uint8_t op = static_cast<uint8_t>(b[i++]);
            ++seen;
            switch (op) {
            case 0x95: i += 8; break; // FRAME
            case '}':
            case ']':
            case '(':
            case 'u':
            case 'e':
            case 0x94:
            case 0x88:
            case 0x89:
            case 'N':
            case 0x86: break;
            case 'h':
            case 'K': i += 1; break;
            case 'j':
            case 'J': i += 4; break;
            case 'M': i += 2; break;
            case 'G': i += 8; break;
            case 0x8a: i += 1 + static_cast<uint8_t>(b[i]); break;
            case 0x8c: i += 1 + static_cast<uint8_t>(b[i]); break;
            case 'X': {
                uint32_t n;
                std::memcpy(&n, b.data() + i, 4);
                i += 4 + n;
                break;
            }
            case '.': QCOMPARE(i, b.size()); break;
            default: QFAIL(qPrintable(QStringLiteral("opcode 0x%1 at %2").arg(op, 0, 16).arg(i - 1)));
            }
        }
        QVERIFY(seen > 100);
    }

    void writeFailsCleanly()
    {
        auto s = readSnapshotFile(MEMSCOPE_SAMPLES_DIR "/linear3.pickle");
        try {
            writePickleSnapshotFile(*s, "/nonexistent-dir/x.pickle");
            QFAIL("expected an error");
        } catch (const std::runtime_error& e) {
            QVERIFY(QString::fromUtf8(e.what()).contains(QLatin1String("/nonexistent-dir/x.pickle")));
        }
    }
};

QTEST_GUILESS_MAIN(TestPickleWriter)
#include "tst_pickle_writer.moc"
