// Regression: the files memscope writes must not follow the C locale. The GUI runs under
// QApplication, which calls setlocale(LC_ALL, "") on Unix; under LC_NUMERIC=de_DE printf's
// "%.6f" writes "0,157508", so the GUI's report export wrote CSVs with decimal commas (and a
// summary "5,220 s"), while the headless commands (no Qt, the "C" locale) wrote dots. Every
// writer below runs once under "C" and once under a comma locale built for the test with
// localedef, and must write the same bytes.
#include "analysis/analysis.h"
#include "common/format_bytes.h"
#include "common/format_number.h"
#include "compare/comparison.h"
#include "compare/comparison_writer.h"
#include "io/peak_report_csv_writer.h"
#include "query/point_report.h"
#include "io/summary_writer.h"

#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <clocale>
#include <cstdio>
#include <sstream>

using namespace memscope;

namespace {

// Everything a user can export that holds decimals, from two real samples.
std::string exports(const Analysis& a, const Analysis& b)
{
    std::string out = summaryText(*a.replay, std::nullopt) + formatBytes(1536) + "\n" + formatGeneral(0.6) + "\n";
    std::ostringstream csv;
    const size_t d = a.focusDevice();
    writePeakReportCsv(csv, buildPointReport(*a.attribution, d, peakEvent(a.replay->devices[d])), *a.frames);
    const auto c = compareRuns(std::make_shared<Analysis>(a), std::make_shared<Analysis>(b));
    writeComparisonCsv(csv, *c);
    writeComparisonCurvesCsv(csv, *c);
    return out + csv.str() + comparisonText(*c);
}

} // namespace

class TestLocale : public QObject {
    Q_OBJECT
    QTemporaryDir m_locales;

private slots:
    void initTestCase()
    {
        // A comma locale of our own: Debian images ship none compiled (only C and C.utf8).
        QProcess def;
        def.start(QStringLiteral("localedef"), {QStringLiteral("-i"), QStringLiteral("de_DE"), QStringLiteral("-f"),
                                                QStringLiteral("UTF-8"), m_locales.filePath(QStringLiteral("de_DE.UTF-8"))});
        if (!def.waitForFinished(60000) || def.exitStatus() != QProcess::NormalExit || def.exitCode() != 0)
            QFAIL(qPrintable("localedef could not build de_DE.UTF-8 (the locales package has its sources): " +
                             QString::fromLocal8Bit(def.readAllStandardError())));
        qputenv("LOCPATH", m_locales.path().toLocal8Bit());
    }

    void writersIgnoreTheNumericLocale()
    {
        auto a = analyze(AnalysisSource::file(MEMSCOPE_SAMPLES_DIR "/llm_bs16.pickle"));
        auto b = analyze(AnalysisSource::file(MEMSCOPE_SAMPLES_DIR "/many_small.pickle"));
        QVERIFY(std::setlocale(LC_NUMERIC, "C"));
        const std::string inC = exports(*a, *b);
        QVERIFY2(std::setlocale(LC_NUMERIC, "de_DE.UTF-8"), "the locale built by initTestCase did not load");
        char probe[16];
        std::snprintf(probe, sizeof probe, "%.1f", 0.5);
        QCOMPARE(QByteArray(probe), QByteArray("0,5")); // the locale bites printf: the test can fail
        const std::string inDe = exports(*a, *b);
        std::setlocale(LC_NUMERIC, "C");
        QVERIFY(inC.find("0.") != std::string::npos);
        if (inDe != inC) {
            size_t at = 0;
            while (at < inDe.size() && at < inC.size() && inDe[at] == inC[at])
                ++at;
            const size_t from = at > 80 ? at - 80 : 0;
            QFAIL(qPrintable(
                QStringLiteral("the outputs differ at byte %1:\n C:     …%2…\n de_DE: …%3…")
                    .arg(at)
                    .arg(QString::fromStdString(inC.substr(from, 160)), QString::fromStdString(inDe.substr(from, 160)))));
        }
    }
};

QTEST_GUILESS_MAIN(TestLocale)
#include "tst_locale.moc"
