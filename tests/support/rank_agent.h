#pragma once

#include <QProcess>
#include <QProcessEnvironment>
#include <QString>

#include <memory>

namespace memscope::test {

// The environment of a Python agent started by a test: the agent package at `agentDir` on
// PYTHONPATH, quiet, its private directory under `tmpDir` (TMPDIR; no XDG_RUNTIME_DIR), and
// none of the caller's own torchrun or agent variables.
QProcessEnvironment agentEnvironment(const QString& agentDir, const QString& tmpDir);

// A `--replay` agent serving `file` as rank `rank` of the two-rank job `job`, told so through
// torchrun's variables, at `speed` (0: as fast as it can); null when it did not start.
std::unique_ptr<QProcess> startReplayRank(const QString& python, QProcessEnvironment env, const QString& file, const QString& job,
                                          int rank, const QString& speed);

} // namespace memscope::test
