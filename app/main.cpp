#include "cli.h"
#include "common/thread_pool.h"
#include "report_png.h"

#include "ui/live/attach_dialog.h"
#include "ui/live/live_job_window.h"
#include "ui/main_window.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QIcon>

#include <cstdio>
#include <string>
#include <vector>

int main(int argc, char** argv)
{
    // Answered without Qt, so that they work on a machine with no display.
    int status = 0;
    if (memscope::handleTopLevelOption(argc, argv, true, status))
        return status;
    if (argc >= 2 && memscope::isHeadlessCommand(argv[1])) {
        memscope::installReportPngWriter();
        std::vector<std::string> args(argv + 2, argv + argc);
        return memscope::runHeadless(argv[1], args);
    }

    QApplication::setHighDpiScaleFactorRoundingPolicy(Qt::HighDpiScaleFactorRoundingPolicy::PassThrough);
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("memscope"));
    QApplication::setOrganizationName(QStringLiteral("memscope"));
    QApplication::setApplicationVersion(QStringLiteral(MEMSCOPE_VERSION));
    QApplication::setApplicationDisplayName(QStringLiteral("memscope"));
    QApplication::setWindowIcon(QIcon(QStringLiteral(":/memscope/memscope.png")));

    QCommandLineParser parser;
    parser.setApplicationDescription(QString::fromStdString(memscope::helpText(true)));
    parser.addHelpOption();
    parser.addVersionOption();
    const QCommandLineOption attach(QStringLiteral("attach"),
                                    QStringLiteral("Attach to a running agent (pid, socket, or HOST:PORT with --token)."),
                                    QStringLiteral("PID|SOCKET|HOST:PORT"));
    parser.addOption(attach);
    const QCommandLineOption attachJob(QStringLiteral("attach-job"),
                                       QStringLiteral("Attach to every rank of a torchrun job at once (its job id, as "
                                                      "`memscope-agent --list` shows it)."),
                                       QStringLiteral("JOB"));
    parser.addOption(attachJob);
    const QCommandLineOption token(QStringLiteral("token"), QStringLiteral("The token of an agent's TCP listener."),
                                   QStringLiteral("T"));
    parser.addOption(token);
    const QCommandLineOption compare(QStringLiteral("compare"),
                                     QStringLiteral("Compare the files (the first is the baseline) in a comparison tab."));
    parser.addOption(compare);
    const QCommandLineOption threads(QStringLiteral("threads"),
                                     QStringLiteral("Threads to load with (default: the cores available, at most 8)."),
                                     QStringLiteral("N"));
    parser.addOption(threads);
    parser.addPositionalArgument(QStringLiteral("files"),
                                 QStringLiteral("Snapshots to open; a folder, or files named by rank, open as one job."),
                                 QStringLiteral("[files or folder...]"));
    parser.process(app);
    if (parser.isSet(threads)) {
        bool ok = false;
        const int n = parser.value(threads).toInt(&ok);
        if (!ok || n < 1 || n > 4096) {
            std::fprintf(stderr, "memscope: --threads takes a number of threads from 1 to 4096, not '%s'\n",
                         qPrintable(parser.value(threads)));
            return 1;
        }
        memscope::setThreadCount(static_cast<unsigned>(n));
    }

    memscope::MainWindow window;
    window.show();
    if (parser.isSet(attach))
        memscope::attachLive(&window, parser.value(attach), parser.value(token), window.runner());
    if (parser.isSet(attachJob))
        memscope::attachLiveJob(&window, parser.value(attachJob), window.runner());
    if (parser.isSet(compare))
        window.compareFiles(parser.positionalArguments());
    else
        window.openFiles(parser.positionalArguments());
    return app.exec();
}
