// The skip guard (tests/run_test.sh) on itself: listedSkip is in tests/skips.txt and passes,
// unlistedSkip is not, so this program's ctest run must fail (WILL_FAIL in CMakeLists.txt).
// If the guard let an unlisted skip through, ctest would report this test as failed.
#include <QtTest>

class TstSkipGuard : public QObject {
    Q_OBJECT

private slots:
    void listedSkip() { QSKIP("listed in tests/skips.txt"); }
    void unlistedSkip() { QSKIP("deliberately unlisted: the guard must fail this program"); }
    void runs() { QCOMPARE(1 + 1, 2); }
};

QTEST_GUILESS_MAIN(TstSkipGuard)
#include "tst_skip_guard.moc"
