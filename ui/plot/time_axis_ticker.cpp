#include "ui/plot/time_axis_ticker.h"

#include <cmath>

namespace memscope {

double TimeAxisTicker::getTickStep(const QCPRange& range)
{
    const double span = range.size();
    const double maxAbs = std::max(std::fabs(range.lower), std::fabs(range.upper));
    if (maxAbs < 2e-3 || span < 2e-3) {
        m_unit = 1e-6;
        m_unitName = QStringLiteral("µs");
    } else if (maxAbs < 2.0 || span < 1.0) {
        m_unit = 1e-3;
        m_unitName = QStringLiteral("ms");
    } else {
        m_unit = 1.0;
        m_unitName = QStringLiteral("s");
    }
    const double step = cleanMantissa(span / m_unit / (mTickCount + 1e-10));
    m_decimals = step >= 1 ? 0 : static_cast<int>(std::ceil(-std::log10(step)));
    return step * m_unit;
}

QString TimeAxisTicker::getTickLabel(double tick, const QLocale&, QChar, int)
{
    if (std::fabs(tick) < m_unit * 1e-9)
        return QStringLiteral("0");
    return QString::number(tick / m_unit, 'f', m_decimals) + QLatin1Char(' ') + m_unitName;
}

} // namespace memscope
