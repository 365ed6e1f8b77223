#include "ui/compare/comparison_view.h"

#include "ui/compare/comparison_table_model.h"
#include "compare/comparison_writer.h"
#include "common/format_bytes.h"

#include <QDir>
#include <QFontMetrics>
#include <QPointer>
#include <QFileInfo>
#include <QHeaderView>
#include <QLabel>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>
#include <qcustomplot.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <fstream>
#include <stdexcept>

namespace memscope {

namespace {

QString text(std::string_view s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }

QColor colorOf(Category c)
{
    const uint32_t rgb = categoryColor(c);
    return QColor((rgb >> 16) & 0xff, (rgb >> 8) & 0xff, rgb & 0xff);
}

// Byte ticks in binary units on the y axis.
class BytesTicker : public QCPAxisTicker {
public:
    explicit BytesTicker(QCPAxis* axis) : m_axis(axis) { }

protected:
    QString getTickLabel(double tick, const QLocale&, QChar, int) override
    {
        // Round binary steps need no decimals: "40 GiB", "512 MiB", "1.5 GiB" (not "40.00 GiB").
        QString s = QString::fromStdString(formatBytes(static_cast<int64_t>(tick)));
        const qsizetype space = s.indexOf(QLatin1Char(' '));
        const qsizetype dot = s.indexOf(QLatin1Char('.'));
        if (space > 0 && dot > 0 && dot < space) {
            qsizetype end = space;
            while (end > dot && s.at(end - 1) == QLatin1Char('0'))
                --end;
            if (end == dot + 1)
                --end;
            s.remove(end, space - end);
        }
        return s;
    }
    double getTickStep(const QCPRange& range) override
    {
        // A power of two of bytes: 256 MiB, 512 MiB, 1 GiB … land on round binary labels;
        // the smallest that keeps labels a line and a half apart, 8 at most (at 1000x700
        // the three plots are ~100 px high and 9 labels overprinted each other).
        const double pixels = m_axis ? m_axis->axisRect()->height() : 400;
        const double line = QFontMetricsF(m_axis ? m_axis->tickLabelFont() : QFont()).height();
        const double fit = std::clamp(std::floor(pixels / (1.6 * line)), 2.0, 8.0);
        double p = 1;
        while (range.size() / p > fit)
            p *= 2;
        return p;
    }

private:
    QPointer<QCPAxis> m_axis;
};

void setUpAxes(QCustomPlot* plot, const QString& title)
{
    plot->xAxis->setLabel(QObject::tr("iteration (each: batch, forward, backward, optimizer step, zero_grad)"));
    plot->yAxis->setTicker(QSharedPointer<QCPAxisTicker>(new BytesTicker(plot->yAxis)));
    QSharedPointer<QCPAxisTickerFixed> x(new QCPAxisTickerFixed);
    x->setTickStep(1.0);
    x->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);
    plot->xAxis->setTicker(x);
    plot->plotLayout()->insertRow(0);
    plot->plotLayout()->addElement(0, 0, new QCPTextElement(plot, title, QFont(plot->font().family(), 10, QFont::Bold)));
    plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    plot->axisRect()->setRangeDrag(Qt::Horizontal);
    plot->axisRect()->setRangeZoom(Qt::Horizontal);
    plot->setMinimumHeight(160);
    // The legend in a column of its own right of the chart, not over the data; one width
    // in the three plots so their x axes stay aligned.
    plot->axisRect()->insetLayout()->take(plot->legend);
    plot->plotLayout()->addElement(1, 1, plot->legend);
    plot->plotLayout()->setColumnStretchFactor(1, 0.001);
    QFont small = plot->font();
    small.setPointSizeF(small.pointSizeF() * 0.85);
    plot->legend->setFont(small);
    plot->legend->setIconSize(14, 8);
    plot->legend->setRowSpacing(-2);
    plot->legend->setMinimumSize(135, 0);
    plot->legend->setMaximumSize(135, QWIDGETSIZE_MAX);
    plot->legend->setBorderPen(Qt::NoPen);
    plot->legend->setBrush(Qt::NoBrush);
    plot->legend->setVisible(true);
    // One left margin in the three, whatever their tick labels ("3.5 GiB", "−768 MiB").
    plot->axisRect()->setMinimumMargins(
        QMargins(QFontMetrics(plot->yAxis->tickLabelFont()).horizontalAdvance(QStringLiteral("−1023 MiB")) + 20, 0, 0, 0));
}

// Dotted lines where each iteration's phases begin, named at the top, while few iterations show.
void markPhases(QCustomPlot* plot, int iterations)
{
    if (iterations > 12)
        return;
    const std::array<std::pair<Phase, const char*>, 3> marks{
        {{Phase::Forward, "fwd"}, {Phase::Backward, "bwd"}, {Phase::OptimizerStep, "step"}}};
    for (int k = 0; k < iterations; ++k)
        for (const auto& [phase, name] : marks) {
            const double x = k + alignedPhaseOffset(phase);
            auto* line = new QCPItemStraightLine(plot);
            line->point1->setCoords(x, 0);
            line->point2->setCoords(x, 1);
            line->setPen(QPen(QColor(0, 0, 0, 60), 1, Qt::DotLine));
            line->setLayer(QStringLiteral("grid"));
            auto* tag = new QCPItemText(plot);
            tag->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
            tag->position->setCoords(x, 0.0);
            tag->setPositionAlignment(Qt::AlignLeft | Qt::AlignTop);
            tag->setColor(QColor(0, 0, 0, 120));
            tag->setBrush(QColor(255, 255, 255, 210)); // over B − A's zero line, not struck through by it
            tag->setText(QString::fromLatin1(name));
        }
}

void markPeak(QCustomPlot* plot, double x, const QString& label)
{
    auto* line = new QCPItemStraightLine(plot);
    line->point1->setCoords(x, 0);
    line->point2->setCoords(x, 1);
    line->setPen(QPen(Qt::black, 1, Qt::DashLine));
    auto* tag = new QCPItemText(plot);
    tag->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
    tag->position->setCoords(x, 0.0);
    tag->setPositionAlignment(Qt::AlignLeft | Qt::AlignTop);
    // Below the row of phase names ("fwd", "bwd", "step"), which it covered.
    tag->setPadding(QMargins(3, QFontMetrics(plot->font()).height() + 2, 3, 0));
    tag->setText(label);
}

} // namespace

ComparisonView::ComparisonView(std::shared_ptr<const Comparison> comparison, QWidget* parent)
    : QWidget(parent), m_comparison(std::move(comparison)), m_model(new ComparisonTableModel(this))
{
    m_model->setComparison(m_comparison);
    auto* layout = new QVBoxLayout(this);
    auto* heading = new QLabel(this);
    heading->setTextInteractionFlags(Qt::TextSelectableByMouse);
    const ComparedRun& a = m_comparison->a();
    const ComparedRun& b = m_comparison->b();
    heading->setText(
        tr("<b>A</b> %1 (device %2) &nbsp; <b>B</b> %3 (device %4) &nbsp; peak %5 → %6")
            .arg(QString::fromStdString(a.name).toHtmlEscaped())
            .arg(a.device)
            .arg(QString::fromStdString(b.name).toHtmlEscaped())
            .arg(b.device)
            .arg(QString::fromStdString(formatBytes(a.peak.requested)), QString::fromStdString(formatBytes(b.peak.requested))));
    layout->addWidget(heading);

    auto* splitter = new QSplitter(Qt::Vertical, this);
    m_chart = new QWidget(splitter);
    auto* charts = new QVBoxLayout(m_chart);
    charts->setContentsMargins(0, 0, 0, 0);
    for (int i = 0; i < 3; ++i) {
        m_plots[i] = new QCustomPlot(m_chart);
        charts->addWidget(m_plots[i]);
    }
    setUpAxes(m_plots[0], tr("A: %1").arg(QFileInfo(QString::fromStdString(a.name)).fileName()));
    setUpAxes(m_plots[1], tr("B: %1").arg(QFileInfo(QString::fromStdString(b.name)).fileName()));
    setUpAxes(m_plots[2], tr("B − A"));
    fillRunPlot(m_plots[0], 0);
    fillRunPlot(m_plots[1], 1);
    fillDeltaPlot(m_plots[2]);
    const int iterations = std::max(a.iterations, b.iterations);
    for (QCustomPlot* p : m_plots) {
        markPhases(p, iterations);
        p->replot();
    }
    // One x range for the three; A and B share their y range so heights compare.
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
            if (i != j)
                connect(m_plots[i]->xAxis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), m_plots[j],
                        [this, j](const QCPRange& r) {
                    if (m_plots[j]->xAxis->range() != r) {
                        m_plots[j]->xAxis->setRange(r);
                        m_plots[j]->replot(QCustomPlot::rpQueuedReplot);
                    }
                });
    const double top = 1.05 * std::max(m_plots[0]->yAxis->range().upper, m_plots[1]->yAxis->range().upper);
    m_plots[0]->yAxis->setRange(0, top);
    m_plots[1]->yAxis->setRange(0, top);

    m_table = new QTableView(splitter);
    m_table->setModel(m_model);
    m_table->horizontalHeader()->setSectionResizeMode(ComparisonTableModel::What, QHeaderView::Stretch);
    // A call site's op and module: as wide as their text within bounds, one line, elided in the
    // middle (a module path's both ends say most), whole in their tooltips.
    m_table->setWordWrap(false);
    m_table->setTextElideMode(Qt::ElideMiddle);
    m_table->resizeColumnsToContents();
    m_table->setColumnWidth(ComparisonTableModel::Op, std::clamp(m_table->columnWidth(ComparisonTableModel::Op), 60, 190));
    m_table->setColumnWidth(ComparisonTableModel::Module,
                            std::clamp(m_table->columnWidth(ComparisonTableModel::Module), 60, 210));
    m_table->verticalHeader()->hide();
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    splitter->addWidget(m_chart);
    splitter->addWidget(m_table);
    splitter->setStretchFactor(0, 3);
    splitter->setStretchFactor(1, 2);
    layout->addWidget(splitter, 1);
}

QString ComparisonView::title() const
{
    return tr("%1 vs %2")
        .arg(QFileInfo(QString::fromStdString(m_comparison->a().name)).fileName(),
             QFileInfo(QString::fromStdString(m_comparison->b().name)).fileName());
}

void ComparisonView::fillRunPlot(QCustomPlot* plot, size_t side)
{
    const AlignedCurves& k = m_comparison->curves;
    QVector<double> x(static_cast<qsizetype>(k.bins));
    for (size_t i = 0; i < k.bins; ++i)
        x[static_cast<qsizetype>(i)] = k.x(i);
    QVector<double> below(static_cast<qsizetype>(k.bins), 0.0);
    QCPGraph* previous = nullptr;
    for (Category c : kAllCategories) {
        const auto& values = k.byCategory[side][static_cast<size_t>(c)];
        bool any = false;
        QVector<double> y(static_cast<qsizetype>(k.bins));
        for (size_t i = 0; i < k.bins; ++i) {
            below[static_cast<qsizetype>(i)] += static_cast<double>(values[i]);
            y[static_cast<qsizetype>(i)] = below[static_cast<qsizetype>(i)];
            any = any || values[i] != 0;
        }
        if (!any)
            continue;
        QCPGraph* g = plot->addGraph();
        g->setName(text(categoryLabel(c)));
        g->setData(x, y, true);
        g->setLineStyle(QCPGraph::lsStepLeft);
        g->setPen(QPen(colorOf(c).darker(120), 1));
        g->setBrush(colorOf(c));
        if (previous)
            g->setChannelFillGraph(previous);
        previous = g;
    }
    plot->xAxis->setRange(k.begin, k.begin + k.width * static_cast<double>(k.bins));
    plot->yAxis->rescale();
    plot->yAxis->setRangeLower(0);
    const ComparedRun& r = m_comparison->runs[side];
    markPeak(plot, r.peakPosition,
             tr("peak %1, %2").arg(QString::fromStdString(formatBytes(r.peak.requested)), text(phaseLabel(r.peak.phase))));
    // Draw the stack bottom-up so each area's fill reaches the one below it.
    plot->replot();
}

void ComparisonView::fillDeltaPlot(QCustomPlot* plot)
{
    const AlignedCurves& k = m_comparison->curves;
    QVector<double> x(static_cast<qsizetype>(k.bins));
    for (size_t i = 0; i < k.bins; ++i)
        x[static_cast<qsizetype>(i)] = k.x(i);
    for (Category c : kAllCategories) {
        QVector<double> y(static_cast<qsizetype>(k.bins));
        bool any = false;
        for (size_t i = 0; i < k.bins; ++i) {
            y[static_cast<qsizetype>(i)] = static_cast<double>(k.deltaCategory(c, i));
            any = any || y[static_cast<qsizetype>(i)] != 0;
        }
        if (!any)
            continue;
        QCPGraph* g = plot->addGraph();
        g->setName(text(categoryLabel(c)));
        g->setData(x, y, true);
        g->setLineStyle(QCPGraph::lsStepLeft);
        g->setPen(QPen(colorOf(c), 1.5));
    }
    QVector<double> total(static_cast<qsizetype>(k.bins));
    for (size_t i = 0; i < k.bins; ++i)
        total[static_cast<qsizetype>(i)] = static_cast<double>(k.deltaTotal(i));
    QCPGraph* g = plot->addGraph();
    g->setName(tr("Total"));
    g->setData(x, total, true);
    g->setLineStyle(QCPGraph::lsStepLeft);
    g->setPen(QPen(Qt::black, 2));
    plot->xAxis->setRange(k.begin, k.begin + k.width * static_cast<double>(k.bins));
    plot->yAxis->rescale();
    plot->yAxis->scaleRange(1.1, plot->yAxis->range().center());
    auto* zero = new QCPItemStraightLine(plot);
    zero->point1->setCoords(0, 0);
    zero->point2->setCoords(1, 0);
    zero->setPen(QPen(Qt::gray, 1));
    plot->replot();
}

QStringList ComparisonView::exportTo(const QString& directory)
{
    if (!QDir().mkpath(directory))
        throw std::runtime_error(directory.toStdString() + ": cannot create the directory");
    const QDir dir(directory);
    const QString png = dir.filePath(QStringLiteral("comparison.png"));
    const QString csv = dir.filePath(QStringLiteral("comparison.csv"));
    const QString curves = dir.filePath(QStringLiteral("comparison_curves.csv"));
    const QString json = dir.filePath(QStringLiteral("comparison.json"));
    // The three plots as one image, at a fixed size whatever the window's.
    {
        const int w = 1600, h = 400;
        QImage image(w, 3 * h, QImage::Format_ARGB32);
        image.fill(Qt::white);
        QPainter painter(&image);
        for (int i = 0; i < 3; ++i)
            painter.drawPixmap(0, i * h, m_plots[i]->toPixmap(w, h, 1.0));
        painter.end();
        if (!image.save(png, "PNG"))
            throw std::runtime_error(png.toStdString() + ": cannot write");
    }
    auto write = [](const QString& path, const std::function<void(std::ostream&)>& body) {
        std::ofstream out(path.toStdString(), std::ios::binary | std::ios::trunc);
        if (!out)
            throw std::runtime_error(path.toStdString() + ": cannot open for writing");
        body(out);
        out.close();
        if (!out)
            throw std::runtime_error(path.toStdString() + ": write failed");
    };
    write(csv, [&](std::ostream& o) { writeComparisonCsv(o, *m_comparison); });
    write(curves, [&](std::ostream& o) { writeComparisonCurvesCsv(o, *m_comparison); });
    write(json, [&](std::ostream& o) { o << comparisonJson(*m_comparison); });
    return {png, csv, curves, json};
}

} // namespace memscope
