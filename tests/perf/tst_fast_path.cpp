// The loader's trace-entry fast path (core/snapshot/snapshot_builder_fast.cpp) and its
// compact memo must give the same model as the pickle VM alone, on every real snapshot.
#include "snapshot/snapshot_reader.h"
#include "support/snapshot_compare.h"

#include <QDir>
#include <QTest>

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
};

QTEST_GUILESS_MAIN(TestFastPath)
#include "tst_fast_path.moc"
