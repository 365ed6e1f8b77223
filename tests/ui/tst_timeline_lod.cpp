// The category timeline's levels of detail draw what the full data would: per pixel column,
// the phase band that covers most of it, and the area column at the highest point in it.
#include "ui/plot/band_layer.h"
#include "ui/document/band_lod.h"
#include "ui/document/band_set.h"
#include "ui/plot/category_areas_layer.h"
#include "ui/plot/category_timeline_view.h"
#include "ui/plot/column_events.h"
#include "ui/document/document.h"
#include "replay/minmax_pyramid.h"
#include "ui/plot/peak_marker_layer.h"
#include "ui/style/plot_theme.h"
#include "query/point_report.h"
#include "replay/replay.h"
#include "ui/style/text_format.h"
#include "ui/plot/timeline_plotter.h"

#include <QFileInfo>
#include <QtTest>
#include <qcustomplot.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <random>
#include <tuple>

using namespace memscope;

namespace {

std::shared_ptr<const Document> sample()
{
    static const std::shared_ptr<const Document> doc = analyzeFile(MEMSCOPE_SAMPLES_DIR "/many_small.pickle");
    return doc;
}

// A view of the sample, shown, at the size the frame tests use.
void showSample(CategoryTimelineView& view)
{
    view.resize(1200, 500);
    view.setDocument(sample(), 0);
    view.show();
}

// The value a step line (lsStepLeft) holds at x: its last point at or before x.
std::optional<double> stepValueAt(const QCPGraph* g, double x)
{
    std::optional<double> v;
    for (auto it = g->data()->constBegin(); it != g->data()->constEnd() && it->key <= x; ++it)
        v = it->value;
    return v;
}

// How much of x range [a, b] a band [x0, x1] covers.
double overlap(double x0, double x1, double a, double b) { return std::max(0.0, std::min(x1, b) - std::max(x0, a)); }

} // namespace

class TestTimelineLod : public QObject {
    Q_OBJECT
private slots:
    void phaseColumns_data();
    void phaseColumns();
    void lodEdges();
    void coarseMatchesByBand_data();
    void coarseMatchesByBand();
    void coarseMatchesByBandOnSample();
    void tooltipsFromData();
    void iterationPeaks();
    void areaColumns_data();
    void areaColumns();
    void areasWhilePanning();
    void edgeSearch();
    void regressionNanEdgeInEventIndexMode();
    void pyramidMatchesAScan();
    void stepCurvesKeepEveryChange();
    void requestedLineAndHaze();
    void iterationLabelsKeepClear_data();
    void iterationLabelsKeepClear();
    void areasAddUpToRequestedLine_data();
    void areasAddUpToRequestedLine();
    void poolBands();
    void metadataLane();
};

void TestTimelineLod::phaseColumns_data()
{
    QTest::addColumn<double>("from"); // fractions of the trace's x extent
    QTest::addColumn<double>("to");
    QTest::addColumn<int>("columns");
    QTest::newRow("whole trace, 1600 px") << -0.01 << 1.01 << 1600;
    QTest::newRow("whole trace, 37 px") << 0.0 << 1.0 << 37;
    QTest::newRow("whole trace, 1 px") << 0.0 << 1.0 << 1;
    QTest::newRow("middle 2%, 1600 px") << 0.49 << 0.51 << 1600;
    QTest::newRow("middle 0.05%, 900 px") << 0.5 << 0.5005 << 900;
    QTest::newRow("half outside on the left") << -0.5 << 0.5 << 800;
    QTest::newRow("half outside on the right") << 0.7 << 1.7 << 800;
    QTest::newRow("entirely after the data") << 2.0 << 3.0 << 400;
}

// The merged bands of the phase lane against the phases of the attribution itself.
void TestTimelineLod::phaseColumns()
{
    QFETCH(double, from);
    QFETCH(double, to);
    QFETCH(int, columns);
    const auto doc = sample();
    QVERIFY(doc && !doc->devices.empty());
    CategoryTimelineView view;
    view.resize(1600, 600);
    view.setDocument(doc, 0);
    const DeviceModel& m = doc->devices[0];
    const int64_t n = m.eventCount();
    QVERIFY(n > 0);
    const auto& its = m.attribution->iterations;
    QVERIFY2(its.size() >= 20, "many_small has 40 training steps");

    for (XAxisMode mode : {XAxisMode::Time, XAxisMode::EventIndex}) {
        view.setXAxisMode(mode);
        const double lo0 = m.xMin(mode), hi0 = m.xMax(mode);
        const double lower = lo0 + (hi0 - lo0) * from, upper = lo0 + (hi0 - lo0) * to;
        const BandLayer* lanes = view.laneBands();
        const std::vector<int64_t> shown = lanes->columnBands(0, lower, upper, columns);
        QCOMPARE(static_cast<int>(shown.size()), columns);
        // The phases, straight from the data, as the lane places them.
        struct Range {
            double x0, x1;
            Phase phase;
        };
        std::vector<Range> phases;
        for (const Iteration& it : its)
            for (const PhaseRange& p : it.phases)
                if (p.lastEvent >= p.firstEvent)
                    phases.push_back({m.x(p.firstEvent, mode), m.x(std::min(p.lastEvent + 1, n - 1), mode), p.phase});
        QVERIFY(!phases.empty());
        int drawn = 0;
        for (int c = 0; c < columns; ++c) {
            const double a = lower + (upper - lower) * c / columns;
            const double b = lower + (upper - lower) * (c + 1) / columns;
            std::map<int, double> cover;
            double best = 0;
            for (const Range& r : phases) {
                if (r.x1 < a || r.x0 > b)
                    continue;
                double& len = cover[static_cast<int>(r.phase)];
                len += overlap(r.x0, r.x1, a, b);
                best = std::max(best, len);
            }
            const int64_t band = shown[static_cast<size_t>(c)];
            const double tolerance = 1e-6 * (b - a);
            if (best <= tolerance) {
                // Nothing covers the column (instants and edges aside): nothing, or an instant in it, is shown.
                if (band != BandLod::kNone) {
                    const BandLayer::Band& bd = lanes->bands()[static_cast<size_t>(band)];
                    QVERIFY(bd.x1 >= a - tolerance && bd.x0 <= b + tolerance);
                }
                continue;
            }
            QVERIFY2(band >= 0 && band < static_cast<int64_t>(lanes->bands().size()), qPrintable(QString::number(c)));
            const BandLayer::Band& bd = lanes->bands()[static_cast<size_t>(band)];
            QCOMPARE(bd.row, 0);
            QVERIFY(bd.x1 >= a - tolerance && bd.x0 <= b + tolerance); // the band shown lies in the column
            const double mine = cover.count(bd.tag) ? cover[bd.tag] : 0.0;
            // The shown phase covers most of the column (ties allowed).
            QVERIFY2(mine >= best - tolerance,
                     qPrintable(QStringLiteral("column %1: shown %2 covers %3, best %4").arg(c).arg(bd.tag).arg(mine).arg(best)));
            ++drawn;
        }
        if (from <= 0 && to >= 1)
            QVERIFY(drawn > 0);
        else if (from >= 1.0)
            QCOMPARE(drawn, 0);
    }
}

// Edge cases of the merge itself: empty input, zero-width views, a lone instant, far away ranges.
void TestTimelineLod::lodEdges()
{
    const std::vector<BandLod::Input> none;
    const std::vector<double> noneMax;
    QVERIFY(BandLod::columnsByBand(none, noneMax, 0, 1, 10) == std::vector<int64_t>(10, BandLod::kNone));
    const std::vector<BandLod::Input> one{{5.0, 5.0, 1u}};
    const std::vector<double> oneMax{5.0};
    QVERIFY(BandLod::columnsByBand(one, oneMax, 0, 10, 0).empty());
    QVERIFY(BandLod::columnsByBand(one, oneMax, 0, 10, -3).empty());
    QVERIFY(BandLod::columnsByBand(one, oneMax, 3, 3, 4) == std::vector<int64_t>(4, BandLod::kNone)); // zero-width view
    QVERIFY(BandLod::columnsByBand(one, oneMax, 4, 2, 4) == std::vector<int64_t>(4, BandLod::kNone)); // reversed view
    std::vector<int64_t> lone = BandLod::columnsByBand(one, oneMax, 0, 10, 10);
    QCOMPARE(lone[5], int64_t{0}); // a zero-width band still shows in its column
    QCOMPARE(std::count(lone.begin(), lone.end(), BandLod::kNone), 9L);
    QVERIFY(BandLod::columnsByBand(one, oneMax, 0, 10, 1) == std::vector<int64_t>{0});
    QVERIFY(BandLod::columnsByBand(one, oneMax, 6, 7, 3) == std::vector<int64_t>(3, BandLod::kNone));
    QVERIFY(BandLod::columnsByBand(one, oneMax, -7, -6, 3) == std::vector<int64_t>(3, BandLod::kNone));
    const std::vector<BandLod::Input> edge{{10.0, 20.0, 1u}};
    const std::vector<double> edgeMax{20.0};
    QCOMPARE(BandLod::columnsByBand(edge, edgeMax, 0, 10, 5).back(), int64_t{0}); // touches the view's right edge
    // Three colours in one pixel: the one covering most wins, even split in many bands.
    const std::vector<BandLod::Input> mixed{{0.0, 0.3, 1u}, {0.3, 0.4, 2u}, {0.4, 0.7, 3u},
                                            {0.7, 0.8, 2u}, {0.8, 0.9, 2u}, {0.9, 1.0, 2u}};
    const std::vector<double> mixedMax{0.3, 0.4, 0.7, 0.8, 0.9, 1.0};
    const std::vector<int64_t> merged = BandLod::columnsByBand(mixed, mixedMax, 0, 1, 1);
    QCOMPARE(merged.size(), size_t{1});
    QCOMPARE(mixed[static_cast<size_t>(merged[0])].key, 2u); // 0.4 of colour 2 beats 0.3 and 0.3
    const std::vector<BandLod::Input> nan{{std::nan(""), 1.0, 1u}};
    const std::vector<double> nanMax{1.0};
    QVERIFY(BandLod::columnsByBand(nan, nanMax, 0, 1, 2) == std::vector<int64_t>(2, BandLod::kNone));
    QVERIFY(BandLod::columnsByBand(one, noneMax, 0, 10, 2) == std::vector<int64_t>(2, BandLod::kNone)); // mismatched sizes
}

// Bands for the coarse levels' tests. Integer coordinates, views of integer bounds and
// power-of-two widths: every length and cover is exact, so the coarse levels must give the
// very same band per column as the band-by-band reference, ties included.
std::vector<BandLod::Input> makeBands(const QString& pattern, int n, uint32_t seed)
{
    std::mt19937 rng(seed);
    std::vector<BandLod::Input> bands;
    double x = 0;
    for (int i = 0; i < n; ++i) {
        BandLod::Input b;
        if (pattern == QLatin1String("random")) { // gaps, zero widths, three keys
            x += static_cast<double>(rng() % 3);
            b = {x, x + static_cast<double>(rng() % 4), static_cast<uint32_t>(rng() % 3)};
            x = b.x1;
        } else if (pattern == QLatin1String("alternating")) { // two keys of equal lengths: ties everywhere
            b = {x, x + 2, static_cast<uint32_t>(i % 2)};
            x += 2;
        } else if (pattern == QLatin1String("instants")) { // zero widths only, several at one x
            if (rng() % 2)
                x += 1;
            b = {x, x, static_cast<uint32_t>(rng() % 4)};
        } else if (pattern == QLatin1String("overlapping")) { // long bands over short ones
            x += static_cast<double>(rng() % 2);
            const double len = rng() % 50 == 0 ? static_cast<double>(rng() % 4096) : static_cast<double>(rng() % 3);
            b = {x, x + len, static_cast<uint32_t>(rng() % 5)};
        } else if (pattern == QLatin1String("irregular")) { // reversed and non-finite bands among regular ones
            x += 1;
            b = {x, x + static_cast<double>(rng() % 3), static_cast<uint32_t>(rng() % 2)};
            if (rng() % 97 == 0)
                b.x1 = b.x0 - 1;
            if (rng() % 101 == 0)
                b.x1 = std::numeric_limits<double>::infinity();
        }
        bands.push_back(b);
    }
    return bands;
}

void TestTimelineLod::coarseMatchesByBand_data()
{
    QTest::addColumn<QString>("pattern");
    QTest::addColumn<int>("bands");
    for (const char* p : {"random", "alternating", "instants", "overlapping", "irregular"})
        for (int n : {1, 2, 15, 16, 17, 255, 256, 257, 5000, 70000})
            QTest::addRow("%s, %d bands", p, n) << QString::fromLatin1(p) << n;
}

// The coarse levels against the band-by-band reference, on views across the data, at its
// edges, inside one band and around block edges, from 1 to 1024 columns.
void TestTimelineLod::coarseMatchesByBand()
{
    QFETCH(QString, pattern);
    QFETCH(int, bands);
    const BandLod lod(makeBands(pattern, bands, static_cast<uint32_t>(bands) * 31u + static_cast<uint32_t>(pattern.size())));
    const std::vector<BandLod::Input>& in = lod.bands();
    QCOMPARE(static_cast<int>(in.size()), bands);
    QCOMPARE(lod.maxX1().size(), in.size());
    double last = 0; // the greatest finite x1
    for (const BandLod::Input& b : in)
        if (std::isfinite(b.x1))
            last = std::max(last, b.x1);
    std::mt19937 rng(7);
    struct View {
        double lower;
        int log2Span;
        int columns;
    };
    std::vector<View> views;
    int whole = 0;
    while ((1 << whole) < last + 2)
        ++whole;
    for (int columns : {1, 7, 64, 1024}) {
        views.push_back({0, whole, columns}); // the whole row
        views.push_back({-static_cast<double>(1 << whole) / 2, whole, columns}); // half before the first band
        views.push_back({std::floor(last / 2), whole, columns}); // half past the last
        views.push_back({std::floor(last) + 1, 4, columns}); // entirely after
        views.push_back({-64, 5, columns}); // entirely before
        for (int k = 0; k < 12; ++k) // random integer positions, spans from 1 to the whole row
            views.push_back({static_cast<double>(rng() % static_cast<uint32_t>(last + 2)) - 1,
                             static_cast<int>(rng() % static_cast<uint32_t>(whole + 1)), columns});
        for (double at : {16.0, 256.0, 4096.0}) // starting on block edges (in band index ≈ x for most patterns)
            views.push_back({at, std::max(0, whole - 2), columns});
    }
    int compared = 0, shown = 0;
    for (const View& v : views) {
        const double upper = v.lower + std::ldexp(1.0, v.log2Span);
        const std::vector<int64_t> coarse = lod.columns(v.lower, upper, v.columns);
        const std::vector<int64_t> byBand = BandLod::columnsByBand(in, lod.maxX1(), v.lower, upper, v.columns);
        QCOMPARE(coarse.size(), static_cast<size_t>(v.columns));
        for (int c = 0; c < v.columns; ++c) {
            const int64_t a = coarse[static_cast<size_t>(c)];
            const int64_t b = byBand[static_cast<size_t>(c)];
            if (a != b)
                QFAIL(qPrintable(
                    QStringLiteral(
                        "view [%1, %2] in %3 columns, column %4: coarse shows band %5 (key %6), band by band %7 (key %8)")
                        .arg(v.lower)
                        .arg(upper)
                        .arg(v.columns)
                        .arg(c)
                        .arg(a)
                        .arg(a >= 0 ? static_cast<int>(in[static_cast<size_t>(a)].key) : -1)
                        .arg(b)
                        .arg(b >= 0 ? static_cast<int>(in[static_cast<size_t>(b)].key) : -1)));
            ++compared;
            shown += a != BandLod::kNone;
        }
    }
    QVERIFY(compared > 0);
    if (pattern != QLatin1String("irregular") || bands > 200)
        QVERIFY(shown > 0); // the views do show bands
}

// The lanes of a real recording (phases, annotations, metadata), both x axes: the coarse
// levels show the same band as band by band in every column of views across the trace.
void TestTimelineLod::coarseMatchesByBandOnSample()
{
    int views = 0, representativeDiffers = 0;
    for (const char* name : {"/many_small.pickle", "/loss_leak.pickle", "/llm_bs16.pickle"}) {
        const auto doc = analyzeFile(std::string(MEMSCOPE_SAMPLES_DIR) + name);
        QVERIFY(doc && !doc->devices.empty());
        const DeviceModel& m = doc->devices[0];
        for (XAxisMode mode : {XAxisMode::Time, XAxisMode::EventIndex}) {
            const BandSet& set = *m.laneBands[static_cast<size_t>(mode)];
            const double lo0 = m.xMin(mode), hi0 = m.xMax(mode);
            for (int row = 0; row < set.rows(); ++row) {
                std::vector<BandLod::Input> in;
                for (size_t i = set.rowBegin(row); i < set.rowEnd(row); ++i)
                    in.push_back({set.bands()[i].x0, set.bands()[i].x1, set.bands()[i].style});
                std::vector<double> maxX1(in.size());
                for (size_t i = 0; i < in.size(); ++i)
                    maxX1[i] = i ? std::max(maxX1[i - 1], in[i].x1) : in[i].x1;
                for (auto [from, to] : {std::pair{0.0, 1.0}, {-0.01, 1.01}, {-0.5, 0.5}, {0.7, 1.7}, {0.49, 0.51}, {0.3, 0.3001}})
                    for (int columns : {1, 5, 37, 300, 1600}) {
                        const double lower = lo0 + (hi0 - lo0) * from, upper = lo0 + (hi0 - lo0) * to;
                        std::vector<int64_t> expect = BandLod::columnsByBand(in, maxX1, lower, upper, columns);
                        for (int64_t& i : expect)
                            if (i != BandLod::kNone)
                                i += static_cast<int64_t>(set.rowBegin(row));
                        const std::vector<int64_t> got = set.columnBands(row, lower, upper, columns);
                        // The picture is the style per column. The band representing it may be
                        // another of the same length, where the two paths' covers round apart.
                        QCOMPARE(got.size(), expect.size());
                        for (size_t c = 0; c < got.size(); ++c) {
                            if (got[c] == expect[c])
                                continue;
                            QVERIFY2(got[c] >= 0 && expect[c] >= 0,
                                     qPrintable(QStringLiteral("%1 row %2 [%3, %4] %5 columns: column %6 shown by one path only")
                                                    .arg(name)
                                                    .arg(row)
                                                    .arg(from)
                                                    .arg(to)
                                                    .arg(columns)
                                                    .arg(c)));
                            const Band& g = set.bands()[static_cast<size_t>(got[c])];
                            const Band& e = set.bands()[static_cast<size_t>(expect[c])];
                            QCOMPARE(g.style, e.style);
                            QVERIFY(std::fabs((g.x1 - g.x0) - (e.x1 - e.x0)) <= 1e-9 * std::fabs(e.x1 - e.x0));
                            ++representativeDiffers;
                        }
                        ++views;
                    }
            }
        }
    }
    QVERIFY(views > 100);
    qInfo("%d views, %d columns represented by another band of equal length", views, representativeDiffers);
}

// Tooltips are made on hover from the band's iteration and events: the exact numbers.
void TestTimelineLod::tooltipsFromData()
{
    const auto doc = sample();
    CategoryTimelineView view;
    view.resize(1200, 500);
    view.setDocument(doc, 0);
    const DeviceModel& m = doc->devices[0];
    const BandLayer* lanes = view.laneBands();
    int phases = 0;
    for (const BandLayer::Band& b : lanes->bands()) {
        if (b.row != 0)
            continue;
        QVERIFY(b.source >= 0 && static_cast<size_t>(b.source) < m.attribution->iterations.size());
        const Iteration& it = m.attribution->iterations[static_cast<size_t>(b.source)];
        QVERIFY(b.firstEvent >= it.firstEvent && b.lastEvent <= it.lastEvent);
        const QString tip = view.bandTooltip(b);
        QVERIFY(tip.contains(phaseText(static_cast<Phase>(b.tag))));
        QVERIFY(tip.contains(QStringLiteral("iteration %1").arg(b.source + 1)));
        QVERIFY(tip.contains(countText(b.firstEvent)) && tip.contains(countText(b.lastEvent)));
        QVERIFY(tip.contains(secondsText(m.x(b.firstEvent, XAxisMode::Time))));
        ++phases;
    }
    QVERIFY(phases >= 40);
    // The annotation lane, in both x modes: one band per record_function range, at its times
    // (or events), styled by its name after any '#', with the name in its tooltip.
    QVERIFY2(m.annotations.size() >= 40, qPrintable(QString::number(m.annotations.size()))); // 160 starts and ends
    for (XAxisMode mode : {XAxisMode::Time, XAxisMode::EventIndex}) {
        view.setXAxisMode(mode);
        size_t annotations = 0;
        for (const BandLayer::Band& b : view.laneBands()->bands()) {
            if (b.row != 1)
                continue;
            ++annotations;
            QVERIFY(b.source >= 0 && static_cast<size_t>(b.source) < m.annotations.size());
            const AnnotationRange& a = m.annotations[static_cast<size_t>(b.source)];
            const std::string& name = a.name;
            QVERIFY(b.style >= kPhaseCount && b.style - kPhaseCount < m.annotationLabels.size());
            QCOMPARE(m.annotationLabels[b.style - kPhaseCount],
                     name.substr(name.find('#') == std::string::npos ? 0 : name.find('#') + 1));
            QCOMPARE(b.x0,
                     mode == XAxisMode::Time ? static_cast<double>(a.startUs - m.t0Us) / 1e6 : static_cast<double>(a.firstEvent));
            QVERIFY(view.bandTooltip(b).contains(QString::fromStdString(a.name).toHtmlEscaped()));
        }
        QCOMPARE(annotations, m.annotations.size());
    }
    BandLayer::Band stray;
    stray.source = 1 << 30;
    stray.row = 1;
    QVERIFY(view.bandTooltip(stray).isEmpty());
}

// Every iteration's peak is marked (but the global one, which has its own marker); a frame
// draws at most one marker per pixel and none outside the view.
void TestTimelineLod::iterationPeaks()
{
    const auto doc = sample();
    CategoryTimelineView view;
    view.resize(1200, 500);
    view.setDocument(doc, 0);
    const DeviceModel& m = doc->devices[0];
    const int64_t pe = peakEvent(*m.replay);
    std::vector<QPointF> expected;
    for (const Iteration& it : m.attribution->iterations)
        if (it.peak.event.valid() && it.peak.event.value != pe)
            expected.emplace_back(m.x(it.peak.event.value, XAxisMode::Time), static_cast<double>(it.peak.bytes));
    QVERIFY(expected.size() > 24); // the many-iterations path
    QVERIFY(view.peakMarkers()->points() == expected);
    view.show();
    view.plot()->replot(QCustomPlot::rpImmediateRefresh);
    const int all = view.peakMarkers()->drawnLastFrame();
    QVERIFY(all > 0 && all <= static_cast<int>(expected.size()));
    view.setXRange(m.xMax(XAxisMode::Time) * 3, m.xMax(XAxisMode::Time) * 4); // clamped back into the data
    view.plot()->replot(QCustomPlot::rpImmediateRefresh);
    QVERIFY(view.peakMarkers()->drawnLastFrame() <= all);
    view.setXAxisMode(XAxisMode::EventIndex);
    QCOMPARE(view.peakMarkers()->points().size(), expected.size());
    for (size_t i = 0; i < expected.size(); ++i)
        QCOMPARE(view.peakMarkers()->points()[i].y(), expected[i].y());
    QVERIFY(view.peakMarkers()->points().front().x() >= 0 &&
            view.peakMarkers()->points().back().x() < static_cast<double>(m.eventCount()));
}

void TestTimelineLod::areaColumns_data() { phaseColumns_data(); }

// Each area column stacks the categories at the event with the highest total in its pixel
// (or the state in force there): the column's top is the curve's max over the pixel.
void TestTimelineLod::areaColumns()
{
    QFETCH(double, from);
    QFETCH(double, to);
    QFETCH(int, columns);
    const auto doc = sample();
    const DeviceModel& m = doc->devices[0];
    const int64_t n = m.eventCount();
    for (XAxisMode mode : {XAxisMode::Time, XAxisMode::EventIndex}) {
        const double lo0 = m.xMin(mode), hi0 = m.xMax(mode);
        const double lower = lo0 + (hi0 - lo0) * from, upper = lo0 + (hi0 - lo0) * to;
        const std::vector<int64_t> cols = columnEvents(m, mode, lower, upper, columns);
        QCOMPARE(static_cast<int>(cols.size()), columns);
        int64_t first = m.firstEventAtOrAfter(lower, mode);
        for (int c = 0; c < columns; ++c) {
            const double right = lower + (upper - lower) * (c + 1) / columns;
            const int64_t last = std::min(m.firstEventAtOrAfter(right, mode), n);
            const int64_t e = cols[static_cast<size_t>(c)];
            if (e == kNoColumnEvent) {
                QVERIFY(last == 0 || first >= n);
            } else {
                QVERIFY(e >= 0 && e < n);
                if (last > first) {
                    int64_t top = std::numeric_limits<int64_t>::min();
                    for (int64_t i = first; i < last; ++i)
                        top = std::max(top, m.requestedAfter(i));
                    QCOMPARE(m.requestedAfter(e), top);
                } else {
                    QCOMPARE(e, first - 1);
                }
                int64_t stacked = 0;
                for (Category k : TimelinePlotter::kStackOrder)
                    if (m.categoryPresent[static_cast<size_t>(k)])
                        stacked += m.categoryBytes(k, e);
                QCOMPARE(stacked, m.requestedAfter(e)); // the stack's top is the requested total
            }
            first = std::max(first, last);
        }
    }
}

// The area image after a run of pans (which reuses the categories read for the frame
// before) is the image a fresh view renders for the same range.
void TestTimelineLod::areasWhilePanning()
{
    const auto doc = sample();
    const DeviceModel& m = doc->devices[0];
    CategoryTimelineView panned;
    showSample(panned);
    const double span = m.xMax(XAxisMode::Time);
    panned.setXRange(span * 0.3, span * 0.6);
    panned.plot()->replot(QCustomPlot::rpImmediateRefresh);
    int compared = 0;
    for (int i = 0; i < 12; ++i) {
        panned.panBy(i < 6 ? 0.0013 : -0.0021);
        panned.plot()->replot(QCustomPlot::rpImmediateRefresh);
        const auto [lo, hi] = panned.xRange();
        CategoryTimelineView fresh;
        showSample(fresh);
        fresh.setXRange(lo, hi);
        fresh.plot()->replot(QCustomPlot::rpImmediateRefresh);
        const CategoryAreasLayer* a = panned.plotter()->areas();
        const CategoryAreasLayer* b = fresh.plotter()->areas();
        QCOMPARE(a->columns(), b->columns());
        QVERIFY(!a->image().isNull());
        QVERIFY2(a->image() == b->image(), qPrintable(QStringLiteral("pan %1").arg(i)));
        ++compared;
    }
    QCOMPARE(compared, 12);
}

// firstEventsAtOrAfter (a frame's pixel edges), firstEventAtOrAfter and eventAtX (which
// search the compact time curve block by block) agree with a bisection of x() itself over
// all events: ascending edges over and beyond the data, repeats, every event's own x, a
// descending or NaN edge among them, both x modes.
void TestTimelineLod::edgeSearch()
{
    const DeviceModel& m = sample()->devices[0];
    const int64_t n = m.eventCount();
    QVERIFY(n > int64_t(CompactCurve::kBlock)); // more than one block of the time curve
    for (XAxisMode mode : {XAxisMode::Time, XAxisMode::EventIndex}) {
        const double lo0 = m.xMin(mode), hi0 = m.xMax(mode);
        std::vector<std::vector<double>> cases;
        for (auto [from, to, k] : {std::tuple{-0.1, 1.1, 1600}, std::tuple{0.0, 1.0, 7}, std::tuple{0.42, 0.4201, 900},
                                   std::tuple{0.5, 0.5, 5}, std::tuple{1.2, 1.5, 40}, std::tuple{-0.5, -0.2, 40}}) {
            std::vector<double> edges;
            for (int i = 0; i <= k; ++i)
                edges.push_back(lo0 + (hi0 - lo0) * (from + (to - from) * i / k));
            cases.push_back(edges);
        }
        std::vector<double> own; // events' own x, about 3000 of them, block edges included
        for (int64_t e = 0; e < n; e += std::max<int64_t>(1, n / 3000))
            own.push_back(m.x(e, mode));
        for (int64_t e : {int64_t(CompactCurve::kBlock) - 1, int64_t(CompactCurve::kBlock), n - 1})
            own.push_back(m.x(e, mode));
        std::sort(own.begin(), own.end());
        cases.push_back(own);
        std::vector<double> mixed = cases[1];
        mixed.insert(mixed.begin() + 3, lo0 + (hi0 - lo0) * 0.05); // goes back
        mixed.insert(mixed.begin() + 5, std::numeric_limits<double>::quiet_NaN());
        cases.push_back(mixed);
        std::vector<int64_t> all(static_cast<size_t>(n));
        std::iota(all.begin(), all.end(), int64_t(0));
        for (const auto& edges : cases) {
            const std::vector<int64_t> got = m.firstEventsAtOrAfter(edges, mode);
            QCOMPARE(got.size(), edges.size());
            for (size_t i = 0; i < edges.size(); ++i) {
                const double v = edges[i];
                const int64_t first = std::partition_point(all.begin(), all.end(), [&](int64_t e) { return m.x(e, mode) < v; }) -
                                      all.begin();
                const int64_t atX = std::partition_point(all.begin(), all.end(), [&](int64_t e) { return m.x(e, mode) <= v; }) -
                                    all.begin() - 1;
                QVERIFY2(got[i] == first && m.firstEventAtOrAfter(v, mode) == first,
                         qPrintable(QStringLiteral("edge %1 (%2): %3 and %4, bisecting x() %5")
                                        .arg(i)
                                        .arg(v)
                                        .arg(got[i])
                                        .arg(m.firstEventAtOrAfter(v, mode))
                                        .arg(first)));
                if (mode == XAxisMode::Time) // (index mode clamps and floors, not a search)
                    QCOMPARE(m.eventAtX(v, mode), atX);
            }
        }
    }
}

// Regression: in event-index mode a NaN x (an axis range not yet set) gave
// firstEventAtOrAfter == INT64_MIN (ceil(NaN) cast to an integer), an index callers then
// read arrays with. It is 0 now, as in time mode.
void TestTimelineLod::regressionNanEdgeInEventIndexMode()
{
    const DeviceModel& m = sample()->devices[0];
    const double nan = std::numeric_limits<double>::quiet_NaN();
    for (XAxisMode mode : {XAxisMode::EventIndex, XAxisMode::Time}) {
        QCOMPARE(m.firstEventAtOrAfter(nan, mode), int64_t(0));
        const std::vector<double> edges{0.0, nan, 1.0};
        for (int64_t e : m.firstEventsAtOrAfter(edges, mode))
            QVERIFY(e >= 0 && e <= m.eventCount());
    }
}

// Pyramid queries return the first minimum and the first maximum of any range, as a scan does.
void TestTimelineLod::pyramidMatchesAScan()
{
    const DeviceModel& m = sample()->devices[0];
    for (const bool requested : {true, false}) {
        const MinMaxPyramid p = requested ? MinMaxPyramid(&m.replay->requested) : MinMaxPyramid(&m.replay->reserved);
        const auto value = [&](int64_t i) {
            return requested ? m.replay->requested[static_cast<size_t>(i)] : m.replay->reserved[static_cast<size_t>(i)];
        };
        const int64_t n = p.size();
        QVERIFY(n > 70000); // four levels of blocks
        std::mt19937_64 rng(6);
        std::vector<std::pair<int64_t, int64_t>> ranges{{0, n},     {0, 1},        {n - 1, n}, {5, 5},
                                                        {17, 4113}, {4095, 69633}, {-3, 20},   {n - 20, n + 9}};
        for (int i = 0; i < 400; ++i) {
            const int64_t a = static_cast<int64_t>(rng() % static_cast<uint64_t>(n));
            const int64_t len = static_cast<int64_t>(rng() % (i < 200 ? 300 : static_cast<uint64_t>(n)));
            ranges.emplace_back(a, std::min(n, a + len));
        }
        for (auto [first, last] : ranges) {
            const MinMaxPyramid::Extremes e = p.query(first, last);
            const int64_t f = std::max<int64_t>(first, 0), l = std::min(last, n);
            int64_t mn = -1, mx = -1;
            for (int64_t i = f; i < l; ++i) {
                if (mn < 0 || value(i) < value(mn))
                    mn = i;
                if (mx < 0 || value(i) > value(mx))
                    mx = i;
            }
            QVERIFY2(e.minIndex == mn && e.maxIndex == mx, qPrintable(QStringLiteral("[%1, %2): %3/%4, scan %5/%6")
                                                                          .arg(first)
                                                                          .arg(last)
                                                                          .arg(e.minIndex)
                                                                          .arg(e.maxIndex)
                                                                          .arg(mn)
                                                                          .arg(mx)));
        }
    }
}

// The requested and reserved lines drop points that repeat the value before them (a step
// line draws nothing there) and keep every change of the sampled curve, and its last point.
void TestTimelineLod::stepCurvesKeepEveryChange()
{
    const auto doc = sample();
    const DeviceModel& m = doc->devices[0];
    CategoryTimelineView view;
    showSample(view);
    for (auto [from, to] : {std::pair{0.0, 1.0}, std::pair{0.3, 0.32}}) {
        const double span = m.xMax(XAxisMode::Time);
        view.setXRange(span * from, span * to);
        view.plot()->replot(QCustomPlot::rpImmediateRefresh);
        const QCPRange r = view.plot()->xAxis->range();
        const int pixels = view.mainRect()->width();
        struct Line {
            QCPGraph* graph;
            const MinMaxPyramid* pyramid;
            bool requested;
        };
        for (const Line& line : {Line{view.plotter()->requestedGraph(), &m.requested, true},
                                 Line{view.plotter()->reservedGraph(), &m.reserved, false}}) {
            std::vector<int64_t> events;
            std::vector<double> keys;
            if (line.requested) { // the requested line: one point a column, the areas' column events
                const ColumnLine cl = columnLine(
                    columnEvents(m, XAxisMode::Time, r.lower, r.upper, view.plotter()->columnCount()), r.lower, r.upper);
                events = cl.events;
                keys = cl.keys;
            } else {
                events = TimelinePlotter::sampleEvents(m, *line.pyramid, XAxisMode::Time, r.lower, r.upper, pixels);
                for (int64_t e : events)
                    keys.push_back(m.x(e, XAxisMode::Time));
            }
            QVERIFY(!events.empty());
            std::vector<std::pair<double, double>> changes; // the sampled curve's changes of value
            for (size_t i = 0; i < events.size(); ++i) {
                const int64_t e = events[i];
                const double v = static_cast<double>(line.requested ? m.replay->requested[static_cast<size_t>(e)]
                                                                    : m.replay->reserved[static_cast<size_t>(e)]);
                if (changes.empty() || changes.back().second != v)
                    changes.emplace_back(keys[i], v);
            }
            std::vector<std::pair<double, double>> drawn;
            for (auto it = line.graph->data()->constBegin(); it != line.graph->data()->constEnd(); ++it)
                drawn.emplace_back(it->key, it->value);
            QVERIFY(!drawn.empty());
            QCOMPARE(drawn.back().first, keys.back()); // the line runs to the last sample
            if (drawn.size() >= 2 && drawn[drawn.size() - 2].second == drawn.back().second)
                drawn.pop_back(); // that last point, when it only extends the line
            QCOMPARE(drawn.size(), changes.size());
            for (size_t i = 0; i < drawn.size(); ++i) {
                QCOMPARE(drawn[i].first, changes[i].first);
                QCOMPARE(drawn[i].second, changes[i].second);
            }
        }
    }
}

// The requested line has, in each pixel column, the highest total of all events in it (so
// no vertical line per pixel hides the areas), and the areas tint exactly the rows between a
// column's lowest and highest total.
void TestTimelineLod::requestedLineAndHaze()
{
    const auto doc = sample();
    const DeviceModel& m = doc->devices[0];
    const int64_t n = m.eventCount();
    CategoryTimelineView view;
    showSample(view);
    const double span = m.xMax(XAxisMode::Time);
    view.setXRange(span * 0.85, span * 1.0); // the training loop: thousands of events a pixel in places
    view.plot()->replot(QCustomPlot::rpImmediateRefresh);
    const QCPRange r = view.plot()->xAxis->range();
    const int pixels = view.mainRect()->width();
    const double scale = pixels / r.size();
    auto pixelOf = [&](double x) { return static_cast<int64_t>(std::floor((x - r.lower) * scale)); };
    std::map<int64_t, int64_t> highest; // pixel -> highest total among the events in it
    for (int64_t e = 0; e < n; ++e) {
        const int64_t p = pixelOf(m.x(e, XAxisMode::Time));
        if (p < 0 || p >= pixels)
            continue;
        auto [it, added] = highest.try_emplace(p, m.requestedAfter(e));
        if (!added)
            it->second = std::max(it->second, m.requestedAfter(e));
    }
    QCPGraph* line = view.plotter()->requestedGraph();
    QVERIFY(line->dataCount() <= pixels + 2);
    int busy = 0, carried = 0;
    int64_t before = -1; // the last event left of the column
    for (int p = 0; p < pixels; ++p) {
        const double left = r.lower + r.size() * p / pixels, right = r.lower + r.size() * (p + 1) / pixels;
        const std::optional<double> v = stepValueAt(line, (left + right) / 2);
        QVERIFY(v);
        if (highest.count(p)) { // the column's highest total
            QCOMPARE(static_cast<int64_t>(*v), highest[p]);
            ++busy;
        } else if (before >= 0) { // no event: the state carried in
            QCOMPARE(static_cast<int64_t>(*v), m.requestedAfter(before));
            ++carried;
        }
        while (before + 1 < n && m.x(before + 1, XAxisMode::Time) < right)
            ++before;
    }
    QVERIFY(busy > pixels / 4);
    Q_UNUSED(carried);

    // The haze: the same view rendered without it differs exactly in the rows it covers.
    CategoryAreasLayer* areas = view.plotter()->areas();
    const QImage hazy = areas->image();
    const std::vector<int64_t> cols = areas->columns();
    const std::vector<int64_t> low = areas->lowest();
    areas->setHaze(Qt::transparent);
    view.plot()->replot(QCustomPlot::rpImmediateRefresh);
    const QImage clear = areas->image();
    QCOMPARE(clear.size(), hazy.size());
    const QCPRange y = view.plot()->yAxis->range();
    const double rowsPerByte = clear.height() / y.size();
    int tinted = 0;
    for (int c = 0; c < clear.width(); ++c) {
        int r0 = clear.height(), r1 = clear.height();
        if (cols[static_cast<size_t>(c)] >= 0 && low[static_cast<size_t>(c)] >= 0) {
            r0 = std::max(0, static_cast<int>(std::lround(
                                 (y.upper - static_cast<double>(m.requestedAfter(cols[static_cast<size_t>(c)]))) * rowsPerByte)));
            r1 = std::min(clear.height(),
                          static_cast<int>(std::lround(
                              (y.upper - static_cast<double>(m.requestedAfter(low[static_cast<size_t>(c)]))) * rowsPerByte)));
        }
        for (int row = 0; row < clear.height(); ++row) {
            const bool inside = row >= r0 && row < r1;
            if (inside) {
                QVERIFY2(hazy.pixel(c, row) != clear.pixel(c, row),
                         qPrintable(QStringLiteral("column %1 row %2 not tinted").arg(c).arg(row)));
                QVERIFY(qGray(hazy.pixel(c, row)) < qGray(clear.pixel(c, row))); // darker (light theme)
                ++tinted;
            } else {
                QVERIFY2(hazy.pixel(c, row) == clear.pixel(c, row),
                         qPrintable(QStringLiteral("column %1 row %2 tinted").arg(c).arg(row)));
            }
        }
    }
    QVERIFY(tinted > 1000);
}

void TestTimelineLod::iterationLabelsKeepClear_data()
{
    QTest::addColumn<QString>("file");
    QTest::addColumn<int>("width");
    QTest::addColumn<bool>("range"); // the peak's iteration selected as a range
    for (const char* f :
         {MEMSCOPE_SAMPLES_DIR "/llm_bs16.pickle", MEMSCOPE_SAMPLES_DIR "/many_small.pickle",
          MEMSCOPE_TESTDATA_DIR "/lightning/pl_plain_32-true.pickle.gz",
          MEMSCOPE_TESTDATA_DIR "/lightning/pl_plain_bf16-mixed.pickle.gz", MEMSCOPE_TESTDATA_DIR "/ranks/ddp_rank0.pickle"})
        for (int width : {1000, 1600})
            for (bool range : {false, true})
                QTest::newRow(qPrintable(QStringLiteral("%1, %2 px%3")
                                             .arg(QFileInfo(QString::fromUtf8(f)).fileName().section(QLatin1Char('.'), 0, 0))
                                             .arg(width)
                                             .arg(range ? QStringLiteral(", range") : QString())))
                    << QString::fromUtf8(f) << width << range;
}

// Issue 29: the peak and range labels covered iteration labels, which piled up and dropped
// on Lightning (five steps in the last tenth of the run). On real recordings, at both window
// widths, with and without a range: the iteration lines' labels never overlap one another,
// the peak and range labels, the iterations' peak labels or the peak's line; labels are left
// out (thinned) where there is no room, never drawn over.
void TestTimelineLod::iterationLabelsKeepClear()
{
    QFETCH(QString, file);
    QFETCH(int, width);
    QFETCH(bool, range);
    const auto doc = analyzeFile(file.toStdString());
    QVERIFY(doc && !doc->devices.empty());
    CategoryTimelineView view;
    view.resize(width - 20, 420);
    view.setDocument(doc, 0);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    const DeviceModel& m = doc->devices[0];
    const auto& its = m.attribution->iterations;
    QVERIFY(!its.empty());
    if (range) {
        const int64_t pe = peakEvent(*m.replay);
        for (const Iteration& it : its)
            if (it.firstEvent <= pe && pe <= it.lastEvent)
                view.selectRange(it.firstEvent, it.lastEvent);
    }
    view.plot()->replot(QCustomPlot::rpImmediateRefresh);
    const std::vector<QRectF>& labels = view.iterationLines()->labelsDrawn();
    QVERIFY(!labels.empty());
    const std::vector<QRectF> obstacles = view.labelObstacles();
    QVERIFY(!obstacles.empty()); // the peak's label and line at least
    for (size_t i = 0; i < labels.size(); ++i) {
        for (size_t j = i + 1; j < labels.size(); ++j)
            QVERIFY2(!labels[i].intersects(labels[j]), qPrintable(QStringLiteral("labels %1 and %2 overlap").arg(i).arg(j)));
        for (const QRectF& o : obstacles)
            QVERIFY2(!labels[i].intersects(o), qPrintable(QStringLiteral("label %1 at (%2, %3) covers (%4, %5 %6x%7)")
                                                              .arg(i)
                                                              .arg(labels[i].left())
                                                              .arg(labels[i].top())
                                                              .arg(o.left())
                                                              .arg(o.top())
                                                              .arg(o.width())
                                                              .arg(o.height())));
    }
}

void TestTimelineLod::areasAddUpToRequestedLine_data()
{
    QTest::addColumn<QString>("file");
    QTest::addColumn<double>("from"); // fractions of the trace's x extent; both < 0: around its steepest drop
    QTest::addColumn<double>("to");
    const QStringList files{QStringLiteral(MEMSCOPE_SAMPLES_DIR "/many_small.pickle"),
                            QStringLiteral(MEMSCOPE_SAMPLES_DIR "/llm_bs16.pickle"),
                            QStringLiteral(MEMSCOPE_SAMPLES_DIR "/loss_leak.pickle"),
                            QStringLiteral(MEMSCOPE_TESTDATA_DIR "/lightning/pl_plain_32-true.pickle.gz")};
    for (const QString& f : files) {
        const QString name = QFileInfo(f).fileName().section(QLatin1Char('.'), 0, 0);
        const std::vector<std::tuple<const char*, double, double>> zooms{{"whole", 0.0, 1.0},
                                                                         {"half", 0.5, 1.0},
                                                                         {"tenth", 0.6, 0.7},
                                                                         {"hundredth", 0.71, 0.72},
                                                                         {"thousandth", 0.801, 0.802},
                                                                         {"drop, 40 events", -40, -40},
                                                                         {"drop, 400 events", -400, -400},
                                                                         {"drop, 4000 events", -4000, -4000}};
        for (const auto& [zoom, from, to] : zooms)
            QTest::newRow(qPrintable(name + QStringLiteral(", ") + QLatin1String(zoom))) << f << from << to;
    }
}

// Issue 29: at full zoom, white gaps showed between the stacked areas and the requested line
// around fast drops, as if some memory were unexplained: the line was reduced per pixel from
// its own samples (keeping a pixel's highest across the empty pixels after it), the areas from
// the column events. Now both come from columnEvents(). At every zoom of several real
// recordings, the categories stacked in each pixel column add up to the requested line's
// value over that column, and the image's top row there is the line's row (one row of
// rounding). Zooms around each recording's steepest drop (the largest fall from one event to
// the next) show it with a few to a few thousand events across the view.
void TestTimelineLod::areasAddUpToRequestedLine()
{
    QFETCH(QString, file);
    QFETCH(double, from);
    QFETCH(double, to);
    static std::map<QString, std::shared_ptr<const Document>> docs;
    if (!docs.count(file))
        docs[file] = analyzeFile(file.toStdString());
    const auto doc = docs[file];
    QVERIFY(doc && !doc->devices.empty());
    const DeviceModel& m = doc->devices[0];
    const int64_t n = m.eventCount();
    QVERIFY(n > 100);
    CategoryTimelineView view;
    view.resize(1200, 500);
    view.setDocument(doc, 0);
    view.show();
    const double span = m.xMax(XAxisMode::EventIndex) - m.xMin(XAxisMode::EventIndex);
    double lower, upper;
    if (from < 0) { // around the steepest drop, by event index
        int64_t drop = 1;
        for (int64_t e = 1; e < n; ++e)
            if (m.requestedAfter(e - 1) - m.requestedAfter(e) > m.requestedAfter(drop - 1) - m.requestedAfter(drop))
                drop = e;
        QVERIFY(m.requestedAfter(drop - 1) > m.requestedAfter(drop));
        lower = static_cast<double>(drop) + from / 2; // the drop in the middle, -from events across
        upper = static_cast<double>(drop) - to / 2;
    } else {
        lower = m.xMin(XAxisMode::EventIndex) + span * from;
        upper = m.xMin(XAxisMode::EventIndex) + span * to;
    }
    view.setXAxisMode(XAxisMode::EventIndex);
    view.setXRange(lower, upper);
    view.plot()->replot(QCustomPlot::rpImmediateRefresh);
    const QCPRange r = view.plot()->xAxis->range();
    const QCPRange y = view.plot()->yAxis->range();
    const CategoryAreasLayer* areas = view.plotter()->areas();
    const std::vector<int64_t>& cols = areas->columns();
    const QImage& image = areas->image();
    QCOMPARE(static_cast<int>(cols.size()), view.plotter()->columnCount());
    QCOMPARE(image.width(), view.plotter()->columnCount());
    const QCPGraph* line = view.plotter()->requestedGraph();
    const double rowsPerByte = image.height() / y.size();
    const int w = static_cast<int>(cols.size());
    int checked = 0, withImageTop = 0;
    for (int c = 0; c < w; ++c) {
        const int64_t e = cols[static_cast<size_t>(c)];
        if (e < 0)
            continue;
        int64_t stacked = 0;
        for (Category k : TimelinePlotter::kStackOrder)
            if (m.categoryPresent[static_cast<size_t>(k)])
                stacked += m.categoryBytes(k, e);
        const double center = r.lower + r.size() * (c + 0.5) / w;
        const std::optional<double> v = stepValueAt(line, center);
        QVERIFY2(v, qPrintable(QStringLiteral("column %1: no line").arg(c)));
        QVERIFY2(static_cast<int64_t>(*v) == stacked, qPrintable(QStringLiteral("column %1 (event %2): areas %3, line %4")
                                                                     .arg(c)
                                                                     .arg(e)
                                                                     .arg(stacked)
                                                                     .arg(static_cast<int64_t>(*v))));
        ++checked;
        // The image: the first painted row of the column is the line's row.
        const int lineRow = static_cast<int>(std::lround((y.upper - *v) * rowsPerByte));
        if (stacked <= 0 || lineRow >= image.height() - 1)
            continue;
        int top = 0;
        while (top < image.height() && qAlpha(image.pixel(c, top)) == 0)
            ++top;
        QVERIFY2(std::abs(top - lineRow) <= 1,
                 qPrintable(QStringLiteral("column %1: areas' top row %2, line's row %3").arg(c).arg(top).arg(lineRow)));
        ++withImageTop;
    }
    QVERIFY(checked > w / 2);
    QVERIFY(withImageTop > 0);
}

QTEST_MAIN(TestTimelineLod)
// A real CUDA-graph recording (tests/data/fields/fields_graph: the graph's private pool
// (1, 0)): one band in the legend, stacked on the requested line, as high as the pool's held
// bytes at every point it was given; a recording without pools has none.
void TestTimelineLod::poolBands()
{
    const auto doc = analyzeFile(MEMSCOPE_TESTDATA_DIR "/fields/fields_graph.pickle");
    CategoryTimelineView view;
    view.resize(1200, 500);
    view.setDocument(doc, 0);
    view.show();
    QTest::qWait(50);
    view.plot()->replot(QCustomPlot::rpImmediateRefresh);
    const DeviceModel& m = doc->devices[0];
    QCOMPARE(m.pools().pools.size(), size_t{1});
    const TimelinePlotter* plotter = view.plotter();
    QCOMPARE(plotter->poolGraphs().size(), size_t{1});
    QCPGraph* g = plotter->poolGraphs()[0];
    QCOMPARE(g->name(), QStringLiteral("Private pool 1 (CUDA graph)"));
    QVERIFY(g->channelFillGraph() == plotter->requestedGraph());
    QVERIFY(g->dataCount() > 10);
    const PoolUsage& pool = m.pools().pools[0];
    // One point a column, at the requested line's keys (the areas' column events).
    const QCPRange r = view.plot()->xAxis->range();
    const ColumnLine cl = columnLine(columnEvents(m, XAxisMode::Time, r.lower, r.upper, plotter->columnCount()), r.lower,
                                     r.upper);
    QCOMPARE(static_cast<size_t>(g->dataCount()), cl.events.size());
    int held = 0;
    size_t i = 0;
    for (auto it = g->data()->constBegin(); it != g->data()->constEnd(); ++it, ++i) {
        const int64_t e = cl.events[i];
        QCOMPARE(it->key, cl.keys[i]);
        QCOMPARE(it->value, static_cast<double>(m.requestedAfter(e) + std::max<int64_t>(0, pool.heldAfter(e))));
        held += it->value > static_cast<double>(m.requestedAfter(e));
    }
    QVERIFY(held > 0);
    QVERIFY(view.hoverText(m.eventCount() - 1).contains(QStringLiteral("Private pool 1 (CUDA graph)")));

    view.setDocument(sample(), 0);
    QVERIFY(view.plotter()->poolGraphs().empty());
}

// A real recording with torch.cuda.memory._set_memory_metadata per phase: a third lane whose
// bands are the metadata spans, labelled and tooltipped with their text; without metadata,
// two lanes.
void TestTimelineLod::metadataLane()
{
    const auto doc = analyzeFile(MEMSCOPE_TESTDATA_DIR "/fields/fields_metadata.pickle");
    CategoryTimelineView view;
    view.resize(1200, 500);
    view.setDocument(doc, 0);
    const DeviceModel& m = doc->devices[0];
    QCOMPARE(m.laneRows(), 3);
    QCOMPARE(view.laneBands()->rows(), 3);
    QCOMPARE(m.metadata().size(), size_t{16});
    size_t shown = 0;
    for (const BandLayer::Band& b : view.laneBands()->bands()) {
        if (b.row != 2)
            continue;
        const MetadataSpan& md = m.metadata()[static_cast<size_t>(b.source)];
        QCOMPARE(b.firstEvent, md.firstEvent);
        QCOMPARE(b.lastEvent, md.lastEvent);
        const std::string_view text = doc->snapshot().str(md.text);
        QVERIFY(
            view.bandTooltip(b).contains(QString::fromUtf8(text.data(), static_cast<qsizetype>(text.size())).toHtmlEscaped()));
        ++shown;
    }
    QCOMPARE(shown, size_t{16});
    view.setDocument(sample(), 0);
    QCOMPARE(view.laneBands()->rows(), 2);
}

#include "tst_timeline_lod.moc"
