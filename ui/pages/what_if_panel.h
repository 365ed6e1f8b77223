#pragma once

#include "allocator/model_what_if.h"
#include "allocator/what_if_curve.h"

#include <QWidget>

#include <memory>
#include <optional>

class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QSpinBox;
class QTableView;
class QTimer;

namespace memscope {

class JobRunner;
class PlanTableModel;
class WhatIfChart;

// One prediction of the what-if panel: the changes and recorded setup it ran with, the
// core's result (ModelWhatIf::simulate) and its chart curve.
struct WhatIfPrediction {
    ModelChanges changes;
    RecordedSetup recorded;
    int64_t capacity = 0; // 0: unlimited
    ChangeResult result; // its per-operation curves dropped once binned into `curve`
    WhatIfCurve curve;
};

/*
 * "Will it fit?" for one device (core/allocator/model_what_if.h): the changes `memscope
 * whatif` models (checkpointing of the repeated blocks found, precision, optimizer,
 * accumulation, sequence length, batch), the allocator settings and a capacity, next to the
 * recorded run's own setup (read off the trace, each overridable like --recorded-precision).
 * Every edit predicts again: the edited trace replayed through the allocator model, drawn as
 * the predicted requested bytes by category over the recorded curve with the capacity line
 * and the out-of-memory marked (WhatIfChart). "Plan" lists the changes alone and two together
 * with their reserved peak, whether they fit the capacity, their cost and largest batch,
 * cheapest first; clicking a row applies its changes. "Largest batch" searches the largest
 * batch that fits with the changes chosen.
 *
 * Everything runs as JobRunner jobs: reading the recorded setup (and the exact replay under
 * the recorded settings, the measure of how far the model holds on this trace) when the panel
 * is first shown or asked, then one job per request; a new prediction cancels the running
 * one, a new plan the running plan. Results are shared_ptr<const …>.
 */
class WhatIfPanel : public QWidget {
    Q_OBJECT
public:
    // runner: the window's (null: one of the panel's own).
    explicit WhatIfPanel(QWidget* parent = nullptr, JobRunner* runner = nullptr);

    void setAttribution(std::shared_ptr<const Attribution> attribution, size_t deviceIndex);
    void clear();

    // The controls; each edit schedules a new prediction (at once with simulate()).
    void setChanges(const ModelChanges& changes);
    ModelChanges changes() const;
    void setSettingsText(const QString& conf);
    void setCapacityGiB(double gib); // 0: unlimited
    void setCapacityBytes(int64_t bytes);
    double capacityGiB() const; // 0: unlimited
    // The recorded run (overrides of what was read off the trace).
    void setRecordedBatch(double batch);
    void setRecordedSeq(double seq); // 1: unknown
    void setRecordedPrecision(Precision p);
    void setRecordedOptimizer(OptimizerKind o);
    RecordedSetup recordedSetup() const; // detected, with the overrides
    bool setupReady() const { return m_base != nullptr; }

    // Start now with the controls as they are, cancelling the running request of the same
    // kind: false (with the reason in resultText()) on bad settings or with nothing loaded.
    bool simulate();
    bool findLargestBatch();
    bool makePlan();
    // The plan's row r applied to the controls (a prediction follows).
    void applyPlanRow(int row);
    bool busy() const;

    std::shared_ptr<const WhatIfPrediction> prediction() const { return m_prediction; }
    std::shared_ptr<const std::vector<PlanRow>> plan() const { return m_plan; }
    const std::optional<MaxBatchResult>& maxBatch() const { return m_maxBatch; }
    QString resultText() const;
    QString recordedText() const;
    PlanTableModel* planModel() const { return m_planModel; }
    QTableView* planTable() const { return m_planTable; }
    WhatIfChart* chart() const { return m_chart; }
    int cancelledCount() const { return m_cancelled; }

signals:
    void setupRead(); // the recorded setup is known (controls filled)
    void simulated(); // a prediction (or the largest batch) is shown
    void planned();
    void changesEdited(); // the controls changed (the estimator follows precision and optimizer)

protected:
    void showEvent(QShowEvent* event) override;

private:
    struct Base;
    void ensureSetup();
    void scheduleSimulate();
    bool options(SimulationOptions& out);
    void fillSetupControls();
    void showPrediction();
    void showMaxBatch();
    QString batchText(int64_t batch) const;
    void showError(const QString& message);
    void updateButtons();

    JobRunner* m_runner;
    std::shared_ptr<const Attribution> m_attribution;
    size_t m_index = 0;
    AllocatorSettings m_recordedSettings;
    std::shared_ptr<const Base> m_base;
    QString m_exactText;
    int64_t m_deviceTotal = 0; // from a recorded out-of-memory: free + reserved there

    uint64_t m_setupJob = 0, m_predictJob = 0, m_planJob = 0;
    uint64_t m_predictGen = 0, m_planGen = 0;
    bool m_pendingSimulate = false, m_pendingPlan = false, m_pendingSearch = false;
    bool m_updating = false;
    double m_recordedBatchBefore = 1; // the recorded batch before its last edit
    uint64_t m_maxBatchPrediction = 0; // the generation of the prediction at the largest batch found
    bool m_maxBatchInRecorded = false; // m_maxBatch counts recorded batches (none was named when it was found)
    int m_cancelled = 0;

    std::shared_ptr<const WhatIfPrediction> m_prediction;
    std::shared_ptr<const std::vector<PlanRow>> m_plan;
    std::optional<MaxBatchResult> m_maxBatch;

    QLabel* m_recorded;
    QComboBox* m_recordedPrecision;
    QComboBox* m_recordedOptimizer;
    QDoubleSpinBox* m_recordedBatch;
    QDoubleSpinBox* m_recordedSeq;
    QComboBox* m_checkpoint;
    QComboBox* m_precision;
    QComboBox* m_optimizer;
    QSpinBox* m_accumulate;
    QComboBox* m_shard;
    QDoubleSpinBox* m_seq;
    QDoubleSpinBox* m_batch;
    QLineEdit* m_settings;
    QDoubleSpinBox* m_capacity;
    QPushButton* m_search;
    QPushButton* m_planButton;
    QLabel* m_output;
    WhatIfChart* m_chart;
    PlanTableModel* m_planModel;
    QTableView* m_planTable;
    QLabel* m_planStatus;
    QTimer* m_debounce;
};

} // namespace memscope
