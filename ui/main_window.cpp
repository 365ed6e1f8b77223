#include "main_window.h"

#include "common/load_error.h"
#include "replay/replay.h"
#include "snapshot/snapshot_reader.h"

#include <QMessageBox>
#include <qcustomplot.h>

namespace memscope {

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent)
    , m_plot(new QCustomPlot(this))
{
    setCentralWidget(m_plot);
    resize(1400, 900);
}

void MainWindow::openFile(const QString& path)
{
    try {
        auto replay = replaySnapshot(readSnapshotFile(path.toStdString()));
        const DeviceReplay& d = replay->devices.front();
        QVector<double> x, req, res;
        for (int64_t i = 0; i < d.eventCount; ++i) {
            x.push_back(static_cast<double>(i));
            req.push_back(static_cast<double>(d.requested[static_cast<size_t>(i)]) / (1 << 30));
            res.push_back(static_cast<double>(d.reserved[static_cast<size_t>(i)]) / (1 << 30));
        }
        m_plot->clearGraphs();
        m_plot->addGraph()->setData(x, req);
        m_plot->addGraph()->setData(x, res);
        m_plot->graph(1)->setPen(QPen(Qt::red));
        m_plot->rescaleAxes();
        m_plot->replot();
        setWindowTitle(path + QStringLiteral(" — memscope"));
    } catch (const std::exception& e) {
        QMessageBox::critical(this, tr("Cannot open snapshot"), QString::fromStdString(e.what()));
    }
}

} // namespace memscope
