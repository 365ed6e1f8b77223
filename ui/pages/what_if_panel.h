#pragma once

#include "allocator/allocator_simulation.h"
#include "allocator/what_if.h"

#include <QWidget>

#include <memory>
#include <optional>

class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QPushButton;

namespace memscope {

class JobRunner;

/*
 * The allocator what-if (core/allocator) for one device, next to the estimator: the
 * allocator settings (PYTORCH_CUDA_ALLOC_CONF text on top of the recorded ones), a capacity
 * (0 = unlimited), the recorded batch and a batch. "Simulate" replays the trace under them
 * and shows the reserved, allocated and requested peaks, the fragmentation at the reserved
 * peak and where it runs out of memory; "Largest batch" searches the largest batch that fits
 * the capacity. The exact replay under the recorded settings is shown first, as the measure
 * of how far the model can be trusted on this trace. Nothing runs until asked: a replay of a
 * long trace takes a while, so it runs as a JobRunner job and simulated() says when it is shown.
 */
class WhatIfPanel : public QWidget {
    Q_OBJECT
public:
    // runner: the window's (null: one of the panel's own).
    explicit WhatIfPanel(QWidget* parent = nullptr, JobRunner* runner = nullptr);

    void setAttribution(std::shared_ptr<const Attribution> attribution, size_t deviceIndex);
    void clear();

    void setSettingsText(const QString& conf);
    void setCapacityGiB(double gib); // 0: unlimited
    void setRecordedBatch(double batch);
    void setBatch(double batch);

    // Start a run with the fields as they are: false (and a message in resultText()) on bad
    // settings or while one runs; simulated() follows with the result shown.
    bool simulate();
    bool findLargestBatch();
    bool busy() const { return m_job != 0; }

    const std::optional<SimulationResult>& result() const { return m_result; }
    const std::optional<MaxBatchResult>& maxBatch() const { return m_maxBatch; }
    QString resultText() const;

signals:
    void simulated();

private:
    bool options(SimulationOptions& out);
    bool start(SimulationOptions options, bool search);
    void showExact(const SimulationResult& exact);
    void showResult();

    JobRunner* m_runner;
    uint64_t m_job = 0;

    std::shared_ptr<const Attribution> m_attribution;
    size_t m_index = 0;
    AllocatorSettings m_recorded;
    std::optional<SimulationResult> m_result;
    std::optional<MaxBatchResult> m_maxBatch;

    QLineEdit* m_settings;
    QDoubleSpinBox* m_capacity;
    QDoubleSpinBox* m_recordedBatch;
    QDoubleSpinBox* m_batch;
    QPushButton* m_run;
    QPushButton* m_search;
    QLabel* m_exact;
    QLabel* m_output;
};

} // namespace memscope
