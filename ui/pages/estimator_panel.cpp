#include "ui/pages/estimator_panel.h"

#include "ui/style/text_format.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLocale>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QTableWidget>
#include <QVBoxLayout>

namespace memscope {

namespace {

enum Column { ColMeasured, ColModel, ColWhatIf, ColCount };

QDoubleSpinBox* spin(QWidget* parent, double lo, double hi, int decimals, const QString& tip)
{
    auto* s = new QDoubleSpinBox(parent);
    s->setRange(lo, hi);
    s->setDecimals(decimals);
    s->setToolTip(tip);
    s->setKeyboardTracking(false);
    s->setGroupSeparatorShown(true);
    return s;
}

int64_t rowValue(const Estimate& e, const std::string& key)
{
    if (key == "parameters")
        return e.parameters;
    if (key == "gradients")
        return e.gradients;
    if (key == "optimizer_state")
        return e.optimizerState;
    if (key == "optimizer_intermediates")
        return e.optimizerIntermediates;
    if (key == "activations")
        return e.activations;
    if (key == "forward_backward_peak")
        return e.forwardBackwardPeak;
    if (key == "optimizer_step_peak")
        return e.optimizerPeak;
    return e.peak;
}

// "optimizer step": a phase inside a sentence.
QString phaseWords(Phase p)
{
    return QString::fromLatin1(phaseName(p).data(), static_cast<int>(phaseName(p).size()))
        .replace(QLatin1Char('_'), QLatin1Char(' '));
}

QString phaseOf(PeakPhase p) { return QString::fromLatin1(peakPhaseLabel(p).data(), int(peakPhaseLabel(p).size())); }

} // namespace

EstimatorPanel::EstimatorPanel(QWidget* parent) : QWidget(parent)
{
    m_recordedBatch = spin(this, 1, 1e7, 0, tr("Batch size of the recorded run (1 = unknown: \"the recorded batch\")"));
    m_recordedSeq = spin(this, 1, 1e8, 0, tr("Sequence length of the recorded run (1 for models without one)"));
    m_parameters = spin(this, 0, 1e7, 3, tr("N: parameters, in millions (measured parameter bytes / P)"));
    m_bytes = spin(this, 0.5, 16, 1, tr("P: bytes per parameter and per activation value (4 = fp32, 2 = bf16)"));
    m_states = spin(this, 0, 16, 2, tr("K: tensors the optimizer keeps per parameter (Adam 2, SGD momentum 1)"));
    m_intermediates = spin(this, 0, 16, 2, tr("I: the optimizer step's temporaries, in units of N x P"));
    m_activations = spin(this, 0, 1e12, 0, tr("A: values held per token at the forward/backward peak"));
    m_batch = spin(this, 1, 1e7, 0, tr("What-if batch size"));
    m_seq = spin(this, 1, 1e8, 0, tr("What-if sequence length"));
    m_reset = new QPushButton(tr("Reset to snapshot"), this);
    m_precision = new QComboBox(this);
    m_precision->addItem(tr("as recorded"), QString());
    for (Precision p : {Precision::Fp32, Precision::Bf16, Precision::Fp16, Precision::AmpBf16, Precision::AmpFp16}) {
        const std::string_view name = precisionName(p);
        m_precision->addItem(QString::fromLatin1(name.data(), int(name.size())),
                             QString::fromLatin1(name.data(), int(name.size())));
    }
    m_precision->setToolTip(tr("What-if precision: P = 2 in pure bf16/fp16, 4 with fp32 weights (amp). The What-If tab "
                               "replays it through the allocator model"));
    m_optimizer = new QComboBox(this);
    m_optimizer->addItem(tr("as recorded"), QString());
    for (OptimizerKind o : {OptimizerKind::AdamW, OptimizerKind::Adam, OptimizerKind::Sgd, OptimizerKind::SgdMomentum,
                            OptimizerKind::Adafactor, OptimizerKind::AdamW8bit, OptimizerKind::AdamWFused}) {
        const std::string_view name = optimizerName(o);
        m_optimizer->addItem(QString::fromLatin1(name.data(), int(name.size())),
                             QString::fromLatin1(name.data(), int(name.size())));
    }
    m_optimizer->setToolTip(tr("What-if optimizer: K its state per parameter, I none for one that updates in place"));

    auto* recorded = new QGroupBox(tr("Recorded run"), this);
    auto* recordedForm = new QFormLayout(recorded);
    recordedForm->addRow(tr("Batch B"), m_recordedBatch);
    recordedForm->addRow(tr("Sequence L"), m_recordedSeq);

    auto* model = new QGroupBox(tr("Model"), this);
    auto* modelForm = new QFormLayout(model);
    modelForm->addRow(tr("Parameters N (M)"), m_parameters);
    modelForm->addRow(tr("Bytes each P"), m_bytes);
    modelForm->addRow(tr("Optimizer states K"), m_states);
    modelForm->addRow(tr("Step temporaries I"), m_intermediates);
    m_activationsLabel = new QLabel(tr("Activations / token A"), model);
    modelForm->addRow(m_activationsLabel, m_activations);

    auto* whatIf = new QGroupBox(tr("What if"), this);
    auto* whatIfForm = new QFormLayout(whatIf);
    whatIfForm->addRow(tr("Batch B"), m_batch);
    whatIfForm->addRow(tr("Sequence L"), m_seq);
    whatIfForm->addRow(tr("Precision"), m_precision);
    whatIfForm->addRow(tr("Optimizer"), m_optimizer);
    whatIfForm->addRow(m_reset);

    m_table = new QTableWidget(this);
    m_table->setObjectName(QStringLiteral("estimateTable"));
    m_table->setColumnCount(ColCount);
    m_table->setHorizontalHeaderLabels({tr("Measured"), tr("Model"), tr("What if")});
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    // Figures at their width ("610.13 MiB"), the last column taking what is left.
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->horizontalHeader()->setStretchLastSection(true);

    m_verdict = new QLabel(this);
    m_verdict->setWordWrap(true);
    m_note = new QLabel(this);
    m_note->setWordWrap(true);
    const QString article = QString::fromUtf8(kEstimatorArticle.data(), static_cast<qsizetype>(kEstimatorArticle.size()));
    m_note->setText(
        tr("peak = parameters + optimizer state + max(gradients + optimizer intermediates, activations): %1").arg(article));
    m_note->setToolTip(tr("The model of %1. Its activations are all the forward/backward holds above the weights and "
                          "the optimizer state: the saved activations (the breakdown's Activations) and the temporaries "
                          "(Intermediates) and gradients made so far.")
                           .arg(article));

    // Inputs on the left, the table with its verdict on the right, so that every row of the
    // table fits the height of a detail tab.
    m_table->verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 8);
    m_table->setVerticalScrollMode(QAbstractItemView::ScrollPerPixel);
    for (QDoubleSpinBox* s :
         {m_recordedBatch, m_recordedSeq, m_parameters, m_bytes, m_states, m_intermediates, m_activations, m_batch, m_seq})
        s->setMinimumWidth(fontMetrics().horizontalAdvance(QStringLiteral("1,000,000,000,000")) + 40);
    auto* inputs = new QGridLayout;
    inputs->addWidget(recorded, 0, 0);
    inputs->addWidget(whatIf, 1, 0);
    inputs->addWidget(model, 0, 1, 2, 1);
    inputs->setRowStretch(2, 1);
    auto* right = new QVBoxLayout;
    right->addWidget(m_table, 1);
    right->addWidget(m_verdict);
    right->addWidget(m_note);
    auto* layout = new QHBoxLayout(this);
    layout->addLayout(inputs);
    layout->addLayout(right, 1);

    const auto onRecorded = [this] {
        if (m_updating || !m_hasMeasurement)
            return;
        fillFromRecorded();
    };
    connect(m_recordedBatch, &QDoubleSpinBox::valueChanged, this, onRecorded);
    connect(m_recordedSeq, &QDoubleSpinBox::valueChanged, this, onRecorded);
    for (QDoubleSpinBox* s : {m_parameters, m_bytes, m_states, m_intermediates, m_activations, m_batch, m_seq})
        connect(s, &QDoubleSpinBox::valueChanged, this, [this] {
            if (!m_updating)
                recompute();
        });
    for (QComboBox* c : {m_precision, m_optimizer})
        connect(c, &QComboBox::currentIndexChanged, this, [this] {
            if (!m_updating)
                recompute();
        });
    connect(m_reset, &QPushButton::clicked, this, &EstimatorPanel::resetToSnapshot);
    clear();
}

void EstimatorPanel::setMeasurement(const TrainingMeasurement& measured)
{
    m_measured = measured;
    m_hasMeasurement = true;
    m_updating = true;
    m_recordedBatch->setValue(1);
    m_recordedSeq->setValue(1);
    m_updating = false;
    setEnabled(true);
    fillFromRecorded();
}

void EstimatorPanel::clear(const QString& message)
{
    m_hasMeasurement = false;
    m_report = EstimateReport{};
    m_table->setRowCount(0);
    m_verdict->setText(message.isEmpty() ? tr("No snapshot") : message);
    setEnabled(false);
}

void EstimatorPanel::setRecordedTokens(double batch, double sequence)
{
    m_updating = true;
    m_recordedBatch->setValue(batch);
    m_recordedSeq->setValue(sequence);
    m_updating = false;
    if (m_hasMeasurement)
        fillFromRecorded();
}

void EstimatorPanel::setWhatIfBatch(double batch) { m_batch->setValue(batch); }
void EstimatorPanel::setWhatIfSequence(double sequence) { m_seq->setValue(sequence); }
void EstimatorPanel::setOptimizerStates(double k) { m_states->setValue(k); }
void EstimatorPanel::setBytesPerParameter(double p) { m_bytes->setValue(p); }

void EstimatorPanel::setWhatIfChanges(std::optional<Precision> precision, std::optional<OptimizerKind> optimizer)
{
    m_updating = true;
    m_precision->setCurrentIndex(precision ? m_precision->findData(QString::fromLatin1(precisionName(*precision).data())) : 0);
    m_optimizer->setCurrentIndex(optimizer ? m_optimizer->findData(QString::fromLatin1(optimizerName(*optimizer).data())) : 0);
    m_updating = false;
    recompute();
}

void EstimatorPanel::resetToSnapshot()
{
    m_updating = true;
    m_precision->setCurrentIndex(0);
    m_optimizer->setCurrentIndex(0);
    m_updating = false;
    if (m_hasMeasurement)
        fillFromRecorded();
}

void EstimatorPanel::fillFromRecorded()
{
    const double b = m_recordedBatch->value(), l = m_recordedSeq->value();
    const bool known = b != 1 || l != 1;
    m_recorded = inputsFromMeasurement(m_measured, known ? std::optional<double>(b) : std::nullopt,
                                       known ? std::optional<double>(l) : std::nullopt, 4);
    m_updating = true;
    m_parameters->setValue(m_recorded.parameters / 1e6);
    m_bytes->setValue(m_recorded.bytesPerParameter);
    m_states->setValue(m_recorded.optimizerStates);
    m_intermediates->setValue(m_recorded.optimizerIntermediates);
    m_activations->setValue(m_recorded.activationsPerToken);
    // Without the run's batch and sequence, B = L = 1 is the recorded batch: A is what one
    // recorded step holds, not a per-token figure (4,553,531,395 "per token" read as nonsense).
    m_activationsLabel->setText(m_recorded.tokensKnown ? tr("Activations / token A") : tr("Activations / step A"));
    m_activations->setToolTip(m_recorded.tokensKnown
                                  ? tr("A: values held per token at the forward/backward peak")
                                  : tr("A: values held in the recorded step at the forward/backward peak (set the recorded "
                                       "batch and sequence length for a per-token A)"));
    m_batch->setValue(m_recorded.batch);
    m_seq->setValue(m_recorded.sequence);
    m_states->setEnabled(m_recorded.training);
    m_intermediates->setEnabled(m_recorded.training);
    m_updating = false;
    recompute();
}

EstimatorInputs EstimatorPanel::whatIfInputs() const
{
    EstimatorInputs w = m_recorded;
    w.parameters = m_parameters->value() * 1e6;
    w.bytesPerParameter = m_bytes->value();
    w.optimizerStates = m_states->value();
    w.optimizerIntermediates = m_intermediates->value();
    w.activationsPerToken = m_activations->value();
    w.batch = m_batch->value();
    w.sequence = m_seq->value();
    // the what-if panel's changes, where the formula has a term for them
    if (const auto p = precisionFromName(m_precision->currentData().toString().toStdString()))
        w.bytesPerParameter = *p == Precision::Bf16 || *p == Precision::Fp16 ? 2 : 4;
    if (const auto o = optimizerFromName(m_optimizer->currentData().toString().toStdString())) {
        w.optimizerStates = optimizerStateRatio(*o);
        if (!optimizerHasStepTemporaries(*o))
            w.optimizerIntermediates = 0;
        else if (w.optimizerIntermediates == 0)
            w.optimizerIntermediates = 1;
    }
    return w;
}

QString EstimatorPanel::dominantText() const
{
    if (!m_report.whatIf)
        return {};
    return tr("What if: the peak, %1, falls in the %2.")
        .arg(bytesText(m_report.whatIf->peak), phaseOf(m_report.whatIf->dominant));
}

void EstimatorPanel::recompute()
{
    if (!m_hasMeasurement)
        return;
    // a precision or optimizer chosen sets P or K (and I)
    m_bytes->setEnabled(m_precision->currentIndex() == 0);
    m_states->setEnabled(m_recorded.training && m_optimizer->currentIndex() == 0);
    m_intermediates->setEnabled(m_recorded.training && m_optimizer->currentIndex() == 0);
    m_report = buildEstimateReport(m_measured, m_recorded, whatIfInputs());
    const auto& rows = m_report.rows;
    m_table->setRowCount(static_cast<int>(rows.size()) + 1);
    QStringList labels;
    for (size_t i = 0; i < rows.size(); ++i) {
        const EstimateRow& row = rows[i];
        labels << QString::fromStdString(row.label);
        auto set = [&](int col, const QString& text) {
            auto* item = new QTableWidgetItem(text);
            item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
            m_table->setItem(static_cast<int>(i), col, item);
        };
        set(ColMeasured, row.measured >= 0 ? bytesText(row.measured) : QStringLiteral("–"));
        set(ColModel, bytesText(row.predicted));
        set(ColWhatIf, bytesText(rowValue(*m_report.whatIf, row.key)));
    }
    const int last = static_cast<int>(rows.size());
    labels << tr("Peak falls in");
    const QString dominant[ColCount] = {m_report.measuredDominant ? phaseOf(*m_report.measuredDominant) : QStringLiteral("–"),
                                        phaseOf(m_report.recorded.dominant), phaseOf(m_report.whatIf->dominant)};
    QFont bold = m_table->font();
    bold.setBold(true);
    for (int col = 0; col < ColCount; ++col) {
        auto* item = new QTableWidgetItem(dominant[col]);
        item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
        m_table->setItem(last, col, item);
        if (QTableWidgetItem* peak = last > 0 ? m_table->item(last - 1, col) : nullptr)
            peak->setFont(bold);
    }
    // Row names without their formula ("(A x B x L x P)"), which is the name's tooltip: at
    // 1000 px the full names left the figures a few pixels ("61…").
    for (int r = 0; r < labels.size(); ++r) {
        auto* head = new QTableWidgetItem(labels[r].section(QStringLiteral(" ("), 0, 0));
        head->setToolTip(labels[r]);
        m_table->setVerticalHeaderItem(r, head);
    }

    QString verdict = tr("Measured peak %1 in %2; the model at the recorded batch puts it in the %3.")
                          .arg(bytesText(m_measured.peak), phaseWords(m_measured.peakPhase), phaseOf(m_report.recorded.dominant));
    verdict += QLatin1Char(' ') + dominantText();
    if (m_measured.forwardBackwardExtra > 0)
        verdict += QLatin1Char(' ') +
                   tr("Of its activations + temporaries %1, saved activations (the breakdown's) %2.")
                       .arg(bytesText(m_measured.forwardBackwardExtra), bytesText(m_measured.savedActivations));
    if (m_recorded.tokensKnown)
        verdict += QLatin1Char(' ') +
                   tr("The article's heuristic A = %1 per token (measured: %2) would predict activations of %3 at "
                      "B = %4, L = %5.")
                       .arg(countText(static_cast<int64_t>(heuristicActivationsPerToken(m_report.whatIf->inputs.parameters))),
                            countText(static_cast<int64_t>(m_recorded.activationsPerToken)),
                            bytesText(m_report.whatIf->heuristicActivations), QString::number(m_report.whatIf->inputs.batch),
                            QString::number(m_report.whatIf->inputs.sequence));
    else
        verdict += QLatin1Char(' ') + tr("Set the recorded batch and sequence length for per-token figures.");
    m_verdict->setText(verdict);
    emit estimateChanged();
}

} // namespace memscope
