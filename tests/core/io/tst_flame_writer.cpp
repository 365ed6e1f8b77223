// core/io's flame graph files, as the report writes them beside report.json: flame.json's tree
// adds up (every node its children plus its own bytes, the root the breakdown's total at the
// point) and flame.svg is well-formed SVG with a rectangle a visible node.
#include "attribute/attributor.h"
#include "io/flame_writer.h"
#include "io/report_files.h"
#include "query/point_report.h"
#include "replay/replay.h"
#include "snapshot/snapshot_reader.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>
#include <QXmlStreamReader>

using namespace memscope;

namespace {

// Returns the node's bytes after checking its subtree.
qint64 checkNode(const QJsonObject& n, int& nodes)
{
    ++nodes;
    qint64 children = 0;
    for (const QJsonValue& c : n[QStringLiteral("children")].toArray())
        children += checkNode(c.toObject(), nodes);
    const qint64 bytes = n[QStringLiteral("bytes")].toInteger();
    if (n[QStringLiteral("self_bytes")].toInteger() + children != bytes)
        throw std::runtime_error(n[QStringLiteral("name")].toString().toStdString() + ": children do not add up");
    if (n[QStringLiteral("name")].toString().isEmpty())
        throw std::runtime_error("a node without a name");
    return bytes;
}

} // namespace

class TstFlameWriter : public QObject {
    Q_OBJECT

private slots:
    void reportFiles_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<double>("at"); // < 0: the peak
        for (const char* f : {"llm_bs16.pickle", "libtorch_mlp.pickle", "loss_leak.pickle"}) {
            QTest::addRow("%s peak", f) << QStringLiteral(MEMSCOPE_SAMPLES_DIR "/") + QLatin1String(f) << -1.0;
            QTest::addRow("%s 0.4", f) << QStringLiteral(MEMSCOPE_SAMPLES_DIR "/") + QLatin1String(f) << 0.4;
        }
    }
    void reportFiles()
    {
        QFETCH(QString, file);
        QFETCH(double, at);
        auto snapshot = readSnapshotFile(file.toStdString());
        auto attribution = attribute(replaySnapshot(snapshot));
        const FrameClassifier frames(*snapshot);
        const DeviceReplay& d = attribution->replay->devices[0];
        const int64_t event = at < 0 ? peakEvent(d) : static_cast<int64_t>(at * static_cast<double>(d.eventCount));
        const PointReport point = buildPointReport(*attribution, 0, event);
        QTemporaryDir dir;
        const ReportDataFiles files = writeReportData(*attribution, point, frames, nullptr, dir.path().toStdString());

        QFile json(QString::fromStdString(files.flameJson));
        QVERIFY(json.open(QIODevice::ReadOnly));
        QJsonParseError error;
        const QJsonObject top = QJsonDocument::fromJson(json.readAll(), &error).object();
        QCOMPARE(error.error, QJsonParseError::NoError);
        QCOMPARE(top[QStringLiteral("weight")].toString(), QStringLiteral("active_bytes"));
        QCOMPARE(top[QStringLiteral("event")].toInteger(), point.event);
        int nodes = 0;
        try {
            QCOMPARE(checkNode(top[QStringLiteral("root")].toObject(), nodes), point.requested);
        } catch (const std::exception& e) {
            QFAIL(e.what());
        }
        QVERIFY(nodes > 3);

        QFile svg(QString::fromStdString(files.flameSvg));
        QVERIFY(svg.open(QIODevice::ReadOnly));
        QXmlStreamReader xml(&svg);
        int rects = 0, titles = 0;
        while (!xml.atEnd()) {
            xml.readNext();
            if (xml.isStartElement() && xml.name() == QLatin1String("rect"))
                ++rects;
            if (xml.isStartElement() && xml.name() == QLatin1String("title"))
                ++titles;
        }
        QVERIFY2(!xml.hasError(), qPrintable(xml.errorString()));
        QVERIFY(titles > 3 && titles <= nodes);
        QCOMPARE(rects, titles + 1); // and the background
    }
};

QTEST_GUILESS_MAIN(TstFlameWriter)
#include "tst_flame_writer.moc"
