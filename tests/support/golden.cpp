#include "golden.h"

#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QTemporaryDir>

namespace memscope::test {

namespace {

QByteArray readAll(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

bool writeAll(const QString& path, const QByteArray& bytes)
{
    QFile f(path);
    return f.open(QIODevice::WriteOnly | QIODevice::Truncate) && f.write(bytes) == bytes.size() && f.flush();
}

QString unifiedDiff(const QString& golden, const QByteArray& actual, int maxLines)
{
    QTemporaryDir tmp;
    const QString actualPath = tmp.filePath(QFileInfo(golden).fileName());
    if (!writeAll(actualPath, actual))
        return QStringLiteral("(cannot write the actual output to diff it)");
    QProcess diff;
    diff.start(QStringLiteral("diff"),
               {QStringLiteral("-u"), QStringLiteral("--label"), QStringLiteral("golden/") + QFileInfo(golden).fileName(),
                QStringLiteral("--label"), QStringLiteral("actual"), golden, actualPath});
    if (!diff.waitForFinished(60000))
        return QStringLiteral("(diff -u did not run: %1)").arg(diff.errorString());
    const QList<QByteArray> lines = diff.readAllStandardOutput().split('\n');
    QString out;
    for (qsizetype i = 0; i < std::min<qsizetype>(maxLines, lines.size()); ++i)
        out += QString::fromUtf8(lines[i]) + QLatin1Char('\n');
    if (lines.size() > maxLines)
        out += QStringLiteral("… %1 more lines of diff\n").arg(lines.size() - maxLines);
    return out;
}

} // namespace

bool updatingGoldens() { return qEnvironmentVariable("MEMSCOPE_UPDATE_GOLDEN") == QLatin1String("1"); }

QString checkGolden(const QString& path, const QByteArray& actual, int maxDiffLines)
{
    if (updatingGoldens()) {
        if (QFile::exists(path) && readAll(path) == actual)
            return {};
        if (!writeAll(path, actual))
            return QStringLiteral("cannot write %1").arg(path);
        std::fprintf(stderr, "updated %s\n", qPrintable(path));
        return {};
    }
    if (!QFile::exists(path))
        return QStringLiteral("%1: no golden (MEMSCOPE_UPDATE_GOLDEN=1, e.g. scripts/update-golden.sh, writes it)").arg(path);
    if (readAll(path) == actual)
        return {};
    return QStringLiteral("%1 differs from its golden (MEMSCOPE_UPDATE_GOLDEN=1 rewrites it; review the git diff):\n%2")
        .arg(path, unifiedDiff(path, actual, maxDiffLines));
}

} // namespace memscope::test
