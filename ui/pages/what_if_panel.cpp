#include "ui/pages/what_if_panel.h"

#include "ui/models/plan_table_model.h"
#include "ui/pages/what_if_chart.h"
#include "ui/runner/job_runner.h"
#include "ui/style/text_format.h"

#include "common/load_error.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QFrame>
#include <QScrollArea>
#include <QSpinBox>
#include <QSplitter>
#include <QTableView>
#include <QTimer>
#include <QVBoxLayout>

#include <cmath>

namespace memscope {

struct WhatIfPanel::Base {
    Base(std::shared_ptr<const Attribution> a, size_t index)
        : attribution(std::move(a)), model(*attribution->replay, index, attribution->devices[index])
    {
    }
    std::shared_ptr<const Attribution> attribution;
    ModelWhatIf model;
    SimulationResult exact;
};

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr Precision kPrecisions[] = {Precision::Fp32, Precision::Bf16, Precision::Fp16, Precision::AmpBf16, Precision::AmpFp16};
constexpr OptimizerKind kOptimizers[] = {OptimizerKind::AdamW,       OptimizerKind::Adam,      OptimizerKind::Sgd,
                                         OptimizerKind::SgdMomentum, OptimizerKind::Adafactor, OptimizerKind::AdamW8bit,
                                         OptimizerKind::AdamWFused};

QString text(std::string_view s) { return QString::fromLatin1(s.data(), static_cast<int>(s.size())); }

QDoubleSpinBox* spin(QWidget* parent, double lo, double hi, int decimals, double value, const QString& tip)
{
    auto* s = new QDoubleSpinBox(parent);
    s->setRange(lo, hi);
    s->setDecimals(decimals);
    s->setValue(value);
    s->setToolTip(tip);
    s->setKeyboardTracking(false);
    return s;
}

// The bytes PyTorch may reserve on the recording's device, where the trace says: torch's
// out-of-memory entry carries the device's free bytes, which with what was reserved there
// is what the allocator could have had.
int64_t deviceTotalOf(const Replay& replay, size_t index)
{
    const EventTable& ev = replay.snapshot->devices.at(index).events;
    const DeviceReplay& dr = replay.devices.at(index);
    int64_t total = 0;
    for (const auto& [row, free] : ev.deviceFree)
        if (row >= 0 && static_cast<size_t>(row) < dr.reserved.size())
            total = std::max(total, static_cast<int64_t>(free) + dr.reserved[static_cast<size_t>(row)]);
    return total;
}

} // namespace

WhatIfPanel::WhatIfPanel(QWidget* parent, JobRunner* runner)
    : QWidget(parent), m_runner(runner ? runner : new JobRunner(this)), m_recorded(new QLabel(this)),
      m_recordedPrecision(new QComboBox(this)), m_recordedOptimizer(new QComboBox(this)),
      m_recordedBatch(spin(this, 1, 1e6, 0, 1,
                           tr("The batch the recording ran with (a snapshot does not say; "
                              "1 = count batches in multiples of the recorded one)"))),
      m_recordedSeq(spin(this, 1, 1e7, 0, 1, tr("The sequence length the recording ran with (1: unknown)"))),
      m_checkpoint(new QComboBox(this)), m_precision(new QComboBox(this)), m_optimizer(new QComboBox(this)),
      m_accumulate(new QSpinBox(this)), m_shard(new QComboBox(this)),
      m_seq(spin(this, 0, 1e7, 0, 0, tr("The sequence length to predict (needs the recorded one)"))),
      m_batch(spin(this, 0, 1e6, 0, 0, tr("The batch to predict"))), m_settings(new QLineEdit(this)),
      m_capacity(spin(this, 0, 1e6, 2, 0,
                      tr("Memory the allocator may reserve, in GiB (0: unlimited). On a real card, leave room for the "
                         "CUDA context."))),
      m_search(new QPushButton(tr("Largest batch"), this)), m_planButton(new QPushButton(tr("Plan"), this)),
      m_output(new QLabel(this)), m_chart(new WhatIfChart(this)), m_planModel(new PlanTableModel(this)),
      m_planTable(new QTableView(this)), m_planStatus(new QLabel(this)), m_debounce(new QTimer(this))
{
    for (Precision p : kPrecisions) {
        m_recordedPrecision->addItem(text(precisionName(p)), text(precisionName(p)));
        m_precision->addItem(text(precisionName(p)), text(precisionName(p)));
    }
    m_precision->insertItem(0, tr("as recorded"), QString());
    for (OptimizerKind o : kOptimizers) {
        m_recordedOptimizer->addItem(text(optimizerName(o)), text(optimizerName(o)));
        m_optimizer->addItem(text(optimizerName(o)), text(optimizerName(o)));
    }
    m_optimizer->insertItem(0, tr("as recorded"), QString());
    m_checkpoint->addItem(tr("none"));
    m_accumulate->setRange(1, 4096);
    m_accumulate->setKeyboardTracking(false);
    m_accumulate->setToolTip(tr("Micro-batches of batch / K a step, the gradients kept across them"));
    m_shard->addItem(tr("1, as recorded"), QString());
    for (const ShardKind k : {ShardKind::Fsdp2, ShardKind::Zero1, ShardKind::Ddp})
        for (const int n : {2, 4, 8}) {
            const QString name = text(shardKindName(k)) + QLatin1Char(':') + QString::number(n);
            const QString label = k == ShardKind::Fsdp2   ? QStringLiteral("FSDP2")
                                  : k == ShardKind::Zero1 ? QStringLiteral("ZeRO-1")
                                                          : QStringLiteral("DDP");
            m_shard->addItem(tr("%1 × %2").arg(label).arg(n), name);
        }
    m_shard->setToolTip(tr("Data parallel over more GPUs, each rank training the batch above: DDP, DDP with "
                           "ZeroRedundancyOptimizer (ZeRO-1) or FSDP2; the peaks shown are the rank that reserves most"));
    m_seq->setSpecialValueText(tr("as recorded"));
    m_batch->setSpecialValueText(tr("as recorded"));
    m_capacity->setSpecialValueText(tr("unlimited"));
    m_checkpoint->setToolTip(tr("Activation checkpointing of the repeated blocks found in the forward"));
    m_precision->setToolTip(tr("Pure bf16/fp16, or autocast (amp) with fp32 weights"));
    m_optimizer->setToolTip(tr("The optimizer's state per parameter and its step's temporaries"));
    m_recordedPrecision->setToolTip(tr("Read off the trace (dtypes from sizes); override it if it is wrong"));
    m_recordedOptimizer->setToolTip(tr("Read off the trace (the state's pattern); override it if it is wrong"));
    m_settings->setToolTip(tr("PYTORCH_CUDA_ALLOC_CONF on top of the recorded settings, e.g. "
                              "expandable_segments:True,max_split_size_mb:64"));
    m_settings->setPlaceholderText(tr("expandable_segments:True, …"));
    m_search->setToolTip(tr("The largest batch whose replay fits the capacity, with the changes chosen"));
    m_planButton->setToolTip(tr("The changes alone and two together that fit the capacity, cheapest first"));
    m_recorded->setWordWrap(true);
    m_recorded->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_output->setWordWrap(true);
    m_output->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_output->setAlignment(Qt::AlignTop | Qt::AlignLeft);
    m_planStatus->setWordWrap(true);
    m_debounce->setSingleShot(true);
    m_debounce->setInterval(150);

    m_planTable->setObjectName(QStringLiteral("whatIfPlan"));
    m_planTable->setModel(m_planModel);
    m_planTable->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_planTable->setSelectionMode(QAbstractItemView::SingleSelection);
    m_planTable->verticalHeader()->setVisible(false);
    m_planTable->verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 6);
    // the changes in full; the cost's words take what is left (their tooltip has them all)
    for (int c = 0; c < PlanTableModel::ColumnCount; ++c)
        m_planTable->horizontalHeader()->setSectionResizeMode(c, QHeaderView::ResizeToContents);
    m_planTable->horizontalHeader()->setSectionResizeMode(PlanTableModel::Cost, QHeaderView::Stretch);
    m_planTable->setTextElideMode(Qt::ElideRight);
    m_planTable->setWordWrap(false);

    // Controls on the left (scrolling when the tab is low), the result, chart and plan right.
    auto* recordedBox = new QGroupBox(tr("Recorded run"), this);
    auto* recordedForm = new QFormLayout(recordedBox);
    recordedForm->addRow(m_recorded);
    recordedForm->addRow(tr("Precision"), m_recordedPrecision);
    recordedForm->addRow(tr("Optimizer"), m_recordedOptimizer);
    recordedForm->addRow(tr("Batch"), m_recordedBatch);
    recordedForm->addRow(tr("Sequence"), m_recordedSeq);
    auto* changesBox = new QGroupBox(tr("Changes"), this);
    auto* changesForm = new QFormLayout(changesBox);
    changesForm->addRow(tr("Checkpoint"), m_checkpoint);
    changesForm->addRow(tr("Precision"), m_precision);
    changesForm->addRow(tr("Optimizer"), m_optimizer);
    changesForm->addRow(tr("Accumulate"), m_accumulate);
    changesForm->addRow(tr("GPUs"), m_shard);
    changesForm->addRow(tr("Sequence"), m_seq);
    changesForm->addRow(tr("Batch"), m_batch);
    changesForm->addRow(tr("Allocator"), m_settings);
    changesForm->addRow(tr("Capacity (GiB)"), m_capacity);
    auto* buttons = new QHBoxLayout;
    buttons->addWidget(m_search);
    buttons->addWidget(m_planButton);
    buttons->addStretch(1);
    changesForm->addRow(buttons);
    auto* controls = new QWidget(this);
    auto* controlsLayout = new QVBoxLayout(controls);
    controlsLayout->setContentsMargins(0, 0, 0, 0);
    controlsLayout->addWidget(changesBox);
    controlsLayout->addWidget(recordedBox);
    controlsLayout->addStretch(1);
    auto* scroll = new QScrollArea(this);
    scroll->setWidget(controls);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    scroll->setMinimumWidth(controls->sizeHint().width() + 20);
    scroll->setMaximumWidth(controls->sizeHint().width() + 60);

    auto* planBox = new QWidget(this);
    auto* planLayout = new QVBoxLayout(planBox);
    planLayout->setContentsMargins(0, 0, 0, 0);
    planLayout->addWidget(m_planStatus);
    planLayout->addWidget(m_planTable, 1);
    auto* split = new QSplitter(Qt::Vertical, this);
    split->setObjectName(QStringLiteral("whatIfSplit"));
    split->addWidget(m_chart);
    split->addWidget(planBox);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    split->setChildrenCollapsible(false);
    // the result in at most five lines, the rest (per-rank peaks, notes) scrolled, so the
    // chart keeps its room in a small window
    auto* outputScroll = new QScrollArea(this);
    outputScroll->setObjectName(QStringLiteral("whatIfResult"));
    outputScroll->setWidget(m_output);
    outputScroll->setWidgetResizable(true);
    outputScroll->setFrameShape(QFrame::NoFrame);
    outputScroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    outputScroll->setMaximumHeight(fontMetrics().lineSpacing() * 5 + 6);
    outputScroll->setMinimumHeight(fontMetrics().lineSpacing() * 2 + 6);
    outputScroll->setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Maximum);
    auto* right = new QVBoxLayout;
    right->addWidget(outputScroll);
    right->addWidget(split, 1);
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(scroll);
    layout->addLayout(right, 1);

    auto edited = [this] {
        if (m_updating)
            return;
        emit changesEdited();
        scheduleSimulate();
    };
    for (QComboBox* c : {m_checkpoint, m_precision, m_optimizer, m_shard, m_recordedPrecision, m_recordedOptimizer})
        connect(c, &QComboBox::currentIndexChanged, this, edited);
    for (QDoubleSpinBox* s : {m_recordedBatch, m_recordedSeq, m_seq, m_batch, m_capacity})
        connect(s, &QDoubleSpinBox::valueChanged, this, edited);
    connect(m_accumulate, &QSpinBox::valueChanged, this, edited);
    connect(m_recordedSeq, &QDoubleSpinBox::valueChanged, this, [this](double v) { m_seq->setEnabled(v > 1); });
    // The batch to predict counts recorded batches while the recorded one is unknown (1): once
    // it is named, the same batch is that many samples (3x a recorded 8 is 24), and back.
    connect(m_recordedBatch, &QDoubleSpinBox::valueChanged, this, [this](double v) {
        const double before = m_recordedBatchBefore;
        m_recordedBatchBefore = v;
        if (m_batch->value() <= 0 || (before == 1) == (v == 1))
            return;
        const QSignalBlocker quiet(m_batch); // the recorded batch's own edit predicts again
        m_batch->setValue(before == 1 ? m_batch->value() * v : std::max(1.0, std::round(m_batch->value() / before)));
    });
    connect(m_settings, &QLineEdit::editingFinished, this, edited);
    connect(m_debounce, &QTimer::timeout, this, [this] { simulate(); });
    connect(m_search, &QPushButton::clicked, this, [this] { findLargestBatch(); });
    connect(m_planButton, &QPushButton::clicked, this, [this] { makePlan(); });
    connect(m_planTable, &QTableView::clicked, this, [this](const QModelIndex& i) { applyPlanRow(i.row()); });
    m_seq->setEnabled(false);
    clear();
}

void WhatIfPanel::clear()
{
    for (uint64_t* job : {&m_setupJob, &m_predictJob, &m_planJob})
        if (*job)
            m_runner->cancel(*job);
    ++m_predictGen;
    ++m_planGen;
    m_setupJob = m_predictJob = m_planJob = 0;
    m_pendingSimulate = m_pendingPlan = m_pendingSearch = false;
    m_debounce->stop();
    m_attribution.reset();
    m_base.reset();
    m_prediction.reset();
    m_plan.reset();
    m_maxBatch.reset();
    m_deviceTotal = 0;
    m_planModel->setRows(nullptr);
    m_chart->clear();
    m_recorded->setText(tr("No trace."));
    m_output->clear();
    m_planStatus->setText(tr("Plan: the changes that fit the capacity, cheapest first."));
    updateButtons();
}

void WhatIfPanel::setAttribution(std::shared_ptr<const Attribution> attribution, size_t deviceIndex)
{
    if (attribution && attribution == m_attribution && deviceIndex == m_index)
        return; // a later stage of the same analysis: keep what was predicted
    clear();
    if (!attribution || !attribution->replay || deviceIndex >= attribution->devices.size())
        return;
    m_attribution = std::move(attribution);
    m_index = deviceIndex;
    m_recordedSettings = AllocatorSettings::fromSnapshot(m_attribution->replay->snapshot->allocatorSettings);
    m_deviceTotal = deviceTotalOf(*m_attribution->replay, m_index);
    m_updating = true;
    setCapacityBytes(m_deviceTotal);
    m_updating = false;
    m_recorded->setText(tr("Reading the recorded setup…"));
    updateButtons();
    if (isVisible())
        ensureSetup();
}

void WhatIfPanel::ensureSetup()
{
    if (!m_attribution || m_base || m_setupJob)
        return;
    auto out = std::make_shared<std::shared_ptr<Base>>();
    const std::shared_ptr<const Attribution> attribution = m_attribution;
    const size_t index = m_index;
    const AllocatorSettings recorded = m_recordedSettings;
    JobCallbacks callbacks;
    callbacks.receiver = this;
    callbacks.finished = [this, out] {
        m_setupJob = 0;
        m_base = *out;
        fillSetupControls();
        updateButtons();
        emit setupRead();
        if (m_pendingPlan)
            makePlan();
        if (m_pendingSearch)
            findLargestBatch();
        else
            simulate(); // the changes as they are (none: the recorded run through the model)
    };
    callbacks.failed = [this](const QString& message) {
        m_setupJob = 0;
        m_recorded->setText(tr("<b>Could not read the recorded setup:</b> %1").arg(message.toHtmlEscaped()));
        updateButtons();
    };
    callbacks.cancelled = [this] { m_setupJob = 0; };
    m_setupJob = m_runner->start(
        tr("what-if: the recorded setup"),
        [out, attribution, index, recorded](JobContext& ctx) {
        auto base = std::make_shared<Base>(attribution, index);
        if (ctx.cancelled())
            throw LoadCancelled();
        SimulationOptions exact;
        exact.settings = recorded;
        exact.followRecording = true;
        base->exact = simulateDevice(*attribution->replay, index, &attribution->devices[index], exact);
        *out = std::move(base);
        },
        std::move(callbacks));
}

void WhatIfPanel::fillSetupControls()
{
    const RecordedSetup& r = m_base->model.recorded();
    const ForwardBlocks& blocks = m_base->model.blocks();
    m_updating = true;
    m_recordedPrecision->setCurrentIndex(m_recordedPrecision->findData(text(precisionName(r.precision))));
    m_recordedOptimizer->setCurrentIndex(m_recordedOptimizer->findData(text(optimizerName(r.optimizer))));
    const int keep = m_checkpoint->currentIndex();
    m_checkpoint->clear();
    m_checkpoint->addItem(tr("none"));
    if (r.blocks > 0) {
        m_checkpoint->addItem(tr("all %n block(s)", nullptr, r.blocks));
        for (int n = 1; n < r.blocks; ++n)
            m_checkpoint->addItem(tr("first %n of %1", nullptr, n).arg(r.blocks));
    }
    m_checkpoint->setCurrentIndex(std::clamp(keep, 0, m_checkpoint->count() - 1));
    m_checkpoint->setEnabled(r.blocks > 0 && r.checkpointedBlocks == 0);
    m_updating = false;

    const std::string conf = m_recordedSettings.toConf();
    const DeviceReplay& dr = m_attribution->replay->devices[m_index];
    const SimulationResult& e = m_base->exact;
    QString exact = e.exact ? tr("Replayed under the recorded allocator settings (%1), the model gives every address and segment "
                                 "event of the trace.")
                                  .arg(conf.empty() ? tr("torch's defaults") : QString::fromStdString(conf).toHtmlEscaped())
                            : tr("Replayed under the recorded settings the model departs from the trace (reserved peak %1, "
                                 "recorded %2).")
                                  .arg(bytesText(e.reservedPeak), bytesText(dr.peakReserved.bytes));
    QString blocksText = r.blocks > 0 ? tr("%n repeated block(s) found in the forward", nullptr, r.blocks)
                                      : tr("no repeated blocks found in the forward (checkpointing cannot be placed)");
    if (!blocks.loopFrame.empty())
        blocksText += tr(" (loop at %1)").arg(QString::fromStdString(blocks.loopFrame).toHtmlEscaped());
    exact += r.operatorsRecorded
                 ? tr(" Op dtypes come from the ATen operators the recording names (native frames, stacks=\"all\").")
                 : tr(" Op dtypes come from the Python frames (a stacks=\"all\" recording names each operator).");
    if (r.lightning)
        exact += tr(" Trained by Lightning: its mixed precision runs autocast without the cast cache.");
    if (r.compiled)
        exact += tr(" Compiled with torch.compile: its partitioner decides what a checkpointed block saves.");
    m_recorded->setText(
        tr("Read off the trace: <b>%1</b> (%2), <b>%3</b> (%4); %5, %6. %7")
            .arg(text(precisionName(r.precision)), QString::fromStdString(r.precisionEvidence).toHtmlEscaped(),
                 text(optimizerName(r.optimizer)), QString::fromStdString(r.optimizerEvidence).toHtmlEscaped(), blocksText,
                 r.checkpointedBlocks > 0 ? tr("already checkpointed") : tr("not checkpointed"), exact) +
        (m_deviceTotal > 0 ? tr(" The device had %1 for PyTorch (its out-of-memory entry).").arg(bytesText(m_deviceTotal))
                           : tr(" The recording does not say the device's memory: set the capacity.")));
}

void WhatIfPanel::showEvent(QShowEvent* event)
{
    QWidget::showEvent(event);
    ensureSetup();
}

QString WhatIfPanel::recordedText() const { return m_recorded->text(); }

void WhatIfPanel::setChanges(const ModelChanges& c)
{
    m_updating = true;
    int checkpoint = 0;
    if (c.checkpoint)
        checkpoint = *c.checkpoint < 0 ? 1 : 1 + *c.checkpoint;
    m_checkpoint->setCurrentIndex(std::clamp(checkpoint, 0, m_checkpoint->count() - 1));
    m_precision->setCurrentIndex(c.precision ? m_precision->findData(text(precisionName(*c.precision))) : 0);
    m_optimizer->setCurrentIndex(c.optimizer ? m_optimizer->findData(text(optimizerName(*c.optimizer))) : 0);
    m_accumulate->setValue(std::max(1, c.accumulate));
    m_shard->setCurrentIndex(c.shard ? std::max(0, m_shard->findData(text(shardKindName(c.shard->kind)) + QLatin1Char(':') +
                                                                     QString::number(c.shard->ranks)))
                                     : 0);
    m_seq->setValue(c.seq.value_or(0));
    m_batch->setValue(c.batch.value_or(0));
    m_updating = false;
    emit changesEdited();
    scheduleSimulate();
}

ModelChanges WhatIfPanel::changes() const
{
    ModelChanges c;
    const int k = m_checkpoint->currentIndex();
    if (k == 1)
        c.checkpoint = -1;
    else if (k > 1)
        c.checkpoint = k - 1;
    if (!m_precision->currentData().toString().isEmpty())
        c.precision = precisionFromName(m_precision->currentData().toString().toStdString());
    if (!m_optimizer->currentData().toString().isEmpty())
        c.optimizer = optimizerFromName(m_optimizer->currentData().toString().toStdString());
    c.accumulate = m_accumulate->value();
    if (!m_shard->currentData().toString().isEmpty())
        c.shard = shardingFromText(m_shard->currentData().toString().toStdString());
    if (m_seq->value() > 0 && m_recordedSeq->value() > 1)
        c.seq = m_seq->value();
    if (m_batch->value() > 0)
        c.batch = m_batch->value();
    return c;
}

void WhatIfPanel::setSettingsText(const QString& conf)
{
    m_settings->setText(conf);
    scheduleSimulate();
}
void WhatIfPanel::setCapacityGiB(double gib) { m_capacity->setValue(gib); }
void WhatIfPanel::setCapacityBytes(int64_t bytes)
{
    m_capacity->setValue(bytes > 0 ? std::ceil(static_cast<double>(bytes) / kGiB * 100.0) / 100.0 : 0.0);
}
double WhatIfPanel::capacityGiB() const { return m_capacity->value(); }
void WhatIfPanel::setRecordedBatch(double batch) { m_recordedBatch->setValue(batch); }
void WhatIfPanel::setRecordedSeq(double seq) { m_recordedSeq->setValue(seq); }
void WhatIfPanel::setRecordedPrecision(Precision p)
{
    m_recordedPrecision->setCurrentIndex(m_recordedPrecision->findData(text(precisionName(p))));
}
void WhatIfPanel::setRecordedOptimizer(OptimizerKind o)
{
    m_recordedOptimizer->setCurrentIndex(m_recordedOptimizer->findData(text(optimizerName(o))));
}

RecordedSetup WhatIfPanel::recordedSetup() const
{
    RecordedSetup r = m_base ? m_base->model.recorded() : RecordedSetup{};
    const auto p = precisionFromName(m_recordedPrecision->currentData().toString().toStdString());
    if (p && *p != r.precision) {
        r.precision = *p;
        r.precisionEvidence = "given";
    }
    const auto o = optimizerFromName(m_recordedOptimizer->currentData().toString().toStdString());
    if (o && *o != r.optimizer) {
        r.optimizer = *o;
        r.optimizerStates = optimizerStateRatio(*o);
        r.optimizerEvidence = "given";
    }
    r.batch = m_recordedBatch->value();
    r.batchKnown = r.batch != 1;
    r.seq = m_recordedSeq->value();
    r.seqKnown = r.seq != 1;
    return r;
}

bool WhatIfPanel::options(SimulationOptions& out)
{
    out.settings = m_recordedSettings;
    try {
        QString conf = m_settings->text();
        conf.replace(QLatin1Char('='), QLatin1Char(':'));
        out.settings.apply(conf.toStdString());
    } catch (const std::invalid_argument& e) {
        showError(tr("<b>Allocator settings:</b> %1").arg(QString::fromStdString(e.what()).toHtmlEscaped()));
        return false;
    }
    if (m_capacity->value() > 0)
        out.capacity = static_cast<uint64_t>(std::llround(m_capacity->value() * kGiB));
    return true;
}

void WhatIfPanel::scheduleSimulate()
{
    if (m_attribution)
        m_debounce->start();
}

bool WhatIfPanel::busy() const { return m_setupJob != 0 || m_predictJob != 0 || m_planJob != 0; }

void WhatIfPanel::updateButtons()
{
    m_search->setEnabled(m_attribution != nullptr);
    m_planButton->setEnabled(m_attribution != nullptr);
}

void WhatIfPanel::showError(const QString& message) { m_output->setText(message); }

bool WhatIfPanel::simulate()
{
    m_debounce->stop();
    if (!m_attribution)
        return false;
    SimulationOptions o;
    if (!options(o))
        return false;
    if (!m_base) {
        m_pendingSimulate = true;
        ensureSetup();
        return true;
    }
    m_pendingSimulate = false;
    if (m_predictJob)
        m_runner->cancel(m_predictJob); // a newer request replaces it
    const uint64_t gen = ++m_predictGen;
    o.keepCurve = true;
    auto out = std::make_shared<WhatIfPrediction>();
    out->changes = changes();
    out->recorded = recordedSetup();
    out->capacity = o.capacity == AllocatorSettings::kNoLimit ? 0 : static_cast<int64_t>(o.capacity);
    const std::shared_ptr<const Base> base = m_base;
    const size_t index = m_index;
    JobCallbacks callbacks;
    callbacks.receiver = this;
    callbacks.finished = [this, out, gen] {
        if (gen != m_predictGen)
            return;
        m_predictJob = 0;
        m_prediction = out;
        // the largest batch stays beside the prediction made at it, and no other (a setup
        // edited since may count batches in other units)
        if (gen != m_maxBatchPrediction)
            m_maxBatch.reset();
        m_maxBatchPrediction = 0;
        showPrediction();
        emit simulated();
    };
    callbacks.failed = [this, gen](const QString& message) {
        if (gen != m_predictGen)
            return;
        m_predictJob = 0;
        showError(tr("<b>The prediction failed:</b> %1").arg(message.toHtmlEscaped()));
        emit simulated();
    };
    callbacks.cancelled = [this, gen] {
        ++m_cancelled;
        if (gen == m_predictGen)
            m_predictJob = 0;
    };
    m_predictJob = m_runner->start(
        tr("what-if"),
        [out, base, index, o](JobContext& ctx) {
        ModelWhatIf model = base->model;
        model.setRecorded(out->recorded);
        OpStream stream;
        out->result = model.simulate(out->changes, o, stream);
        if (ctx.cancelled())
            throw LoadCancelled();
        out->curve = whatIfCurve(stream, out->result.result, base->attribution->replay->devices[index]);
        // the per-operation curves are in the chart's columns now (on a long trace they are
        // hundreds of MB)
        out->result.result.reserved = {};
        for (auto& c : out->result.result.byCategory)
            c = {};
        },
        std::move(callbacks));
    m_output->setText(m_output->text().isEmpty() ? tr("Predicting…") : m_output->text());
    return true;
}

bool WhatIfPanel::findLargestBatch()
{
    m_debounce->stop();
    if (!m_attribution)
        return false;
    SimulationOptions o;
    if (!options(o))
        return false;
    if (o.capacity == AllocatorSettings::kNoLimit) {
        showError(tr("Set a capacity: the largest batch is the largest that fits it."));
        return false;
    }
    if (!m_base) {
        m_pendingSearch = true;
        ensureSetup();
        return true;
    }
    m_pendingSearch = false;
    if (m_predictJob)
        m_runner->cancel(m_predictJob);
    const uint64_t gen = ++m_predictGen;
    auto out = std::make_shared<MaxBatchResult>();
    const ModelChanges c = changes();
    const RecordedSetup setup = recordedSetup();
    const std::shared_ptr<const Base> base = m_base;
    JobCallbacks callbacks;
    callbacks.receiver = this;
    callbacks.finished = [this, out, gen, known = setup.batchKnown] {
        if (gen != m_predictGen)
            return;
        m_predictJob = 0;
        m_maxBatch = *out;
        m_maxBatchInRecorded = !known;
        showMaxBatch();
        emit simulated();
        if (out->maxBatch > 0) {
            // the curve at that batch
            m_updating = true;
            m_batch->setValue(static_cast<double>(out->maxBatch));
            m_updating = false;
            m_maxBatchPrediction = simulate() ? m_predictGen : 0;
        }
    };
    callbacks.failed = [this, gen](const QString& message) {
        if (gen != m_predictGen)
            return;
        m_predictJob = 0;
        showError(tr("<b>The search failed:</b> %1").arg(message.toHtmlEscaped()));
        emit simulated();
    };
    callbacks.cancelled = [this, gen] {
        ++m_cancelled;
        if (gen == m_predictGen)
            m_predictJob = 0;
    };
    m_predictJob = m_runner->start(
        tr("largest batch"),
        [out, base, c, setup, o](JobContext&) {
        ModelWhatIf model = base->model;
        model.setRecorded(setup);
        *out = model.maxBatch(c, o);
        out->safeBatch = model.safeBatch(c, o, out->maxBatch);
        },
        std::move(callbacks));
    m_output->setText(tr("Searching the largest batch…"));
    return true;
}

bool WhatIfPanel::makePlan()
{
    if (!m_attribution)
        return false;
    SimulationOptions o;
    if (!options(o))
        return false;
    if (o.capacity == AllocatorSettings::kNoLimit) {
        m_planStatus->setText(tr("Set a capacity: the plan lists what fits it."));
        return false;
    }
    if (!m_base) {
        m_pendingPlan = true;
        ensureSetup();
        return true;
    }
    m_pendingPlan = false;
    if (m_planJob)
        m_runner->cancel(m_planJob);
    const uint64_t gen = ++m_planGen;
    auto out = std::make_shared<std::vector<PlanRow>>();
    const RecordedSetup setup = recordedSetup();
    const std::shared_ptr<const Base> base = m_base;
    const int64_t capacity = static_cast<int64_t>(o.capacity);
    JobCallbacks callbacks;
    callbacks.receiver = this;
    callbacks.finished = [this, out, gen, capacity, known = setup.batchKnown] {
        if (gen != m_planGen)
            return;
        m_planJob = 0;
        m_plan = out;
        m_planModel->setRows(out, !known);
        int fit = 0;
        for (const PlanRow& r : *out)
            fit += r.fits ? 1 : 0;
        m_planStatus->setText(tr("Plan under %1: %2 of %3 fit, cheapest first. Click a row to apply it.")
                                  .arg(bytesText(capacity))
                                  .arg(fit)
                                  .arg(out->size()));
        emit planned();
    };
    callbacks.failed = [this, gen](const QString& message) {
        if (gen != m_planGen)
            return;
        m_planJob = 0;
        m_planStatus->setText(tr("<b>The plan failed:</b> %1").arg(message.toHtmlEscaped()));
        emit planned();
    };
    callbacks.cancelled = [this, gen] {
        ++m_cancelled;
        if (gen == m_planGen)
            m_planJob = 0;
    };
    m_planJob = m_runner->start(
        tr("what-if plan"),
        [out, base, setup, o](JobContext& ctx) {
        ModelWhatIf model = base->model;
        model.setRecorded(setup);
        *out = model.plan(o, [&ctx] { return ctx.cancelled(); });
        if (ctx.cancelled())
            throw LoadCancelled();
        },
        std::move(callbacks));
    m_planStatus->setText(
        tr("Planning under %1… (each change replayed, and its largest batch searched)").arg(bytesText(capacity)));
    return true;
}

void WhatIfPanel::applyPlanRow(int row)
{
    const PlanRow* r = m_planModel->row(row);
    if (!r)
        return;
    ModelChanges c = r->changes;
    c.batch.reset();
    c.seq.reset();
    // the row was replayed under the settings field's text plus its own setting
    const QString setting = QString::fromStdString(r->settings);
    QString conf = m_settings->text().trimmed();
    if (!setting.isEmpty() && !conf.contains(setting))
        conf = conf.isEmpty() ? setting : conf + QLatin1Char(',') + setting;
    m_settings->setText(conf);
    setChanges(c);
}

QString WhatIfPanel::resultText() const { return m_output->text(); }

void WhatIfPanel::showPrediction()
{
    const WhatIfPrediction& p = *m_prediction;
    const SimulationResult& r = p.result.result;
    const DeviceReplay& dr = m_attribution->replay->devices[m_index];
    const QString changesWords = p.changes.empty() ? tr("none (the recorded run through the model)")
                                                   : QString::fromStdString(p.changes.describe());
    QString html = tr("<b>Changes:</b> %1 &nbsp; <b>Cost:</b> %2<br>")
                       .arg(changesWords.toHtmlEscaped(), QString::fromStdString(p.result.cost).toHtmlEscaped());
    const QString untilOom = r.oom ? tr(" (up to the out-of-memory)") : QString();
    html += tr("Predicted peaks%4: requested %1, allocated %2, <b>reserved %3</b> (recorded: requested %5, reserved %6).")
                .arg(bytesText(r.requestedPeak), bytesText(r.allocatedPeak), bytesText(r.reservedPeak), untilOom,
                     bytesText(dr.peakRequested.bytes), bytesText(dr.peakReserved.bytes));
    if (r.oom)
        html += tr(" <b><font color=\"#c81e1e\">Out of memory</font></b> at event %1 (%2): asking %3 with %4 reserved.")
                    .arg(countText(r.oom->event), phaseText(r.oom->phase), bytesText(static_cast<int64_t>(r.oom->size)),
                         bytesText(r.oom->reserved));
    else if (p.capacity > 0 && isTight(r.reservedPeak, static_cast<uint64_t>(p.capacity)))
        html += tr(" <b>Tight</b>: fits %1 with %2 to spare, within the %3% the predicted reserved bytes may miss by; "
                   "the real run may not fit.")
                    .arg(bytesText(p.capacity), bytesText(p.capacity - r.reservedPeak))
                    .arg(qRound(kReservedMargin * 100));
    else if (p.capacity > 0)
        html += tr(" Fits %1 (%2 to spare).").arg(bytesText(p.capacity), bytesText(p.capacity - r.reservedPeak));
    if (m_maxBatch)
        html += tr(" Largest batch that fits: <b>%1</b>%2 (%3 with %4% of the capacity and a segment of its largest "
                   "tensor to spare).")
                    .arg(batchText(m_maxBatch->maxBatch))
                    .arg(m_maxBatch->unbounded ? tr(" or more") : QString())
                    .arg(batchText(m_maxBatch->safeBatch))
                    .arg(qRound(kReservedMargin * 100));
    // ranks that differ (ZeRO-1's shares of the state, DDP's second buckets): each one's peaks
    const auto& ranks = p.result.ranks;
    const bool differ = std::any_of(ranks.begin(), ranks.end(), [&](const RankPeak& x) {
        return x.reservedPeak != ranks.front().reservedPeak || x.allocatedPeak != ranks.front().allocatedPeak;
    });
    if (differ) {
        QStringList each;
        for (const RankPeak& x : ranks)
            each << tr("rank %1 %2 (allocated %3)").arg(x.rank).arg(bytesText(x.reservedPeak), bytesText(x.allocatedPeak));
        html += tr("<br>Reserved per rank (the peaks above are the rank that reserves most): %1.")
                    .arg(each.join(QStringLiteral(", ")));
    }
    for (const std::string& n : p.result.notes)
        html += QStringLiteral("<br><i>") + QString::fromStdString(n).toHtmlEscaped() + QStringLiteral("</i>");
    m_output->setText(html);
    auto curve = std::shared_ptr<const WhatIfCurve>(m_prediction, &m_prediction->curve);
    m_chart->setCurve(curve, p.capacity, r.oom ? std::optional<int64_t>(r.oom->event) : std::nullopt);
}

QString WhatIfPanel::batchText(int64_t batch) const
{
    // found without a recorded batch, batches count recorded batches: 3 is three of them
    return m_maxBatchInRecorded ? tr("%1× the recorded batch").arg(batch) : QString::number(batch);
}

void WhatIfPanel::showMaxBatch()
{
    QStringList probes;
    for (const BatchProbe& p : m_maxBatch->probes)
        probes << tr("%1 %2").arg(p.batch).arg(p.fits ? tr("fits") : tr("OOM"));
    m_output->setText(tr("<b>Largest batch that fits: %1</b>%2. Probes: %3")
                          .arg(batchText(m_maxBatch->maxBatch))
                          .arg(m_maxBatch->unbounded ? tr(" (or more: nothing that grows with the batch ran out)") : QString(),
                               probes.join(QStringLiteral(", "))));
}

} // namespace memscope
