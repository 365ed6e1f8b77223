#include "common/load_error.h"
#include "snapshot/snapshot_reader.h"
#include "support/snapshot_compare.h"

#include <QFile>
#include <QTest>

using namespace memscope;

namespace {
std::string sample(const char* name) { return std::string(MEMSCOPE_SAMPLES_DIR) + "/" + name; }
std::string testdata(const char* name) { return std::string(MEMSCOPE_TESTDATA_DIR) + "/" + name; }
} // namespace

class TestPickleReader : public QObject {
    Q_OBJECT
private slots:
    void sameModelAsTwin_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("twin");
        QTest::addColumn<int>("protocol");
        QTest::newRow("libtorch C++ pickler") << QString::fromStdString(sample("libtorch_mlp.pickle"))
                                              << QString::fromStdString(testdata("libtorch_mlp.p4.pickle")) << 2;
        QTest::newRow("protocol 5") << QString::fromStdString(testdata("release.p5.pickle"))
                                    << QString::fromStdString(sample("release.pickle")) << 5;
        QTest::newRow("protocol 2") << QString::fromStdString(testdata("release.p2.pickle"))
                                    << QString::fromStdString(sample("release.pickle")) << 2;
        QTest::newRow("protocol 0") << QString::fromStdString(testdata("release.p0.pickle"))
                                    << QString::fromStdString(sample("release.pickle")) << 0;
        QTest::newRow("gzip") << QString::fromStdString(testdata("release.pickle.gz"))
                              << QString::fromStdString(sample("release.pickle")) << 4;
        QTest::newRow("json") << QString::fromStdString(testdata("release.json"))
                              << QString::fromStdString(sample("release.pickle")) << 0;
    }
    void sameModelAsTwin()
    {
        QFETCH(QString, file);
        QFETCH(QString, twin);
        QFETCH(int, protocol);
        auto a = readSnapshotFile(file.toStdString());
        auto b = readSnapshotFile(twin.toStdString());
        QVERIFY(a->devices.front().events.count() > 0);
        if (a->format != SnapshotFormat::Json)
            QCOMPARE(a->pickleProtocol, protocol);
        const std::string diff = test::compareSnapshots(*a, *b);
        QVERIFY2(diff.empty(), diff.c_str());
    }

    void modelContents()
    {
        auto s = readSnapshotFile(sample("llm_bs16.pickle"));
        QCOMPARE(s->devices.size(), size_t(1));
        const EventTable& ev = s->devices[0].events;
        QCOMPARE(ev.count(), size_t(11513));
        QCOMPARE(s->segments.size(), size_t(181));
        QCOMPARE(s->annotations.size(), size_t(12));
        QCOMPARE(s->str(s->annotations[0].name), std::string_view("Optimizer.step#AdamW.step"));
        QCOMPARE(ev.action[0], Action::SegmentAlloc);
        QCOMPARE(ev.addr[0], uint64_t(140210079793152));
        QCOMPARE(ev.size[0], uint64_t(132120576));
        QCOMPARE(ev.timeUs[0], int64_t(1795310585044869));
        QVERIFY(ev.hasTime);
        QCOMPARE(s->stacks.frames(ev.stack[0]).size(), size_t(10));
        // Shared frame lists are interned once: far fewer stacks than events.
        QVERIFY(s->stacks.size() < ev.count() / 2);
        QCOMPARE(s->allocatorSettings.at("expandable_segments"), std::string("False"));
        QCOMPARE(s->allocatorSettings.at("roundup_power2_divisions.1"), std::string("0"));
    }

    void refused_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("expected");
        QTest::newRow("GLOBAL os.system") << QString::fromStdString(testdata("evil_global_os_system.pickle"))
                                          << "byte 0: refused pickle opcode GLOBAL";
        QTest::newRow("STACK_GLOBAL") << QString::fromStdString(testdata("evil_stack_global.pickle"))
                                      << "refused pickle opcode STACK_GLOBAL";
        QTest::newRow("not a snapshot") << QString::fromStdString(testdata("not_a_snapshot.pickle"))
                                        << "not a CUDA memory snapshot: top-level keys are 'hello', 'world'";
        QTest::newRow("truncated") << QString::fromStdString(testdata("release_truncated.pickle")) << "truncated";
        QTest::newRow("missing") << QString::fromStdString(testdata("no_such_file.pickle")) << "cannot open";
    }
    void refused()
    {
        QFETCH(QString, file);
        QFETCH(QString, expected);
        QFile::remove(QStringLiteral("/tmp/memscope_pwned"));
        try {
            readSnapshotFile(file.toStdString());
            QFAIL("loaded a file that must be refused");
        } catch (const LoadError& e) {
            const QString msg = QString::fromStdString(e.what());
            QVERIFY2(msg.contains(expected), qPrintable(msg));
            QVERIFY2(msg.startsWith(file), qPrintable(msg));
            QVERIFY(!msg.contains(QLatin1Char('\n')));
        }
        QVERIFY(!QFile::exists(QStringLiteral("/tmp/memscope_pwned")));
    }

    void truncatedAtEveryOffset()
    {
        QFile f(QString::fromStdString(sample("release.pickle")));
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray all = f.readAll();
        int refusedCount = 0;
        for (qsizetype n = 0; n < all.size(); ++n) {
            std::span<const uint8_t> bytes(reinterpret_cast<const uint8_t*>(all.constData()), static_cast<size_t>(n));
            try {
                readSnapshotBytes(bytes, "cut");
            } catch (const LoadError& e) {
                ++refusedCount;
                QVERIFY2(e.offset() >= 0 || !e.keyPath().empty() || n == 0, e.what());
            }
        }
        QCOMPARE(refusedCount, int(all.size()));
    }
};

QTEST_GUILESS_MAIN(TestPickleReader)
#include "tst_pickle_reader.moc"
