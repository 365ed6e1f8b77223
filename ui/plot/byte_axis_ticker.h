#pragma once

#include <qcustomplot.h>

namespace memscope {

// Axis ticks at round values in binary units: "0", "512 MiB", "1 GiB", "1.5 GiB".
// The unit follows the visible range, so zooming in switches GiB to MiB.
class ByteAxisTicker : public QCPAxisTicker {
public:
    static QString label(double bytes, double unit, const QString& unitName, int decimals);

protected:
    double getTickStep(const QCPRange& range) override;
    QString getTickLabel(double tick, const QLocale& locale, QChar formatChar, int precision) override;

private:
    double m_unit = 1;
    QString m_unitName = QStringLiteral("B");
    int m_decimals = 0;
};

} // namespace memscope
