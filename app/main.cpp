#include "cli.h"

#include "main_window.h"

#include <QApplication>
#include <QCommandLineParser>

#include <string>
#include <vector>

int main(int argc, char** argv)
{
    if (argc >= 2 && memscope::isHeadlessCommand(argv[1])) {
        std::vector<std::string> args(argv + 2, argv + argc);
        return memscope::runHeadless(argv[1], args);
    }

    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("memscope"));
    QApplication::setOrganizationName(QStringLiteral("memscope"));
    QApplication::setApplicationVersion(QStringLiteral(MEMSCOPE_VERSION));

    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("Where does a PyTorch program's GPU memory go?"));
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addPositionalArgument(QStringLiteral("files"), QStringLiteral("Snapshots to open."), QStringLiteral("[files...]"));
    parser.process(app);

    memscope::MainWindow window;
    window.show();
    for (const QString& f : parser.positionalArguments())
        window.openFile(f);
    return app.exec();
}
