#pragma once

#include <QByteArray>
#include <QString>

namespace memscope::test {

// Golden files: an output compared byte for byte with a file kept in the repository. They
// are rewritten only when the environment says MEMSCOPE_UPDATE_GOLDEN=1 (scripts/update-golden.sh
// sets it); then review the change in git.
bool updatingGoldens();

// Compares `actual` with the golden at `path` (or, when updating, writes it there). Returns
// an empty string when they match (or it was written), else what failed: a missing golden,
// or `diff -u golden actual` (at most maxDiffLines lines).
QString checkGolden(const QString& path, const QByteArray& actual, int maxDiffLines = 200);

} // namespace memscope::test
