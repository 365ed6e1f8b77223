#include "attribute/attributor.h"
#include "diagnose/diagnoser.h"
#include "ui/document/document.h"
#include "query/point_report.h"
#include "replay/replay.h"
#include "ui/pages/report_chart.h"
#include "ui/pages/report_exporter.h"
#include "snapshot/snapshot_reader.h"

#include <QFile>
#include <QImage>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

using namespace memscope;

namespace {

QString sample(const QString& name) { return QStringLiteral(MEMSCOPE_SAMPLES_DIR "/%1.pickle").arg(name); }

// Splits one CSV line (RFC 4180 quoting).
QStringList csvFields(const QString& line)
{
    QStringList out;
    QString cur;
    bool quoted = false;
    for (qsizetype i = 0; i < line.size(); ++i) {
        const QChar c = line[i];
        if (quoted) {
            if (c == QLatin1Char('"') && i + 1 < line.size() && line[i + 1] == QLatin1Char('"')) {
                cur += c;
                ++i;
            } else if (c == QLatin1Char('"')) {
                quoted = false;
            } else {
                cur += c;
            }
        } else if (c == QLatin1Char('"')) {
            quoted = true;
        } else if (c == QLatin1Char(',')) {
            out << cur;
            cur.clear();
        } else {
            cur += c;
        }
    }
    out << cur;
    return out;
}

QList<QStringList> readCsv(const QString& path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    QList<QStringList> rows;
    while (!f.atEnd()) {
        QString line = QString::fromUtf8(f.readLine());
        if (line.endsWith(QLatin1Char('\n')))
            line.chop(1);
        rows << csvFields(line);
    }
    return rows;
}

QJsonObject readJson(const QString& path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    return QJsonDocument::fromJson(f.readAll()).object();
}

} // namespace

// The exported files hold the core's numbers, from the GUI's code and from `memscope report`.
class TestReportExport : public QObject {
    Q_OBJECT

    // Checks a report directory against the core's results for one device and event.
    static void verify(const QString& dir, const Document& doc, size_t deviceIndex, int64_t event)
    {
        const DeviceModel& m = doc.devices[deviceIndex];
        const DeviceReplay& d = *m.replay;
        const DeviceAttribution& a = *m.attribution;
        const PointReport r = buildPointReport(*doc.attribution(), deviceIndex, event);

        // timeline.csv: one row per event with the replay's curves and the attribution's categories.
        const auto timeline = readCsv(dir + QStringLiteral("/timeline.csv"));
        QCOMPARE(timeline.size(), static_cast<qsizetype>(d.eventCount + 1));
        const QStringList header = timeline.front();
        QCOMPARE(header.mid(0, 4), (QStringList{"time_us", "event_index", "requested_bytes", "reserved_bytes"}));
        QCOMPARE(header.size(), 4 + kCategoryCount + 1);
        for (int64_t i = 0; i < d.eventCount; ++i) {
            const QStringList& row = timeline[static_cast<qsizetype>(i + 1)];
            QCOMPARE(row[0].toLongLong(), m.events->timeUs[static_cast<size_t>(i)]);
            QCOMPARE(row[1].toLongLong(), i);
            QCOMPARE(row[2].toLongLong(), d.requested[static_cast<size_t>(i)]);
            QCOMPARE(row[3].toLongLong(), d.reserved[static_cast<size_t>(i)]);
            int64_t sum = 0;
            for (int c = 0; c < kCategoryCount; ++c) {
                QCOMPARE(row[4 + c].toLongLong(), a.categoryBytes[static_cast<size_t>(c)][static_cast<size_t>(i)]);
                sum += row[4 + c].toLongLong();
            }
            QCOMPARE(sum, d.requested[static_cast<size_t>(i)]);
            QCOMPARE(row.back(), QString::fromLatin1(phaseName(a.eventPhase[static_cast<size_t>(i)]).data()));
        }

        // peak_report.csv: total, categories, then every live allocation.
        const auto peak = readCsv(dir + QStringLiteral("/peak_report.csv"));
        QCOMPARE(peak.front().front(), QStringLiteral("row_type"));
        QCOMPARE(peak[1][0], QStringLiteral("total"));
        QCOMPARE(peak[1][2].toLongLong(), r.requested);
        QCOMPARE(peak[1][7].toLongLong(), event);
        int64_t categorySum = 0;
        for (int c = 0; c < kCategoryCount; ++c) {
            const QStringList& row = peak[2 + c];
            QCOMPARE(row[0], QStringLiteral("category"));
            QCOMPARE(row[1], QString::fromLatin1(categoryName(static_cast<Category>(c)).data()));
            QCOMPARE(row[2].toLongLong(), event >= 0 ? a.categoryBytes[static_cast<size_t>(c)][static_cast<size_t>(event)]
                                                     : a.categoryAtStart[static_cast<size_t>(c)]);
            categorySum += row[2].toLongLong();
        }
        QCOMPARE(categorySum, d.requestedAfter(event));
        const auto live = d.activeAfter(event);
        QCOMPARE(peak.size(), static_cast<qsizetype>(2 + kCategoryCount + live.size()));
        int64_t liveSum = 0;
        std::vector<int64_t> byCategory(kCategoryCount, 0);
        for (qsizetype i = 2 + kCategoryCount; i < peak.size(); ++i) {
            const QStringList& row = peak[i];
            QCOMPARE(row.size(), 16); // ... top_user_frame, stack, op, module
            QCOMPARE(row[0], QStringLiteral("allocation"));
            const AllocationId id{row[5].toInt()};
            QVERIFY(std::binary_search(live.begin(), live.end(), id));
            QCOMPARE(row[14], QString::fromStdString(doc.frames()->opText(d.allocation(id).stack)));
            QCOMPARE(row[15], QString::fromStdString(doc.frames()->moduleText(d.allocation(id).stack)));
            QCOMPARE(row[2].toLongLong(), static_cast<int64_t>(d.allocation(id).size));
            QCOMPARE(row[6], QStringLiteral("0x") + QString::number(d.allocation(id).addr, 16));
            QCOMPARE(row[1], QString::fromLatin1(categoryName(a.category(id)).data()));
            liveSum += row[2].toLongLong();
            byCategory[static_cast<size_t>(a.category(id))] += row[2].toLongLong();
        }
        QCOMPARE(liveSum, d.requestedAfter(event));
        for (int c = 0; c < kCategoryCount; ++c)
            QCOMPARE(byCategory[static_cast<size_t>(c)], peak[2 + c][2].toLongLong());

        // report.json: the peak, its categories, the iterations.
        const QJsonObject j = readJson(dir + QStringLiteral("/report.json"));
        QCOMPARE(j.value(QStringLiteral("events")).toInteger(), d.eventCount);
        const QJsonObject pk = j.value(QStringLiteral("peak")).toObject();
        QCOMPARE(pk.value(QStringLiteral("bytes")).toInteger(), d.peakRequested.bytes);
        QCOMPARE(pk.value(QStringLiteral("event_index")).toInteger(), peakEvent(d));
        QCOMPARE(pk.value(QStringLiteral("time_us")).toInteger(), d.peakRequested.timeUs);
        QCOMPARE(j.value(QStringLiteral("peak_reserved")).toObject().value(QStringLiteral("bytes")).toInteger(),
                 d.peakReserved.bytes);
        const QJsonObject cats = pk.value(QStringLiteral("by_category")).toObject();
        for (Category c : kAllCategories)
            QCOMPARE(cats.value(QString::fromLatin1(categoryName(c).data())).toInteger(),
                     a.peakByCategory[static_cast<size_t>(c)]);
        const QJsonObject at = j.value(QStringLiteral("at")).toObject();
        QCOMPARE(at.value(QStringLiteral("event_index")).toInteger(), event);
        QCOMPARE(at.value(QStringLiteral("bytes")).toInteger(), d.requestedAfter(event));
        QCOMPARE(at.value(QStringLiteral("live_allocations")).toInteger(), static_cast<qint64>(live.size()));
        // at.modules: the live bytes by module path, each depth's rows adding up to the point's.
        const QJsonArray modules = at.value(QStringLiteral("modules")).toArray();
        QVERIFY(!modules.isEmpty());
        for (qsizetype k = 0; k < modules.size(); ++k) {
            const QJsonObject depth = modules[k].toObject();
            QCOMPARE(depth.value(QStringLiteral("depth")).toInteger(), k + 1);
            qint64 sum = 0;
            for (const QJsonValue& row : depth.value(QStringLiteral("rows")).toArray())
                sum += row.toObject().value(QStringLiteral("bytes")).toInteger();
            QCOMPARE(sum, d.requestedAfter(event));
            QCOMPARE(depth.value(QStringLiteral("bytes")).toInteger(), d.requestedAfter(event));
        }
        const QJsonArray its = j.value(QStringLiteral("iterations")).toArray();
        QCOMPARE(its.size(), static_cast<qsizetype>(a.iterations.size()));
        for (qsizetype i = 0; i < its.size(); ++i) {
            const Iteration& it = a.iterations[static_cast<size_t>(i)];
            const QJsonObject o = its[i].toObject();
            QCOMPARE(o.value(QStringLiteral("first_event")).toInteger(), it.firstEvent);
            QCOMPARE(o.value(QStringLiteral("last_event")).toInteger(), it.lastEvent);
            QCOMPARE(o.value(QStringLiteral("peak")).toObject().value(QStringLiteral("bytes")).toInteger(), it.peak.bytes);
        }

        // report.json: the device's findings, as the core's diagnosis of the file orders them.
        const auto diagnosis = diagnose(*doc.attribution(), *doc.frames());
        std::vector<const Diagnostic*> findings;
        for (const Diagnostic& x : diagnosis->items)
            if (x.deviceIndex == deviceIndex)
                findings.push_back(&x);
        const QJsonArray diags = j.value(QStringLiteral("diagnostics")).toArray();
        QCOMPARE(diags.size(), static_cast<qsizetype>(findings.size()));
        for (qsizetype i = 0; i < diags.size(); ++i) {
            const Diagnostic& x = *findings[static_cast<size_t>(i)];
            const QJsonObject o = diags[i].toObject();
            QCOMPARE(o.value(QStringLiteral("kind")).toString(), QString::fromLatin1(diagnosticKindName(x.kind).data()));
            QCOMPARE(o.value(QStringLiteral("severity")).toString(), QString::fromLatin1(severityName(x.severity).data()));
            QCOMPARE(o.value(QStringLiteral("message")).toString(), QString::fromStdString(x.message));
            QCOMPARE(o.value(QStringLiteral("bytes")).toInteger(), x.bytes);
            QCOMPARE(o.contains(QStringLiteral("bytes_per_iteration")), x.kind == DiagnosticKind::Growth);
        }

        // peak_report.png: the chart.
        const QImage png(dir + QStringLiteral("/peak_report.png"));
        QVERIFY(!png.isNull());
        QCOMPARE(png.size(), QSize(1600, 900));
    }

private slots:
    void guiExportMatchesCore_data()
    {
        QTest::addColumn<QString>("name");
        for (const char* n : {"llm_bs16", "llm_bs2_cpp", "many_small", "oom", "release", "libtorch_mlp", "loss_leak"})
            QTest::newRow(n) << QString::fromLatin1(n);
    }
    void guiExportMatchesCore()
    {
        QFETCH(QString, name);
        const auto doc = analyzeFile(sample(name).toStdString());
        QTemporaryDir out;
        const int64_t pe = peakEvent(*doc->devices[0].replay);
        const ReportFiles files = writeReport(*doc, 0, pe, out.path());
        QCOMPARE(files.json, out.filePath(QStringLiteral("report.json")));
        verify(out.path(), *doc, 0, pe);
        // Another point than the peak.
        QTemporaryDir out2;
        const int64_t mid = doc->devices[0].eventCount() / 2;
        writeReport(*doc, 0, mid, out2.path());
        verify(out2.path(), *doc, 0, mid);
    }

    // loss_leak keeps each iteration's loss graph: report.json says so with the core's rate,
    // from the GUI's export and from `memscope report`, and the PNG lists the finding.
    void reportNamesTheLeak()
    {
        const std::string file = sample(QStringLiteral("loss_leak")).toStdString();
        const auto attribution = attribute(replaySnapshot(readSnapshotFile(file)));
        const FrameClassifier frames(*attribution->replay->snapshot);
        const auto core = diagnose(*attribution, frames);
        const Diagnostic* growth = core->first(DiagnosticKind::Growth, size_t{0});
        QVERIFY(growth);
        QVERIFY(growth->bytesPerIteration > 0);

        auto growthIn = [](const QString& dir) {
            for (const QJsonValue v :
                 readJson(dir + QStringLiteral("/report.json")).value(QStringLiteral("diagnostics")).toArray())
                if (v.toObject().value(QStringLiteral("kind")).toString() == QStringLiteral("growth"))
                    return v.toObject();
            return QJsonObject();
        };
        const auto doc = analyzeFile(file);
        QTemporaryDir gui;
        writeReport(*doc, 0, peakEvent(*doc->devices[0].replay), gui.path());
        QJsonObject g = growthIn(gui.path());
        QCOMPARE(g.value(QStringLiteral("severity")).toString(), QString::fromLatin1(severityName(growth->severity).data()));
        QCOMPARE(g.value(QStringLiteral("bytes_per_iteration")).toInteger(), growth->bytesPerIteration);
        QCOMPARE(g.value(QStringLiteral("bytes")).toInteger(), growth->bytes);
        QCOMPARE(g.value(QStringLiteral("iterations")).toInt(), growth->iterations);

        ReportChart chart(*doc, 0, buildPointReport(*doc->attribution(), 0, peakEvent(*doc->devices[0].replay)));
        QVERIFY(!chart.findingLines().isEmpty());
        QVERIFY2(chart.findingLines().front().contains(QString::fromStdString(growth->message)),
                 qPrintable(chart.findingLines().join(QLatin1Char('\n'))));

        const QString app = QStringLiteral(MEMSCOPE_APP);
        QTemporaryDir headless;
        QProcess p;
        p.start(app, {QStringLiteral("report"), QString::fromStdString(file), QStringLiteral("--out"), headless.path()});
        QVERIFY(p.waitForFinished(120000));
        QVERIFY2(p.exitCode() == 0, p.readAllStandardError().constData());
        g = growthIn(headless.path());
        QCOMPARE(g.value(QStringLiteral("bytes_per_iteration")).toInteger(), growth->bytesPerIteration);
    }

    // `memscope report` runs without a display and writes the same numbers.
    void headlessCommand_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QStringList>("extra");
        QTest::addColumn<QString>("at"); // "peak", or a relative time in ms
        QTest::newRow("llm_bs16 peak") << QStringLiteral("llm_bs16") << QStringList() << QStringLiteral("peak");
        QTest::newRow("llm_bs2_cpp device 0 peak")
            << QStringLiteral("llm_bs2_cpp")
            << QStringList{QStringLiteral("--device"), QStringLiteral("0"), QStringLiteral("--at"), QStringLiteral("peak")}
            << QStringLiteral("peak");
        QTest::newRow("llm_bs16 at 300ms") << QStringLiteral("llm_bs16")
                                           << QStringList{QStringLiteral("--at"), QStringLiteral("300ms")}
                                           << QStringLiteral("300");
        QTest::newRow("many_small at time_us")
            << QStringLiteral("many_small") << QStringList{QStringLiteral("--at"), QStringLiteral("T+1000000")}
            << QStringLiteral("1000");
    }
    void headlessCommand()
    {
        QFETCH(QString, name);
        QFETCH(QStringList, extra);
        QFETCH(QString, at);
        const QString app = QStringLiteral(MEMSCOPE_APP);
        const auto doc = analyzeFile(sample(name).toStdString());
        const DeviceModel& m = doc->devices[0];
        int64_t event = peakEvent(*m.replay);
        if (at != QStringLiteral("peak"))
            event = eventAtTime(*m.events, m.t0Us + at.toLongLong() * 1000);
        for (QString& e : extra)
            if (e.startsWith(QStringLiteral("T+")))
                e = QString::number(m.t0Us + e.mid(2).toLongLong());
        QTemporaryDir out;
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.remove(QStringLiteral("DISPLAY"));
        env.remove(QStringLiteral("WAYLAND_DISPLAY"));
        env.remove(QStringLiteral("QT_QPA_PLATFORM"));
        p.setProcessEnvironment(env);
        p.start(app,
                QStringList{QStringLiteral("report"), sample(name)} + extra + QStringList{QStringLiteral("--out"), out.path()});
        QVERIFY(p.waitForFinished(120000));
        QVERIFY2(p.exitCode() == 0, p.readAllStandardError().constData());
        // peak_report.png, peak_report.csv, timeline.csv, report.json, flame.json, flame.svg
        QCOMPARE(QString::fromUtf8(p.readAllStandardOutput()).split(QLatin1Char('\n'), Qt::SkipEmptyParts).size(), 6);
        for (const char* f : {"flame.json", "flame.svg"})
            QVERIFY2(QFileInfo(out.filePath(QLatin1String(f))).size() > 0, f);
        verify(out.path(), *doc, 0, event);
    }

    void headlessErrors_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<int>("exitCode");
        QTest::addColumn<QString>("message");
        const QString good = sample(QStringLiteral("release"));
        QTest::newRow("no --out") << QStringList{good} << 2 << QStringLiteral("usage");
        QTest::newRow("bad --at") << QStringList{good, QStringLiteral("--at"), QStringLiteral("soon"), QStringLiteral("--out"),
                                                 QStringLiteral("OUT")}
                                  << 1 << QStringLiteral("--at");
        QTest::newRow("no such device") << QStringList{good, QStringLiteral("--device"), QStringLiteral("3"),
                                                       QStringLiteral("--out"), QStringLiteral("OUT")}
                                        << 1 << QStringLiteral("has no device 3");
        QTest::newRow("evil pickle") << QStringList{QStringLiteral(MEMSCOPE_TESTDATA_DIR "/evil_global_os_system.pickle"),
                                                    QStringLiteral("--out"), QStringLiteral("OUT")}
                                     << 1 << QStringLiteral("evil_global_os_system.pickle: byte");
    }
    void headlessErrors()
    {
        QFETCH(QStringList, args);
        QFETCH(int, exitCode);
        QFETCH(QString, message);
        const QString app = QStringLiteral(MEMSCOPE_APP);
        QTemporaryDir out;
        args.replaceInStrings(QStringLiteral("OUT"), out.path());
        QProcess p;
        p.start(app, QStringList{QStringLiteral("report")} + args);
        QVERIFY(p.waitForFinished(60000));
        QCOMPARE(p.exitCode(), exitCode);
        const QString err = QString::fromUtf8(p.readAllStandardError());
        QVERIFY2(err.contains(message), qPrintable(err));
        QVERIFY(!QFileInfo::exists(out.filePath(QStringLiteral("report.json"))));
    }
};

QTEST_MAIN(TestReportExport)
#include "tst_report_export.moc"
