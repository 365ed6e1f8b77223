// The allocator what-if panel on a real recording: the fields reach the core's replay and
// its results are what the panel shows.
#include "analysis/analysis.h"
#include "ui/pages/what_if_panel.h"

#include <QtTest>

using namespace memscope;

class TstWhatIfPanel : public QObject {
    Q_OBJECT

private slots:
    void simulateAndSearch()
    {
        AnalysisOptions o;
        o.until = AnalysisStage::Attributed;
        const auto a = analyze(AnalysisSource::file(MEMSCOPE_TESTDATA_DIR "/allocator/alloc_default.pickle.gz"), o);
        WhatIfPanel panel;
        QVERIFY(!panel.simulate()); // nothing loaded
        panel.setAttribution(a->attribution, 0);
        panel.setRecordedBatch(4);
        panel.setBatch(4);
        panel.setSettingsText(QStringLiteral("expandable_segments:True"));
        QSignalSpy simulated(&panel, &WhatIfPanel::simulated);
        QVERIFY(panel.simulate());
        QVERIFY(!panel.simulate()); // one run at a time
        QVERIFY(simulated.wait(60000));
        QVERIFY(panel.result());
        QCOMPARE(panel.result()->reservedPeak, int64_t(3548381184)); // alloc_expandable's max_reserved
        QVERIFY(panel.resultText().contains(QStringLiteral("No out-of-memory")));

        panel.setSettingsText(QStringLiteral("max_split_size_mb:5"));
        QVERIFY(!panel.simulate());
        QVERIFY(panel.resultText().contains(QStringLiteral("max_split_size_mb")));

        panel.setSettingsText(QString());
        QVERIFY(!panel.findLargestBatch()); // needs a capacity
        panel.setCapacityGiB(6);
        QVERIFY(panel.findLargestBatch());
        QVERIFY(simulated.wait(60000));
        QVERIFY(panel.maxBatch());
        QVERIFY(panel.maxBatch()->maxBatch >= 8 && panel.maxBatch()->maxBatch < 16);
        QVERIFY(panel.resultText().contains(QStringLiteral("Largest batch that fits: %1").arg(panel.maxBatch()->maxBatch)));

        panel.setBatch(16);
        QVERIFY(panel.simulate());
        QVERIFY(simulated.wait(60000));
        QVERIFY(panel.result()->oom);
        QVERIFY(panel.resultText().contains(QStringLiteral("Out of memory")));
    }
};

QTEST_MAIN(TstWhatIfPanel)
#include "tst_what_if_panel.moc"
