#pragma once

#include <qcustomplot.h>

namespace memscope {

// Ticks for an axis in seconds since the first event, labelled in µs, ms or s depending on
// the visible span: "0", "250 ms", "1.5 s".
class TimeAxisTicker : public QCPAxisTicker {
protected:
    double getTickStep(const QCPRange& range) override;
    QString getTickLabel(double tick, const QLocale& locale, QChar formatChar, int precision) override;

private:
    double m_unit = 1;
    QString m_unitName = QStringLiteral("s");
    int m_decimals = 0;
};

} // namespace memscope
