#include "attribute/attributor.h"
#include "diagnose/diagnoser.h"
#include "diagnose/training_measurement.h"
#include "ui/pages/diagnostics_panel.h"
#include "ui/pages/estimator_panel.h"
#include "replay/replay.h"
#include "snapshot/snapshot_reader.h"
#include "io/summary_writer.h"

#include <QPushButton>
#include <QSignalSpy>
#include <QTableWidget>
#include <QTest>
#include <QTextBrowser>
#include <QTreeWidget>

using namespace memscope;

namespace {

QString bytesText(int64_t b) { return QString::fromStdString(formatBytes(b)); }

QString sample(const char* name) { return QStringLiteral(MEMSCOPE_SAMPLES_DIR "/%1.pickle").arg(QLatin1String(name)); }

struct Loaded {
    std::shared_ptr<const Attribution> attribution;
    std::unique_ptr<FrameClassifier> frames;
    std::shared_ptr<const DiagnosisResult> result;
};

Loaded load(const char* name)
{
    Loaded l;
    l.attribution = attribute(replaySnapshot(readSnapshotFile(sample(name).toStdString())));
    l.frames = std::make_unique<FrameClassifier>(*l.attribution->replay->snapshot);
    l.result = diagnose(*l.attribution, *l.frames);
    return l;
}

} // namespace

class TestDiagnosePanels : public QObject {
    Q_OBJECT
private slots:
    void diagnosticsPanelShowsFindings()
    {
        const Loaded l = load("loss_leak");
        DiagnosticsPanel panel;
        panel.setDiagnostics(l.result, l.attribution->replay, l.frames.get());
        QCOMPARE(panel.findingCount(), int(l.result->items.size()));
        QCOMPARE(panel.list()->topLevelItemCount(), panel.findingCount());
        // Most severe first: the growth, with its rate in the per-iteration column.
        const Diagnostic* g = panel.finding(0);
        QVERIFY(g);
        QCOMPARE(g->kind, DiagnosticKind::Growth);
        QCOMPARE(panel.list()->topLevelItem(0)->text(4), bytesText(g->bytesPerIteration));
        QCOMPARE(panel.currentFinding(), g);
        QVERIFY(panel.detail()->toPlainText().contains(QStringLiteral("train.py:75")));
        QCOMPARE(panel.evidence()->topLevelItemCount(), int(g->sites.size()));

        // Activating an allocation of the evidence asks the window to show it.
        QSignalSpy allocations(&panel, &DiagnosticsPanel::allocationActivated);
        QSignalSpy stacks(&panel, &DiagnosticsPanel::stackActivated);
        QTreeWidgetItem* site = panel.evidence()->topLevelItem(0);
        QVERIFY(site->childCount() > 0);
        emit panel.evidence()->itemActivated(site->child(0), 0);
        QCOMPARE(allocations.count(), 1);
        const AllocationId id = allocations.takeFirst().at(0).value<AllocationId>();
        QCOMPARE(l.attribution->replay->devices[0].allocation(id).stack, g->sites.front().stack);
        emit panel.evidence()->itemActivated(site, 0);
        QCOMPARE(stacks.count(), 1);

        // "Show moment" goes to the finding's event.
        QSignalSpy moments(&panel, &DiagnosticsPanel::eventActivated);
        auto* show = panel.findChild<QPushButton*>();
        QVERIFY(show && show->isEnabled());
        show->click();
        QCOMPARE(moments.count(), 1);
        QCOMPARE(moments.takeFirst().at(0).toLongLong(), g->event);

        // Another device: nothing.
        panel.setDeviceIndex(size_t{1});
        QCOMPARE(panel.findingCount(), 0);
        panel.setDeviceIndex(size_t{0});
        QCOMPARE(panel.findingCount(), int(l.result->items.size()));
    }

    void estimatorPanelWhatIf()
    {
        const Loaded l = load("llm_bs16");
        const TrainingMeasurement m = measureTraining(l.attribution->replay->devices[0], l.attribution->devices[0]);
        EstimatorPanel panel;
        panel.setMeasurement(m);
        panel.setRecordedTokens(16, 256);
        QVERIFY(panel.recordedInputs().tokensKnown);
        QCOMPARE(panel.report().recorded.dominant, PeakPhase::ForwardBackward);
        QCOMPARE(panel.table()->item(0, 0)->text(), bytesText(m.parameters)); // measured parameters
        QCOMPARE(panel.table()->item(0, 1)->text(), bytesText(panel.report().recorded.parameters));

        QSignalSpy changed(&panel, &EstimatorPanel::estimateChanged);
        panel.setWhatIfBatch(2);
        QVERIFY(changed.count() >= 1);
        QVERIFY(panel.report().whatIf.has_value());
        QCOMPARE(panel.report().whatIf->dominant, PeakPhase::OptimizerStep);
        const int last = panel.table()->rowCount() - 1;
        QCOMPARE(panel.table()->item(last, 2)->text(), QStringLiteral("optimizer step"));
        QCOMPARE(panel.table()->item(last, 1)->text(), QStringLiteral("forward/backward"));
        QVERIFY(panel.dominantText().contains(QStringLiteral("optimizer step")));

        panel.resetToSnapshot();
        QCOMPARE(panel.whatIfInputs().batch, 16.0);
        QCOMPARE(panel.report().whatIf->dominant, PeakPhase::ForwardBackward);
    }
};

QTEST_MAIN(TestDiagnosePanels)
#include "tst_diagnose_panels.moc"
