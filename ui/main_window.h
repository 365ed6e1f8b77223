#pragma once

#include <QMainWindow>

class QCustomPlot;

namespace memscope {

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(QWidget* parent = nullptr);
    void openFile(const QString& path);

private:
    QCustomPlot* m_plot;
};

} // namespace memscope
