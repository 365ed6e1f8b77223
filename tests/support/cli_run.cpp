#include "cli_run.h"

#include <QProcess>
#include <QProcessEnvironment>

#include <sys/resource.h>

namespace memscope::test {

CliRun runCli(const QString& app, const QStringList& args, const CliRunOptions& options)
{
    CliRun r;
    QProcess p;
    if (!options.workingDirectory.isEmpty())
        p.setWorkingDirectory(options.workingDirectory);
    if (options.offscreen) {
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
        p.setProcessEnvironment(env);
    }
    p.start(app, args);
    if (!p.waitForFinished(options.timeoutMs)) {
        p.kill();
        p.waitForFinished();
        r.err = p.readAllStandardError();
        return r;
    }
    r.exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    r.out = p.readAllStandardOutput();
    r.err = p.readAllStandardError();
    rusage ru{};
    getrusage(RUSAGE_CHILDREN, &ru);
    r.maxRssKb = ru.ru_maxrss;
    return r;
}

} // namespace memscope::test
