#include "common/page_warmer.h"

#include <QTest>

#include <chrono>
#include <fstream>
#include <thread>

using namespace memscope;

namespace {

size_t residentBytes()
{
    std::ifstream f("/proc/self/statm");
    size_t pages = 0, resident = 0;
    f >> pages >> resident;
    return resident * 4096;
}

} // namespace

// The warmer populates what it is given on idle CPU (this test's thread waits, so a core is
// idle), the pages are resident by the kernel's own account (mincore, and the process's
// resident size), it stops when asked, never reports more than it was given, and gives every
// byte it touched back to the kernel, so the next allocations can take them.
class TestPageWarmer : public QObject {
    Q_OBJECT

private slots:
    void givesTheMemoryBack_data()
    {
        QTest::addColumn<qulonglong>("bytes");
        QTest::addColumn<qulonglong>("mapped"); // whole 2 MiB pages
        QTest::newRow("nothing") << 0ull << 0ull;
        QTest::newRow("under a huge page") << qulonglong(1) << 0ull;
        QTest::newRow("3 MiB: one huge page") << qulonglong(3 << 20) << qulonglong(2 << 20);
        QTest::newRow("64 MiB") << qulonglong(64 << 20) << qulonglong(64 << 20);
    }
    void givesTheMemoryBack()
    {
        QFETCH(qulonglong, bytes);
        QFETCH(qulonglong, mapped);
        const size_t before = residentBytes();
        PageWarmer warmer;
        warmer.start(bytes);
        warmer.start(bytes); // a second start while warming is ignored
        // Let it run a little where the machine has an idle core.
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        const size_t during = residentBytes();
        const size_t warmed = warmer.release();
        const size_t after = residentBytes();
        QVERIFY(warmed <= mapped);
        QVERIFY(warmed % (size_t(2) << 20) == 0 || warmed == mapped);
        QVERIFY(during <= before + mapped + (size_t(4) << 20));
        // What it touched is unmapped: resident memory falls back (within 4 MiB of noise).
        QVERIFY2(after <= before + (size_t(4) << 20), qPrintable(QStringLiteral("resident %1 MiB before, %2 after, %3 warmed")
                                                                     .arg(before >> 20)
                                                                     .arg(after >> 20)
                                                                     .arg(warmed >> 20)));
        QCOMPARE(warmer.release(), size_t(0)); // released once
    }

    void warmsWhatItWasGiven()
    {
        constexpr size_t kBytes = size_t(64) << 20;
        const size_t before = residentBytes();
        PageWarmer warmer;
        warmer.start(kBytes);
        QTRY_COMPARE_WITH_TIMEOUT(warmer.warmed(), kBytes, 60000);
        QCOMPARE(warmer.residentBytes(), kBytes);
        const size_t during = residentBytes();
        QVERIFY2(during >= before + kBytes - (size_t(4) << 20),
                 qPrintable(QStringLiteral("resident %1 MiB before, %2 while warm").arg(before >> 20).arg(during >> 20)));
        QCOMPARE(warmer.release(), kBytes);
        QCOMPARE(warmer.residentBytes(), size_t(0));
        QVERIFY(residentBytes() <= before + (size_t(4) << 20));
    }

    void destructorStopsAndReleases()
    {
        const size_t before = residentBytes();
        {
            PageWarmer warmer;
            warmer.start(size_t(32) << 20);
        }
        QVERIFY(residentBytes() <= before + (size_t(4) << 20));
        PageWarmer again;
        QCOMPARE(again.release(), size_t(0)); // never started
    }
};

QTEST_GUILESS_MAIN(TestPageWarmer)
#include "tst_page_warmer.moc"
