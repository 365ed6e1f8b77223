// The comparison tab (issue 15): its table model (QAbstractItemModelTester), the plots on the
// normalised axis, the exports, and the three ways in (File > Compare…'s compareFiles,
// Ctrl+drop of several files) on real recordings.

#include "compare/comparison.h"
#include "ui/compare/comparison_table_model.h"
#include "ui/compare/comparison_view.h"
#include "analysis/analysis.h"
#include "ui/main_window.h"

#include <QAbstractItemModelTester>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFile>
#include <QFontMetrics>
#include <QImage>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMimeData>
#include <QSettings>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QUrl>
#include <qcustomplot.h>

using namespace memscope;

namespace {

QString compareData(const char* name) { return QStringLiteral(MEMSCOPE_TESTDATA_DIR "/compare/") + QLatin1String(name); }

std::shared_ptr<const Comparison> comparisonOf(const char* a, const char* b)
{
    const AnalysisOptions options{.load = {}, .until = AnalysisStage::Attributed};
    return compareRuns(analyze(AnalysisSource::file(compareData(a).toStdString()), options),
                       analyze(AnalysisSource::file(compareData(b).toStdString()), options));
}

qint64 bytesAt(const QAbstractItemModel& m, int row, int column)
{
    return m.data(m.index(row, column), ComparisonTableModel::BytesRole).toLongLong();
}

} // namespace

class TestComparisonView : public QObject {
    Q_OBJECT

    QTemporaryDir m_settings;
    std::shared_ptr<const Comparison> m_amp;

private slots:
    void initTestCase()
    {
        QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, m_settings.path());
        QCoreApplication::setOrganizationName(QStringLiteral("memscope-tests"));
        QCoreApplication::setApplicationName(QStringLiteral("memscope"));
        m_amp = comparisonOf("cmp_qwen_bs8_fp32.pickle", "cmp_qwen_bs8_amp.pickle");
    }

    void modelHoldsTheComparisonsFigures()
    {
        ComparisonTableModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(model.rowCount(), 0);
        model.setComparison(m_amp);
        QVERIFY(model.rowCount() > 10);
        QCOMPARE(model.columnCount(), int(ComparisonTableModel::ColumnCount));
        // Row 0: the peak, its bytes as report.json has them.
        QCOMPARE(bytesAt(model, 0, ComparisonTableModel::A), m_amp->a().peak.requested);
        QCOMPARE(bytesAt(model, 0, ComparisonTableModel::B), m_amp->b().peak.requested);
        QCOMPARE(bytesAt(model, 0, ComparisonTableModel::Delta), m_amp->peakDelta());
        QCOMPARE(model.data(model.index(0, ComparisonTableModel::Change)).toString(), QStringLiteral("Backward → Forward"));
        // The activations row shows the shrink.
        int activations = -1, sites = 0;
        for (int r = 0; r < model.rowCount(); ++r) {
            const QString what = model.data(model.index(r, ComparisonTableModel::What)).toString();
            if (what == QStringLiteral("At the peak: Activations"))
                activations = r;
            if (what.startsWith(QStringLiteral("Call site: ")))
                ++sites;
        }
        QVERIFY(activations > 0);
        QCOMPARE(bytesAt(model, activations, ComparisonTableModel::Delta), m_amp->categoryDelta(Category::Activation));
        QVERIFY(bytesAt(model, activations, ComparisonTableModel::Delta) < 0);
        QVERIFY(sites > 0);
        QVERIFY(model.data(model.index(activations, ComparisonTableModel::Delta)).toString().startsWith(QStringLiteral("−")));
        // The call-site rows repeat one user line (the loop's model call); their Op and Module
        // columns tell them apart, and stay empty on the other rows.
        QSet<QString> whats, named;
        int siteRows = 0;
        for (int r = 0; r < model.rowCount(); ++r) {
            const QString what = model.data(model.index(r, ComparisonTableModel::What)).toString();
            const QString op = model.data(model.index(r, ComparisonTableModel::Op)).toString();
            const QString module = model.data(model.index(r, ComparisonTableModel::Module)).toString();
            if (!what.startsWith(QStringLiteral("Call site: "))) {
                QVERIFY(op.isEmpty() && module.isEmpty());
                continue;
            }
            ++siteRows;
            whats << what;
            named << what + u'|' + op + u'|' + module + u'|' +
                         model.data(model.index(r, ComparisonTableModel::Change)).toString();
        }
        QVERIFY(whats.size() < siteRows / 2);
        QCOMPARE(named.size(), siteRows);
        QVERIFY(!model.headerData(ComparisonTableModel::Module, Qt::Horizontal, Qt::ToolTipRole).toString().isEmpty());
        // Reset to nothing and back, under the tester.
        model.setComparison(nullptr);
        QCOMPARE(model.rowCount(), 0);
        model.setComparison(comparisonOf("cmp_qwen_bs8_fp32.pickle", "cmp_qwen_bs8_ckpt.pickle"));
        QVERIFY(model.rowCount() > 10);
    }

    // Issue 29: in compare (the window at 1000x700 and comparison.png) the legends covered the
    // data, the y tick labels overprinted each other, the peak labels covered the phase names
    // and B − A's zero line struck through its phase names. At several sizes and pairs: each
    // legend lies outside its chart, tick labels are a text line apart, no peak label meets a
    // phase name, and a phase name the zero line crosses is drawn over it on a background.
    void chartsWithoutCollisions_data()
    {
        QTest::addColumn<QString>("b");
        QTest::addColumn<QSize>("size");
        QTest::newRow("amp, 1000x620") << QStringLiteral("cmp_qwen_bs8_amp.pickle") << QSize(1000, 620);
        QTest::newRow("amp, 1600x900") << QStringLiteral("cmp_qwen_bs8_amp.pickle") << QSize(1600, 900);
        QTest::newRow("ckpt, 1000x620") << QStringLiteral("cmp_qwen_bs8_ckpt.pickle") << QSize(1000, 620);
    }
    void chartsWithoutCollisions()
    {
        QFETCH(QString, b);
        QFETCH(QSize, size);
        ComparisonView view(comparisonOf("cmp_qwen_bs8_fp32.pickle", qPrintable(b)));
        view.resize(size);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        for (int p = 0; p < 3; ++p) {
            QCustomPlot* plot = view.plot(p);
            plot->replot(QCustomPlot::rpImmediateRefresh);
            const QRect chart = plot->axisRect()->rect();
            if (plot->legend->visible() && plot->legend->itemCount() > 0)
                QVERIFY2(!plot->legend->outerRect().intersects(chart),
                         qPrintable(QStringLiteral("plot %1: legend over the chart").arg(p)));
            // Tick labels: a line of text apart.
            const QVector<double> ticks = plot->yAxis->tickVector();
            QVERIFY(ticks.size() >= 2);
            const double gap = std::abs(plot->yAxis->coordToPixel(ticks[1]) - plot->yAxis->coordToPixel(ticks[0]));
            QVERIFY2(gap >= QFontMetrics(plot->yAxis->tickLabelFont()).height(),
                     qPrintable(QStringLiteral("plot %1: ticks %2 px apart").arg(p).arg(gap)));
            // The items: phase names (dotted-line tags, "fwd"/"bwd"/"step") and the peak label.
            std::vector<QRectF> phases, peaks;
            for (int i = 0; i < plot->itemCount(); ++i) {
                auto* t = qobject_cast<QCPItemText*>(plot->item(i));
                if (!t)
                    continue;
                QRectF r(t->topLeft->pixelPosition(), t->bottomRight->pixelPosition());
                r = r.adjusted(t->padding().left(), t->padding().top(), -t->padding().right(), -t->padding().bottom());
                if (t->text().startsWith(QStringLiteral("peak ")))
                    peaks.push_back(r);
                else if (chart.intersects(r.toRect())) {
                    phases.push_back(r);
                    if (p == 2)
                        QVERIFY(t->brush().style() != Qt::NoBrush && t->brush().color().alpha() > 128);
                }
            }
            QCOMPARE(peaks.size(), static_cast<size_t>(p < 2 ? 1 : 0));
            QVERIFY(!phases.empty());
            for (const QRectF& peak : peaks)
                for (const QRectF& phase : phases)
                    QVERIFY2(!peak.intersects(phase),
                             qPrintable(QStringLiteral("plot %1: the peak label meets a phase name").arg(p)));
        }
        // A and B − A keep one x pixel scale: their charts are as wide.
        QCOMPARE(view.plot(0)->axisRect()->width(), view.plot(1)->axisRect()->width());
        QCOMPARE(view.plot(0)->axisRect()->width(), view.plot(2)->axisRect()->width());
    }

    void viewPlotsBothRunsAndExports()
    {
        ComparisonView view(m_amp);
        view.resize(1200, 900);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        // A and B: a stacked area per category present; B − A: per-category lines and the total.
        QVERIFY(view.plot(0)->graphCount() >= 4);
        QVERIFY(view.plot(1)->graphCount() >= 4);
        QCPGraph* total = view.plot(2)->graph(view.plot(2)->graphCount() - 1);
        QCOMPARE(total->dataCount(), int(m_amp->curves.bins));
        // The top of A's stack reaches A's peak; both runs share the x range.
        QCPGraph* topA = view.plot(0)->graph(view.plot(0)->graphCount() - 1);
        double highest = 0;
        for (auto it = topA->data()->constBegin(); it != topA->data()->constEnd(); ++it)
            highest = std::max(highest, it->value);
        QCOMPARE(qint64(highest), m_amp->a().peak.requested);
        // Byte ticks land on binary steps and carry no ".00" ("40 GiB", not "40.00 GiB").
        for (int p = 0; p < 3; ++p) {
            view.plot(p)->replot(QCustomPlot::rpImmediateRefresh);
            const QVector<QString> labels = view.plot(p)->yAxis->tickVectorLabels();
            QVERIFY(!labels.isEmpty());
            for (const QString& l : labels)
                QVERIFY2(!l.contains(QStringLiteral(".00 ")) && !l.contains(QStringLiteral("0 iB")), qPrintable(l));
        }
        view.plot(0)->xAxis->setRange(1, 2);
        QCOMPARE(view.plot(1)->xAxis->range().lower, 1.0);
        QCOMPARE(view.plot(2)->xAxis->range().upper, 2.0);

        QTemporaryDir dir;
        const QStringList files = view.exportTo(dir.filePath(QStringLiteral("out")));
        QCOMPARE(files.size(), 4);
        QImage png(files[0]);
        QCOMPARE(png.size(), QSize(1600, 1200));
        QFile json(files[3]);
        QVERIFY(json.open(QIODevice::ReadOnly));
        const QJsonObject d = QJsonDocument::fromJson(json.readAll()).object();
        QCOMPARE(d.value("delta").toObject().value("bytes").toInteger(), m_amp->peakDelta());
        QFile curves(files[2]);
        QVERIFY(curves.open(QIODevice::ReadOnly));
        QCOMPARE(curves.readAll().count('\n'), qsizetype(m_amp->curves.bins + 1));
        QFile csv(files[1]);
        QVERIFY(csv.open(QIODevice::ReadOnly));
        QVERIFY(csv.readLine().startsWith("section,name,phase_a,phase_b,a,b,delta"));
    }

    void windowComparesFiles()
    {
        MainWindow w;
        w.show();
        QSignalSpy opened(&w, &MainWindow::comparisonOpened);
        w.compareFiles({compareData("cmp_qwen_bs8_fp32.pickle"), compareData("cmp_qwen_bs8_amp.pickle"),
                        compareData("cmp_qwen_bs8_ckpt.pickle")});
        QTRY_COMPARE_WITH_TIMEOUT(opened.size(), 2, 60000);
        QCOMPARE(w.tabCount(), 2);
        QVERIFY(w.comparisonTab(0) && w.comparisonTab(1));
        QCOMPARE(w.tab(0), nullptr);
        QCOMPARE(w.comparisonTab(0)->title(), QStringLiteral("cmp_qwen_bs8_fp32.pickle vs cmp_qwen_bs8_amp.pickle"));
        QCOMPARE(w.comparisonTab(1)->title(), QStringLiteral("cmp_qwen_bs8_fp32.pickle vs cmp_qwen_bs8_ckpt.pickle"));
        // File > Export Report… on a comparison tab writes the comparison's files.
        QTemporaryDir dir;
        QString message;
        QVERIFY2(w.exportReport(dir.path(), &message), qPrintable(message));
        QVERIFY(QFile::exists(dir.filePath(QStringLiteral("comparison.json"))));
        // Opening a file next to comparison tabs still works; closing them returns to the welcome page.
        w.tabs()->tabCloseRequested(1);
        w.tabs()->tabCloseRequested(0);
        QCOMPARE(w.tabCount(), 0);

        w.compareFiles({compareData("cmp_qwen_bs8_fp32.pickle")});
        QVERIFY(w.isErrorVisible());
        QVERIFY(w.errorText().contains(QStringLiteral("two or more files")));
    }

    void ctrlDropCompares()
    {
        MainWindow w;
        w.show();
        QSignalSpy opened(&w, &MainWindow::comparisonOpened);
        auto* mime = new QMimeData;
        mime->setUrls({QUrl::fromLocalFile(compareData("cmp_qwen_bs8_fp32.pickle")),
                       QUrl::fromLocalFile(compareData("cmp_qwen_bs8_ckpt.pickle"))});
        QDragEnterEvent enter(QPoint(10, 10), Qt::CopyAction, mime, Qt::LeftButton, Qt::ControlModifier);
        QCoreApplication::sendEvent(&w, &enter);
        QVERIFY(enter.isAccepted());
        QDropEvent drop(QPointF(10, 10), Qt::CopyAction, mime, Qt::LeftButton, Qt::ControlModifier);
        QCoreApplication::sendEvent(&w, &drop);
        QTRY_COMPARE_WITH_TIMEOUT(opened.size(), 1, 60000);
        QCOMPARE(w.tabCount(), 1);
        QVERIFY(w.comparisonTab(0));
        QCOMPARE(w.comparisonTab(0)->comparison().b().peak.phase, Phase::OptimizerStep);
        delete mime;
    }

    // A failed load in a comparison shows the error in the banner and opens no tab.
    void missingFileShowsError()
    {
        MainWindow w;
        w.show();
        w.compareFiles({compareData("cmp_qwen_bs8_fp32.pickle"), compareData("no_such_file.pickle")});
        QTRY_VERIFY_WITH_TIMEOUT(w.isErrorVisible(), 60000);
        QVERIFY(w.errorText().contains(QStringLiteral("no_such_file.pickle")));
        QCOMPARE(w.tabCount(), 0);
    }
};

QTEST_MAIN(TestComparisonView)
#include "tst_comparison_view.moc"
