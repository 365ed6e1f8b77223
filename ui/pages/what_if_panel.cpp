#include "ui/pages/what_if_panel.h"

#include "ui/runner/job_runner.h"
#include "ui/style/text_format.h"

#include <QApplication>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QVBoxLayout>

#include <cmath>

namespace memscope {

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

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

} // namespace

WhatIfPanel::WhatIfPanel(QWidget* parent, JobRunner* runner)
    : QWidget(parent), m_runner(runner ? runner : new JobRunner(this)), m_settings(new QLineEdit(this)),
      m_capacity(spin(this, 0, 1e6, 2, 0,
                      tr("Memory the allocator may reserve, in GiB (0: unlimited). On a real card, "
                         "leave room for the CUDA context."))),
      m_recordedBatch(spin(this, 1, 1e6, 0, 1,
                           tr("The batch the recording ran with (a snapshot does not say; "
                              "1 = count batches in multiples of the recorded one)"))),
      m_batch(spin(this, 1, 1e6, 0, 1, tr("The batch to simulate"))), m_run(new QPushButton(tr("Simulate"), this)),
      m_search(new QPushButton(tr("Largest batch"), this)), m_exact(new QLabel(this)), m_output(new QLabel(this))
{
    m_settings->setToolTip(tr("PYTORCH_CUDA_ALLOC_CONF on top of the recorded settings, e.g. "
                              "expandable_segments:True,max_split_size_mb:64"));
    m_settings->setPlaceholderText(tr("expandable_segments:True, max_split_size_mb:64, roundup_power2_divisions:4, …"));
    m_search->setToolTip(tr("The largest batch whose replay fits the capacity"));
    m_exact->setWordWrap(true);
    m_exact->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_output->setWordWrap(true);
    m_output->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_output->setAlignment(Qt::AlignTop | Qt::AlignLeft);

    auto* form = new QFormLayout;
    form->addRow(tr("Allocator settings"), m_settings);
    form->addRow(tr("Capacity (GiB)"), m_capacity);
    form->addRow(tr("Recorded batch"), m_recordedBatch);
    form->addRow(tr("Batch"), m_batch);
    auto* buttons = new QHBoxLayout;
    buttons->addWidget(m_run);
    buttons->addWidget(m_search);
    buttons->addStretch(1);
    auto* left = new QVBoxLayout;
    left->addLayout(form);
    left->addLayout(buttons);
    left->addStretch(1);
    auto* right = new QVBoxLayout;
    right->addWidget(m_exact);
    right->addWidget(m_output, 1);
    // The settings field gets room for a setting or two (it was cut at ~120 px).
    m_settings->setMinimumWidth(m_settings->fontMetrics().averageCharWidth() * 40);
    auto* layout = new QHBoxLayout(this);
    layout->addLayout(left, 2);
    layout->addLayout(right, 3);

    connect(m_run, &QPushButton::clicked, this, [this] { simulate(); });
    connect(m_search, &QPushButton::clicked, this, [this] { findLargestBatch(); });
    connect(m_settings, &QLineEdit::returnPressed, this, [this] { simulate(); });
    clear();
}

void WhatIfPanel::clear()
{
    if (m_job)
        m_runner->cancel(m_job); // its end restores the cursor
    m_attribution.reset();
    m_result.reset();
    m_maxBatch.reset();
    m_exact->setText(tr("No trace."));
    m_output->clear();
    m_run->setEnabled(false);
    m_search->setEnabled(false);
}

void WhatIfPanel::setAttribution(std::shared_ptr<const Attribution> attribution, size_t deviceIndex)
{
    if (attribution && attribution == m_attribution && deviceIndex == m_index)
        return; // a later stage of the same analysis: keep what was simulated
    clear();
    if (!attribution || !attribution->replay || deviceIndex >= attribution->devices.size())
        return;
    m_attribution = std::move(attribution);
    m_index = deviceIndex;
    m_recorded = AllocatorSettings::fromSnapshot(m_attribution->replay->snapshot->allocatorSettings);
    const std::string conf = m_recorded.toConf();
    m_exact->setText(tr("Recorded settings: %1. Press Simulate to replay the trace through the allocator model.")
                         .arg(conf.empty() ? tr("torch's defaults") : QString::fromStdString(conf)));
    m_run->setEnabled(true);
    m_search->setEnabled(true);
}

void WhatIfPanel::setSettingsText(const QString& conf) { m_settings->setText(conf); }
void WhatIfPanel::setCapacityGiB(double gib) { m_capacity->setValue(gib); }
void WhatIfPanel::setRecordedBatch(double batch) { m_recordedBatch->setValue(batch); }
void WhatIfPanel::setBatch(double batch) { m_batch->setValue(batch); }

bool WhatIfPanel::options(SimulationOptions& out)
{
    out.settings = m_recorded;
    try {
        out.settings.apply(m_settings->text().toStdString());
    } catch (const std::invalid_argument& e) {
        m_output->setText(tr("<b>Settings:</b> %1").arg(QString::fromStdString(e.what()).toHtmlEscaped()));
        return false;
    }
    if (m_capacity->value() > 0)
        out.capacity = static_cast<uint64_t>(std::llround(m_capacity->value() * kGiB));
    return true;
}

bool WhatIfPanel::start(SimulationOptions o, bool search)
{
    struct Result {
        SimulationResult exact;
        std::optional<SimulationResult> result;
        std::optional<MaxBatchResult> maxBatch;
    };
    auto out = std::make_shared<Result>();
    const double batch = m_batch->value();
    const double recordedBatch = m_recordedBatch->value();
    QApplication::setOverrideCursor(Qt::WaitCursor);
    m_run->setEnabled(false);
    m_search->setEnabled(false);
    auto end = [this] {
        m_job = 0;
        QApplication::restoreOverrideCursor();
        m_run->setEnabled(m_attribution != nullptr);
        m_search->setEnabled(m_attribution != nullptr);
    };
    JobCallbacks callbacks;
    callbacks.receiver = this;
    callbacks.finished = [this, out, end] {
        end();
        showExact(out->exact);
        m_maxBatch = out->maxBatch;
        m_result = m_maxBatch ? std::optional<SimulationResult>(m_maxBatch->atMax) : out->result;
        if (m_maxBatch && m_maxBatch->maxBatch > 0)
            m_batch->setValue(static_cast<double>(m_maxBatch->maxBatch));
        showResult();
        emit simulated();
    };
    callbacks.failed = [this, end](const QString& message) {
        end();
        m_output->setText(tr("<b>The simulation failed:</b> %1").arg(message.toHtmlEscaped()));
        emit simulated();
    };
    callbacks.cancelled = end;
    const std::shared_ptr<const Attribution> attribution = m_attribution;
    const size_t index = m_index;
    const AllocatorSettings recorded = m_recorded;
    m_job = m_runner->start(
        search ? tr("largest batch") : tr("what-if"),
        [=](JobContext&) {
        SimulationOptions exact;
        exact.settings = recorded;
        exact.followRecording = true;
        out->exact = simulateDevice(*attribution->replay, index, nullptr, exact);
        if (search)
            out->maxBatch = findMaxBatch(*attribution->replay, index, attribution->devices[index], o, recordedBatch);
        else
            out->result = simulateBatch(*attribution->replay, index, attribution->devices[index], o, batch, recordedBatch);
        },
        std::move(callbacks));
    return true;
}

void WhatIfPanel::showExact(const SimulationResult& r)
{
    const DeviceReplay& dr = m_attribution->replay->devices[m_index];
    const std::string conf = m_recorded.toConf();
    QString text = tr("Recorded settings: %1. ").arg(conf.empty() ? tr("torch's defaults") : QString::fromStdString(conf));
    if (r.exact)
        text += tr("Replayed under them, the model gives every address and segment event of the trace "
                   "(reserved peak %1).")
                    .arg(bytesText(r.reservedPeak));
    else
        text += tr("Replayed under them, the model departs from the trace: %1 (reserved peak %2, recorded %3).")
                    .arg(QString::fromStdString(r.firstMismatch.empty() ? r.layoutMismatch : r.firstMismatch).toHtmlEscaped(),
                         bytesText(r.reservedPeak), bytesText(dr.peakReserved.bytes));
    if (!r.caveat.empty())
        text += QStringLiteral(" ") + QString::fromStdString(r.caveat).toHtmlEscaped() + QLatin1Char('.');
    m_exact->setText(text);
}

bool WhatIfPanel::simulate()
{
    if (!m_attribution || m_job)
        return false;
    SimulationOptions o;
    if (!options(o))
        return false;
    return start(o, false);
}

bool WhatIfPanel::findLargestBatch()
{
    if (!m_attribution || m_job)
        return false;
    SimulationOptions o;
    if (!options(o))
        return false;
    if (o.capacity == AllocatorSettings::kNoLimit) {
        m_output->setText(tr("Set a capacity: the largest batch is the largest that fits it."));
        return false;
    }
    return start(o, true);
}

QString WhatIfPanel::resultText() const { return m_output->text(); }

void WhatIfPanel::showResult()
{
    QString html;
    if (m_maxBatch) {
        html += tr("<p><b>Largest batch that fits: %1</b>%2</p>")
                    .arg(m_maxBatch->maxBatch)
                    .arg(m_maxBatch->unbounded ? tr(" (or more: nothing that grows with the batch ran out)") : QString());
        QStringList probes;
        for (const BatchProbe& p : m_maxBatch->probes)
            probes << tr("%1 %2").arg(p.batch).arg(p.fits ? tr("fits") : tr("OOM"));
        html += tr("<p>Probes: %1</p>").arg(probes.join(QStringLiteral(", ")));
    }
    if (m_result) {
        const SimulationResult& r = *m_result;
        // Cell padding keeps each label apart from its value; the figures of an out-of-memory
        // run end at the error, and say so.
        const QString untilOom = r.oom ? tr(" (up to the out-of-memory error)") : QString();
        html += tr("<table cellspacing=0 cellpadding=2>"
                   "<tr><td>Requested peak%7</td><td align=right>%1</td></tr>"
                   "<tr><td>Allocated peak (rounded blocks)%7</td><td align=right>%2</td></tr>"
                   "<tr><td>Reserved peak%7</td><td align=right><b>%3</b></td></tr>"
                   "<tr><td>Reserved but unallocated at the allocated peak&nbsp;&nbsp;</td>"
                   "<td align=right>%4 (%5)</td></tr>"
                   "<tr><td>Largest free block there</td><td align=right>%6</td></tr>"
                   "<tr><td>Fragmentation there (1 − largest free block / free bytes)&nbsp;&nbsp;</td>"
                   "<td align=right>%8</td></tr>"
                   "</table>")
                    .arg(bytesText(r.requestedPeak), bytesText(r.allocatedPeak), bytesText(r.reservedPeak),
                         bytesText(r.unallocatedAtAllocatedPeak()), percentText(r.unallocatedFractionAtAllocatedPeak()),
                         bytesText(r.largestFreeAtAllocatedPeak), untilOom, percentText(r.fragmentationAtAllocatedPeak()));
        if (r.oom)
            html += tr("<p><b>Out of memory</b> at event %1 (%2): asking %3 with %4 reserved, %5 allocated.</p>")
                        .arg(countText(r.oom->event), phaseText(r.oom->phase), bytesText(static_cast<int64_t>(r.oom->size)),
                             bytesText(r.oom->reserved), bytesText(r.oom->allocated));
        else
            html += tr("<p>No out-of-memory.</p>");
        if (r.recordedOomsAvoided > 0)
            html += tr("<p>%1 recorded out-of-memory error(s) would not happen.</p>").arg(r.recordedOomsAvoided);
    }
    m_output->setText(html);
}

} // namespace memscope
