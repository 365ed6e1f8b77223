#include "ui/style/text_format.h"

#include "snapshot/frame_classifier.h"
#include "io/summary_writer.h"

#include <cmath>

namespace memscope {

QString bytesText(int64_t bytes) { return QString::fromStdString(formatBytes(bytes)); }

QString countText(int64_t n)
{
    QString digits = QString::number(n < 0 ? -n : n);
    for (qsizetype i = digits.size() - 3; i > 0; i -= 3)
        digits.insert(i, QLatin1Char(','));
    return n < 0 ? QLatin1Char('-') + digits : digits;
}

QString percentText(double share) { return QString::number(share * 100.0, 'f', 1) + QLatin1Char('%'); }

QString secondsText(double s)
{
    const double a = std::fabs(s);
    if (a < 1e-3)
        return QString::number(s * 1e6, 'f', 0) + QStringLiteral(" µs");
    if (a < 1.0)
        return QString::number(s * 1e3, 'f', a < 0.1 ? 2 : 1) + QStringLiteral(" ms");
    return QString::number(s, 'f', 3) + QStringLiteral(" s");
}

QString categoryText(Category c)
{
    const std::string_view v = categoryLabel(c);
    return QString::fromUtf8(v.data(), static_cast<qsizetype>(v.size()));
}

QString phaseText(Phase p)
{
    const std::string_view v = phaseLabel(p);
    return QString::fromUtf8(v.data(), static_cast<qsizetype>(v.size()));
}

QString colorSwatchHtml(const QColor& c) { return QStringLiteral("<span style=\"color:%1\">&#9632;</span>").arg(c.name()); }

QString callSiteText(const FrameClassifier& frames, StackId stack, size_t maxFrames)
{
    if (!stack.valid())
        return {};
    QString text = QString::fromStdString(frames.stackSummary(stack, maxFrames));
    const auto all = frames.snapshot().stacks.frames(stack);
    if (text.isEmpty() || all.empty() || !frames.isLibrary(all.front()) || !frames.topUserFrame(stack).valid())
        return text;
    std::string library = frames.librarySummary(stack);
    if (library.rfind("(library) ", 0) == 0)
        library.erase(0, 10);
    return library.empty() ? text : QString::fromStdString(library) + QStringLiteral("  ←  ") + text;
}

QString stackSummaryText(const FrameClassifier* frames, StackId stack, size_t maxFrames)
{
    return frames ? QString::fromStdString(frames->stackSummary(stack, maxFrames)) : QString();
}

namespace {

QStringList moduleLevels(std::string_view path)
{
    return QString::fromUtf8(path.data(), static_cast<qsizetype>(path.size())).split(QStringLiteral(" > "), Qt::SkipEmptyParts);
}

} // namespace

QString moduleCellText(std::string_view path)
{
    QStringList levels = moduleLevels(path);
    QString previousFile;
    for (QString& level : levels) {
        const qsizetype colon = level.indexOf(QLatin1Char(':'));
        const QString file = colon > 0 ? level.left(colon) : QString();
        if (!file.isEmpty() && file == previousFile)
            level = level.mid(colon);
        previousFile = file;
    }
    return levels.join(QStringLiteral(" > "));
}

QString moduleToolTip(std::string_view path)
{
    const QStringList levels = moduleLevels(path);
    QStringList lines;
    for (qsizetype i = 0; i < levels.size(); ++i)
        lines << QString(static_cast<qsizetype>(2 * i), QLatin1Char(' ')) + levels[i];
    return lines.join(QLatin1Char('\n'));
}

} // namespace memscope
