#pragma once

#include <QByteArray>
#include <QString>
#include <QStringList>

namespace memscope::test {

// What one run of the memscope executable gave back. exitCode is -1 when it crashed or ran
// past its time (it is then killed).
struct CliRun {
    int exitCode = -1;
    QByteArray out;
    QByteArray err;
    long maxRssKb = 0; // the largest child's peak RSS so far (getrusage RUSAGE_CHILDREN)
};

struct CliRunOptions {
    QString workingDirectory; // empty: the test's own
    int timeoutMs = 120000;
    bool offscreen = false; // QT_QPA_PLATFORM=offscreen, for commands that paint
};

// Runs `app args…` and waits for it. The tests pass MEMSCOPE_APP (tests/CMakeLists.txt).
CliRun runCli(const QString& app, const QStringList& args, const CliRunOptions& options = {});

} // namespace memscope::test
