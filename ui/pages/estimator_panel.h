#pragma once

#include "allocator/model_change.h"
#include "diagnose/estimator.h"

#include <QWidget>

class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QPushButton;
class QTableWidget;

namespace memscope {

/*
 * The article's training-memory model (diagnose/estimator.h) for one device, filled from
 * the snapshot: the recorded run's batch and sequence length (not in a snapshot: 1 = "the
 * recorded batch" until the user says), the model's inputs N, P, K, I, A and the what-if
 * batch and sequence length. A table puts, for each component and peak, what was measured
 * next to the model at the recorded batch and the model with the user's edits, and says in
 * which phase each peak falls. "Reset" goes back to the snapshot's values.
 *
 * Its what-if is the what-if panel's changes where they overlap (docs/ALLOCATOR.md, "One
 * model behind estimate and whatif"): a precision (P: 2 bytes in pure bf16/fp16, 4 with fp32
 * weights) and an optimizer (K its state per parameter, I none for one that updates in
 * place) rather than free P and K; the snapshot tab hands it the what-if panel's choices, and
 * the replayed prediction of the same changes is the what-if panel's.
 */
class EstimatorPanel : public QWidget {
    Q_OBJECT
public:
    explicit EstimatorPanel(QWidget* parent = nullptr);

    void setMeasurement(const TrainingMeasurement& measured);
    void clear(const QString& message = {}); // "No snapshot" when empty

    // The recorded run's B and L; A is re-derived from them.
    void setRecordedTokens(double batch, double sequence);
    // What-if edits; each recomputes the table.
    void setWhatIfBatch(double batch);
    void setWhatIfSequence(double sequence);
    void setOptimizerStates(double k);
    void setBytesPerParameter(double p);
    // The what-if panel's precision and optimizer (none: as recorded).
    void setWhatIfChanges(std::optional<Precision> precision, std::optional<OptimizerKind> optimizer);
    void resetToSnapshot();

    const EstimatorInputs& recordedInputs() const { return m_recorded; }
    EstimatorInputs whatIfInputs() const;
    const EstimateReport& report() const { return m_report; }
    QTableWidget* table() const { return m_table; }
    QString dominantText() const; // "what-if: peak in the optimizer step"

signals:
    void estimateChanged();

private:
    void fillFromRecorded();
    void recompute();

    TrainingMeasurement m_measured;
    bool m_hasMeasurement = false;
    bool m_updating = false;
    EstimatorInputs m_recorded;
    EstimateReport m_report;

    QDoubleSpinBox* m_recordedBatch;
    QDoubleSpinBox* m_recordedSeq;
    QDoubleSpinBox* m_parameters; // millions
    QDoubleSpinBox* m_bytes;
    QDoubleSpinBox* m_states;
    QDoubleSpinBox* m_intermediates;
    QDoubleSpinBox* m_activations; // per token (per recorded batch when B, L are unknown)
    QDoubleSpinBox* m_batch;
    QDoubleSpinBox* m_seq;
    QComboBox* m_precision;
    QComboBox* m_optimizer;
    QPushButton* m_reset;
    QTableWidget* m_table;
    QLabel* m_activationsLabel;
    QLabel* m_verdict;
    QLabel* m_note;
};

} // namespace memscope
