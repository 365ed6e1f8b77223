#pragma once

#include <QString>

namespace memscope::test {

// The path of a recording named relative to samples/ or, when not there, tests/data/ (the
// samples directory's path when neither has it, so a missing file fails by name).
QString dataFile(const QString& name);

} // namespace memscope::test
