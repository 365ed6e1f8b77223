// The loader's trace-entry fast path (core/snapshot/snapshot_builder_fast.cpp) and its
// compact memo must give the same model as the pickle VM alone, on every real snapshot.
#include "snapshot/snapshot_reader.h"
#include "support/snapshot_compare.h"

#include "common/load_error.h"

#include <QDir>
#include <QFile>
#include <QTest>

#include <functional>
#include <random>
#include <vector>

using namespace memscope;

class TestFastPath : public QObject {
    Q_OBJECT
private slots:
    void sameModelAsTheVm_data()
    {
        QTest::addColumn<QString>("file");
        int rows = 0;
        for (const QString& folder :
             {QStringLiteral(MEMSCOPE_SAMPLES_DIR), QStringLiteral(MEMSCOPE_TESTDATA_DIR),
              QStringLiteral(MEMSCOPE_TESTDATA_DIR "/oracle"), QStringLiteral(MEMSCOPE_TESTDATA_DIR "/real"),
              QStringLiteral(MEMSCOPE_TESTDATA_DIR "/formats")}) {
            const QDir dir(folder);
            for (const QString& name : dir.entryList({QStringLiteral("*.pickle")}, QDir::Files, QDir::Name)) {
                if (name.startsWith(QStringLiteral("evil_")) || name.contains(QStringLiteral("truncated")) ||
                    name.startsWith(QStringLiteral("not_a_")) || name.startsWith(QStringLiteral("lfs_")))
                    continue;
                QTest::newRow(qPrintable(QDir(folder).dirName() + "/" + name)) << dir.filePath(name);
                ++rows;
            }
        }
        QVERIFY(rows >= 20);
    }
    void sameModelAsTheVm()
    {
        QFETCH(QString, file);
        LoadOptions vmOnly;
        vmOnly.fastPath = false;
        auto fast = readSnapshotFile(file.toStdString());
        auto vm = readSnapshotFile(file.toStdString(), vmOnly);
        const std::string diff = test::compareSnapshots(*fast, *vm);
        QVERIFY2(diff.empty(), diff.c_str());
        QCOMPARE(fast->stacks.size(), vm->stacks.size());
        QCOMPARE(fast->frames.size(), vm->frames.size());
        for (size_t d = 0; d < fast->devices.size(); ++d) {
            const EventTable& a = fast->devices[d].events;
            const EventTable& b = vm->devices[d].events;
            QCOMPARE(a.hasTime, b.hasTime);
            QCOMPARE(a.deviceFree, b.deviceFree);
            QVERIFY(a.stack == b.stack); // same interning order: same ids
            QVERIFY(a.compileContext.size() == b.compileContext.size());
            QVERIFY(a.pool == b.pool);
            QVERIFY(a.forwardFrames == b.forwardFrames);
        }
        QCOMPARE(fast->warnings, vm->warnings);
    }

    // The fast path remembers each key position's bytes (BINGET n) and field across
    // entries; a file that stores another str at a key's memo index between two entries
    // (BINGET, BINPUT n, POP: valid pickle, never written by Python's pickler) must make it
    // forget them. Here 'addr' becomes 'alloc' from the middle of the trace on: the later
    // entries have no address. Regression test for the key slots of issue 20's round F.
    void keyMemoEntryRewritten()
    {
        QFile f(QStringLiteral(MEMSCOPE_SAMPLES_DIR "/llm_bs16.pickle"));
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray original = f.readAll();
        QByteArray data = original;
        const qsizetype at = data.indexOf(QByteArray("}\x94(", 3), data.size() / 2);
        QVERIFY(at > 0);
        // The entry's first key ('action'), its value (a str), then its second key ('addr').
        auto refLength = [&](qsizetype i) { return data[i] == 'h' ? 2 : data[i] == 'j' ? 5 : 0; };
        const qsizetype key1 = at + 3;
        QVERIFY(refLength(key1) > 0);
        const qsizetype value1 = key1 + refLength(key1);
        QVERIFY(refLength(value1) > 0);
        const qsizetype key2 = value1 + refLength(value1);
        QVERIFY(refLength(key2) > 0);
        QByteArray put = data.mid(key2, refLength(key2));
        put[0] = put[0] == 'h' ? 'q' : 'r'; // BINPUT / LONG_BINPUT at the 'addr' key's index
        data.insert(at, data.mid(value1, refLength(value1)) + put + QByteArray("0")); // BINGET 'alloc', PUT, POP
        auto span = [](const QByteArray& b) {
            return std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(b.constData()), size_t(b.size()));
        };

        LoadOptions vmOnly;
        vmOnly.fastPath = false;
        const std::string fast = outcome(span(data), {});
        const std::string vm = outcome(span(data), vmOnly);
        QCOMPARE(fast, vm);
        QVERIFY2(fast.rfind("ok:", 0) == 0, fast.c_str());
        QVERIFY(fast != outcome(span(original), {})); // the rewrite did change the later entries
    }

    // Random byte changes in real files: the fast path and the VM alone give the same model
    // or the same error, whatever the change hits (the path returns 0 before any change).
    void sameResultOnMutations_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<int>("mutations");
        QTest::newRow("llm_bs16") << QStringLiteral(MEMSCOPE_SAMPLES_DIR "/llm_bs16.pickle") << 100;
        QTest::newRow("formats/ring_wrapped") << QStringLiteral(MEMSCOPE_TESTDATA_DIR "/formats/ring_wrapped.pickle") << 300;
        QTest::newRow("formats/annotate_metadata")
            << QStringLiteral(MEMSCOPE_TESTDATA_DIR "/formats/annotate_metadata.pickle") << 300;
    }
    void sameResultOnMutations()
    {
        QFETCH(QString, file);
        QFETCH(int, mutations);
        QFile f(file);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray original = f.readAll();
        std::mt19937_64 rng(20);
        LoadOptions vmOnly;
        vmOnly.fastPath = false;
        int errors = 0;
        for (int m = 0; m < mutations; ++m) {
            QByteArray data = original;
            const int changes = 1 + int(rng() % 3);
            for (int c = 0; c < changes; ++c) {
                const qsizetype i = qsizetype(rng() % uint64_t(data.size() - 2)) + 2; // past PROTO
                data[i] = char(rng() % 4 == 0 ? uint8_t(data[i]) ^ uint8_t(1u << (rng() % 8)) : uint8_t(rng()));
            }
            const std::span<const uint8_t> bytes(reinterpret_cast<const uint8_t*>(data.constData()), size_t(data.size()));
            const std::string fast = outcome(bytes, {});
            const std::string vm = outcome(bytes, vmOnly);
            QVERIFY2(fast == vm, qPrintable(QStringLiteral("mutation %1: fast path: %2\nVM: %3")
                                                .arg(m)
                                                .arg(QString::fromStdString(fast.substr(0, 300)))
                                                .arg(QString::fromStdString(vm.substr(0, 300)))));
            errors += fast.rfind("error:", 0) == 0;
        }
        QVERIFY(errors < mutations); // some changes still load
    }

private:
    // The error's text, or every event's fields with its strs and its stack as text (ids may
    // be interned in another order when the fast path gave an entry up half-way).
    static std::string outcome(std::span<const uint8_t> bytes, const LoadOptions& options)
    {
        std::shared_ptr<const Snapshot> s;
        try {
            s = readSnapshotBytes(bytes, "mutated", options);
        } catch (const LoadError& e) {
            return std::string("error: ") + e.what();
        }
        auto str = [&](StringId id) { return std::string(s->strings.view(id)); };
        std::vector<std::string> stackText(s->stacks.size()); // a hash of each stack's frames as text
        auto stack = [&](StackId id) -> std::string {
            if (!id.valid())
                return "-";
            std::string& h = stackText[size_t(id.value)];
            if (h.empty()) {
                std::string t;
                for (FrameId f : s->stacks.frames(id)) {
                    const Frame& fr = s->frames.frame(f);
                    t += str(fr.filename) + ":" + std::to_string(fr.line) + ":" + str(fr.name) + "|";
                }
                h = std::to_string(std::hash<std::string>{}(t)) + "/" + std::to_string(s->stacks.frames(id).size());
            }
            return h;
        };
        std::string text = "ok: " + std::to_string(s->devices.size()) + " devices";
        for (const DeviceTrace& d : s->devices) {
            const EventTable& t = d.events;
            text += "; device " + std::to_string(d.device) + ", " + std::to_string(t.count()) + " events";
            for (size_t i = 0; i < t.count(); ++i)
                text += " " + std::to_string(int(t.action[i])) + "," + std::to_string(t.addr[i]) + "," +
                        std::to_string(t.size[i]) + "," + std::to_string(t.stream[i]) + "," + std::to_string(t.timeUs[i]) + "," +
                        stack(t.stack[i]) + "," + str(t.userMetadata[i]) + "," + str(t.compileContext[i]);
        }
        return text;
    }
};

QTEST_GUILESS_MAIN(TestFastPath)
#include "tst_fast_path.moc"
