#include "support/data_file.h"

#include <QFile>

namespace memscope::test {

QString dataFile(const QString& name)
{
    for (const QString& dir : {QStringLiteral(MEMSCOPE_SAMPLES_DIR), QStringLiteral(MEMSCOPE_TESTDATA_DIR)})
        if (QFile::exists(dir + QLatin1Char('/') + name))
            return dir + QLatin1Char('/') + name;
    return QStringLiteral(MEMSCOPE_SAMPLES_DIR) + QLatin1Char('/') + name;
}

} // namespace memscope::test
