#include "ui/pages/report_chart.h"

#include "ui/plot/band_layer.h"
#include "ui/plot/byte_axis_ticker.h"
#include "ui/plot/centered_legend.h"
#include "ui/style/plot_theme.h"
#include "ui/style/text_format.h"
#include "ui/plot/time_axis_ticker.h"
#include "ui/plot/timeline_plotter.h"

#include <QFileInfo>
#include <qcustomplot.h>

namespace memscope {

ReportChart::ReportChart(const Document& document, size_t deviceIndex, const PointReport& at)
    : m_plot(std::make_unique<QCustomPlot>())
{
    const DeviceModel& m = document.devices.at(deviceIndex);
    const PlotTheme theme = PlotTheme::light();
    QCustomPlot* plot = m_plot.get();
    plot->setAttribute(Qt::WA_DontShowOnScreen);
    plot->resize(1600, 900);

    const int64_t pe = peakEvent(*m.replay);
    const QString file = QFileInfo(QString::fromStdString(document.path)).fileName();
    m_title = QObject::tr("%1 — peak %2 requested at %3 (event %4)")
                  .arg(file, bytesText(m.replay->peakRequested.bytes),
                       secondsText(m.x(std::max<int64_t>(pe, 0), XAxisMode::Time)), countText(pe));
    QString subtitle = QObject::tr("device %1 · %2 reserved at most · %3 events · %4 allocations")
                           .arg(m.device)
                           .arg(bytesText(m.replay->peakReserved.bytes), countText(m.eventCount()),
                                countText(static_cast<int64_t>(m.replay->allocations.size())));
    if (document.attributed() && m.phaseAt(pe) != Phase::Other)
        subtitle = QObject::tr("peak in %1 · ").arg(phaseText(m.phaseAt(pe))) + subtitle;

    QCPAxisRect* main = plot->axisRect();
    main->insetLayout()->take(plot->legend);
    plot->plotLayout()->take(main);
    plot->plotLayout()->simplify();
    plot->plotLayout()->clear();
    QFont titleFont = theme.font;
    titleFont.setPointSizeF(theme.font.pointSizeF() * 1.45);
    titleFont.setBold(true);
    auto* titleElement = new QCPTextElement(plot, m_title, titleFont);
    titleElement->setTextColor(theme.foreground);
    auto* subElement = new QCPTextElement(plot, subtitle, theme.font);
    subElement->setTextColor(theme.muted);
    plot->plotLayout()->addElement(0, 0, titleElement);
    plot->plotLayout()->addElement(1, 0, subElement);
    placeCenteredLegend(plot, plot->plotLayout(), 2);
    auto* body = new QCPLayoutGrid;
    plot->plotLayout()->addElement(3, 0, body);
    plot->plotLayout()->setRowStretchFactor(0, 0.001);
    plot->plotLayout()->setRowStretchFactor(1, 0.001);
    plot->plotLayout()->setRowStretchFactor(2, 0.001);
    plot->plotLayout()->setRowSpacing(2);
    body->addElement(0, 0, main);
    auto* bars = new QCPAxisRect(plot);
    body->addElement(0, 1, bars);
    body->setColumnStretchFactor(0, 3.0);
    body->setColumnStretchFactor(1, 1.0);
    body->setColumnSpacing(24);

    plot->legend->setVisible(true);
    plot->legend->setColumnSpacing(16);
    plot->legend->setMargins(QMargins(8, 2, 8, 2));

    m_plotter = std::make_unique<TimelinePlotter>(plot, main);
    m_plotter->setModel(&m, XAxisMode::Time, document.attributed());
    m_plotter->applyTheme(theme);
    main->axis(QCPAxis::atBottom)->setTicker(QSharedPointer<TimeAxisTicker>(new TimeAxisTicker));
    main->axis(QCPAxis::atBottom)->setLabel(QObject::tr("Time since the first event"));
    main->axis(QCPAxis::atLeft)->setTicker(QSharedPointer<ByteAxisTicker>(new ByteAxisTicker));
    main->axis(QCPAxis::atLeft)->setLabel(QObject::tr("GPU memory"));
    const double span = std::max(m.xMax(XAxisMode::Time), 1e-6);
    main->axis(QCPAxis::atBottom)->setRange(-span * 0.01, span * 1.01);
    const double top = static_cast<double>(
        std::max<int64_t>({m.replay->peakRequested.bytes, m.replay->peakReserved.bytes, 1024}));
    main->axis(QCPAxis::atLeft)->setRange(0, top * 1.2);
    QObject::connect(plot, &QCustomPlot::afterLayout, plot, [this] { m_plotter->refresh(); });

    // Iteration boundaries.
    auto* lines = new BandLayer(plot, main, BandLayer::Style::Lines);
    lines->setLayer(QStringLiteral("axes"));
    lines->setBands(m.iterationLines[static_cast<size_t>(XAxisMode::Time)]);
    lines->setColors({theme.muted});
    lines->setLabeler([](const Band& b) { return QObject::tr("iter %1").arg(b.source + 1); });
    lines->setFont(theme.smallFont);
    lines->setTextColor(theme.muted);

    auto mark = [&](int64_t event, int64_t bytes, const QString& text, const QColor& color) {
        const double x = m.x(std::max<int64_t>(event, 0), XAxisMode::Time);
        auto* line = new QCPItemStraightLine(plot);
        line->setClipAxisRect(main);
        line->point1->setAxes(main->axis(QCPAxis::atBottom), main->axis(QCPAxis::atLeft));
        line->point2->setAxes(main->axis(QCPAxis::atBottom), main->axis(QCPAxis::atLeft));
        line->point1->setCoords(x, 0);
        line->point2->setCoords(x, static_cast<double>(bytes));
        line->setPen(QPen(color, 1, Qt::DashLine));
        auto* tracer = new QCPItemTracer(plot);
        tracer->setClipAxisRect(main);
        tracer->position->setAxes(main->axis(QCPAxis::atBottom), main->axis(QCPAxis::atLeft));
        tracer->position->setCoords(x, static_cast<double>(bytes));
        tracer->setStyle(QCPItemTracer::tsCircle);
        tracer->setSize(11);
        tracer->setPen(QPen(color, 2.2));
        tracer->setBrush(Qt::white);
        auto* label = new QCPItemText(plot);
        label->setClipAxisRect(main);
        label->position->setParentAnchor(tracer->position);
        label->position->setType(QCPItemPosition::ptAbsolute);
        const bool right = x > span * 0.62;
        label->setPositionAlignment((right ? Qt::AlignRight : Qt::AlignLeft) | Qt::AlignBottom);
        label->position->setCoords(right ? -10 : 10, -8);
        label->setText(text);
        label->setFont(theme.boldFont);
        label->setColor(color);
        label->setPen(QPen(color, 1));
        label->setBrush(QColor(255, 255, 255, 230));
        label->setPadding(QMargins(6, 3, 6, 3));
        label->setTextAlignment(Qt::AlignLeft);
    };
    QString peakText = QObject::tr("Peak %1\nat %2")
                           .arg(bytesText(m.replay->peakRequested.bytes),
                                secondsText(m.x(std::max<int64_t>(pe, 0), XAxisMode::Time)));
    if (document.attributed() && m.phaseAt(pe) != Phase::Other)
        peakText += QStringLiteral(" · ") + phaseText(m.phaseAt(pe));
    mark(pe, m.replay->peakRequested.bytes, peakText, theme.peak);
    if (!at.globalPeak)
        mark(at.event, at.requested,
             QObject::tr("Reported point %1\nat %2")
                 .arg(bytesText(at.requested), secondsText(static_cast<double>(at.relativeUs) / 1e6)),
             theme.accent);

    // Breakdown of the reported point: one horizontal bar per category, largest on top.
    std::vector<Category> cats;
    for (Category c : kAllCategories)
        if (at.byCategory[static_cast<size_t>(c)] > 0)
            cats.push_back(c);
    std::stable_sort(cats.begin(), cats.end(), [&](Category a, Category b) {
        return at.byCategory[static_cast<size_t>(a)] < at.byCategory[static_cast<size_t>(b)];
    });
    auto ticker = QSharedPointer<QCPAxisTickerText>(new QCPAxisTickerText);
    QCPAxis* key = bars->axis(QCPAxis::atLeft);
    QCPAxis* value = bars->axis(QCPAxis::atBottom);
    int64_t maxBytes = 1;
    for (size_t i = 0; i < cats.size(); ++i) {
        const Category c = cats[i];
        const int64_t b = at.byCategory[static_cast<size_t>(c)];
        maxBytes = std::max(maxBytes, b);
        auto* bar = new QCPBars(key, value);
        bar->removeFromLegend();
        bar->setWidth(0.7);
        bar->setPen(Qt::NoPen);
        bar->setBrush(categoryQColor(c));
        bar->addData(static_cast<double>(i + 1), static_cast<double>(b));
        ticker->addTick(static_cast<double>(i + 1),
                        document.attributed() || c != Category::Other ? categoryText(c) : QObject::tr("Not attributed"));
        auto* text = new QCPItemText(plot);
        text->setClipAxisRect(bars);
        text->position->setAxes(value, key);
        text->position->setCoords(static_cast<double>(b), static_cast<double>(i + 1));
        text->setPositionAlignment(Qt::AlignLeft | Qt::AlignVCenter);
        text->setPadding(QMargins(6, 0, 0, 0));
        text->setText(QStringLiteral("%1  %2").arg(
            bytesText(b), percentText(at.requested ? static_cast<double>(b) / static_cast<double>(at.requested) : 0)));
        text->setFont(theme.font);
        text->setColor(theme.foreground);
    }
    key->setTicker(ticker);
    key->setRange(0.3, static_cast<double>(cats.size()) + 0.7);
    key->setTickLength(0, 0);
    key->setSubTicks(false);
    key->grid()->setVisible(false);
    value->setTicker(QSharedPointer<ByteAxisTicker>(new ByteAxisTicker));
    // Room for the longest bar's "bytes  share" label (about 140 px of a bar area at least
    // 500 px wide), not twice the bar: the axis reads as the bars' scale.
    value->setRange(0, static_cast<double>(maxBytes) * 1.4);
    value->ticker()->setTickCount(3);
    value->setLabel(
        at.globalPeak
            ? QObject::tr("At the peak: %1").arg(bytesText(at.requested))
            : QObject::tr("At %1: %2").arg(secondsText(static_cast<double>(at.relativeUs) / 1e6), bytesText(at.requested)));
    // The findings, one line each, under the charts.
    if (document.diagnosis()) {
        constexpr int kMaxLines = 4;
        int more = 0;
        for (const Diagnostic& d : document.diagnosis()->items) {
            if (d.deviceIndex != deviceIndex)
                continue;
            if (m_findings.size() >= kMaxLines) {
                ++more;
                continue;
            }
            const std::string_view label = diagnosticKindLabel(d.kind);
            const std::string_view severity = severityName(d.severity);
            m_findings << QStringLiteral("%1 · %2: %3")
                              .arg(QString::fromLatin1(severity.data(), static_cast<qsizetype>(severity.size())).toUpper(),
                                   QString::fromLatin1(label.data(), static_cast<qsizetype>(label.size())),
                                   QString::fromStdString(d.message));
        }
        if (more)
            m_findings << QObject::tr("… and %n more (report.json, memscope diagnose)", nullptr, more);
        if (!m_findings.isEmpty()) {
            auto* findings = new QCPTextElement(
                plot, QObject::tr("Findings") + QLatin1Char('\n') + m_findings.join(QLatin1Char('\n')), theme.font);
            findings->setTextFlags(Qt::AlignLeft | Qt::AlignVCenter);
            findings->setTextColor(theme.foreground);
            findings->setMargins(QMargins(12, 10, 12, 6));
            plot->plotLayout()->addElement(4, 0, findings);
            plot->plotLayout()->setRowStretchFactor(4, 0.001);
        }
    }
    theme.applyTo(plot);
    m_plotter->applyTheme(theme);
    value->setLabelFont(theme.boldFont);
}

ReportChart::~ReportChart() = default;

bool ReportChart::savePng(const QString& path, int width, int height)
{
    m_plot->resize(width, height);
    return m_plot->savePng(path, width, height, 1.0);
}

} // namespace memscope
