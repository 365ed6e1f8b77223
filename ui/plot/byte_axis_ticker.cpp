#include "ui/plot/byte_axis_ticker.h"

#include <cmath>

namespace memscope {

QString ByteAxisTicker::label(double bytes, double unit, const QString& unitName, int decimals)
{
    if (std::fabs(bytes) < unit * 1e-9)
        return QStringLiteral("0");
    QString s = QString::number(bytes / unit, 'f', decimals);
    if (s.contains(QLatin1Char('.'))) {
        while (s.endsWith(QLatin1Char('0')))
            s.chop(1);
        if (s.endsWith(QLatin1Char('.')))
            s.chop(1);
    }
    return s + QLatin1Char(' ') + unitName;
}

double ByteAxisTicker::getTickStep(const QCPRange& range)
{
    static const char* names[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    const double maxAbs = std::max(std::fabs(range.lower), std::fabs(range.upper));
    int k = 0;
    double unit = 1;
    while (k < 4 && maxAbs / unit >= 1024.0) {
        unit *= 1024.0;
        ++k;
    }
    m_unit = unit;
    m_unitName = QString::fromLatin1(names[k]);
    const double exact = range.size() / unit / (mTickCount + 1e-10);
    double step = cleanMantissa(exact);
    if (k == 0)
        step = std::max(1.0, std::round(step));
    m_decimals = step >= 1 ? 0 : static_cast<int>(std::ceil(-std::log10(step)));
    return step * unit;
}

QString ByteAxisTicker::getTickLabel(double tick, const QLocale&, QChar, int)
{
    return label(tick, m_unit, m_unitName, m_decimals);
}

} // namespace memscope
