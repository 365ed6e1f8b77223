#include "report_png.h"

#include "ui/document/document.h"
#include "report_command.h"
#include "ui/pages/report_exporter.h"

#include <QApplication>
#include <QDir>

#include <memory>

namespace memscope {

void installReportPngWriter()
{
    setReportPngWriter([](const std::shared_ptr<const Analysis>& analysis, const PointReport& at, const std::string& directory) {
        // QCustomPlot draws through QWidget, which needs a QApplication; the report never
        // shows a window, so Qt's offscreen platform serves when no platform was asked for.
        std::unique_ptr<QApplication> app;
        if (!QCoreApplication::instance()) {
            if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
                qputenv("QT_QPA_PLATFORM", "offscreen");
            static int argc = 1;
            static char name[] = "memscope";
            static char* argv[] = {name, nullptr};
            app = std::make_unique<QApplication>(argc, argv);
        }
        const auto document = makeDocument(analysis);
        const QString png = writeReportPng(*document, at, QString::fromStdString(directory));
        return QDir::toNativeSeparators(png).toStdString();
    });
}

} // namespace memscope
