#pragma once

#include "ui/document/document.h"

#include <QMainWindow>
#include <QPointer>

#include <cstdint>
#include <memory>
#include <vector>

class QAction;
class QLabel;
class QMenu;
class QProgressBar;
class QPushButton;
class QStackedWidget;
class QTabWidget;
class QFrame;

namespace memscope {

class ComparisonView;
class JobRunner;
class JobTab;
class LiveTab;
class Loader;
class RankSet;
class SnapshotTab;

/*
 * The application window: one tab per opened snapshot, a welcome page when none is open.
 * Files arrive by drag-and-drop (several at once), File > Open, the recent-files menu or
 * the command line, and load as JobRunner jobs (the Loader's) with a progress bar naming the stage and
 * Cancel in the status bar; a file's tab opens as soon as its curves are replayed and fills in
 * as its categories and findings arrive (closing it cancels its load). A folder (dropped, named on the command line, File > Open
 * Folder) or several files named by rank open as one distributed job (a JobTab: core/job's RankSet, summarised as a runner job);
 * a rank opened from it gets a snapshot tab. A failed load shows its error in a banner above the tabs and leaves the open tabs as
 * they were. Window geometry, the splitter layout, the x-axis mode and recent files are kept in QSettings.
 */
class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    void openFile(const QString& path);
    void openFiles(const QStringList& paths);
    // Opens paths (a folder, or files one per rank) as one job in a JobTab.
    void openJob(const QStringList& paths);
    // True when openFiles() takes these paths as a job: a folder, or two or more files each
    // named with a rank (rank3…, snapshot_3…).
    static bool isJob(const QStringList& paths);
    JobTab* jobTab(int index) const;
    // Compares paths[1..] each against paths[0] (A), one comparison tab each, analysed on a
    // worker thread (File > Compare…, `memscope --compare A B`, Ctrl+drop of several files).
    void compareFiles(const QStringList& paths);
    ComparisonView* comparisonTab(int index) const;
    // A live recording's tab (File > Attach, --attach); tab(index) is its snapshot view.
    LiveTab* liveTab(int index) const;
    // Adds a live tab or a live job's view (the live part's host, setLiveTabHost()).
    void addLiveTab(QWidget* widget, const QString& title);
    Loader* loader() const { return m_loader; }
    // Runs every background job of the window (open, job, compare, live, what-if).
    JobRunner* runner() const { return m_runner; }
    QTabWidget* tabs() const { return m_tabs; }
    int tabCount() const;
    // The snapshot view of tab `index`: a file's tab, or a live tab's once events arrived.
    SnapshotTab* tab(int index) const;
    SnapshotTab* currentTab() const;
    QString errorText() const;
    bool isErrorVisible() const;
    QStringList recentFiles() const;
    // Writes the report of the current tab (its device and selected time) into a directory.
    bool exportReport(const QString& directory, QString* message);

signals:
    void documentOpened(const QString& path);
    void comparisonOpened(const QString& title);

protected:
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;
    void closeEvent(QCloseEvent* event) override;
    void changeEvent(QEvent* event) override;

private:
    void createActions();
    void createWelcome();
    // The loader's stages: the tab opens on the curves and fills in with each later stage.
    void onCurves(const QString& path, std::shared_ptr<const Document> document);
    void onAttributed(const QString& path, std::shared_ptr<const Document> document);
    void onLoaded(const QString& path, std::shared_ptr<const Document> document);
    SnapshotTab* addSnapshotTab(const QString& path, std::shared_ptr<const Document> document);
    void dropLoadingTab(); // a load cancelled or failed after its curves arrived
    void onFailed(const QString& path, const QString& message);
    void showError(const QString& message);
    void addRecent(const QString& path);
    void rebuildRecentMenu();
    void updateActions();
    void saveSettings();
    void chooseFiles();
    void chooseFolder();
    void onJobOpened(const QString& title, std::shared_ptr<const RankSet> set);
    void chooseComparison();
    void onCompared(std::shared_ptr<const class Comparison> comparison);
    void chooseExportDirectory();
    void saveChartImage();
    void showShortcuts(); // Help > Keyboard Shortcuts and Mouse (F1)
    void about();
    void closeTab(int index);
    void applyBannerPalette();

    JobRunner* m_runner;
    Loader* m_loader;
    QStackedWidget* m_stack;
    QWidget* m_welcome = nullptr;
    QTabWidget* m_tabs;
    QFrame* m_banner;
    QLabel* m_bannerText;
    QLabel* m_loadLabel;
    QProgressBar* m_progress;
    QPushButton* m_cancel;
    QMenu* m_recentMenu = nullptr;
    QLabel* m_recentList = nullptr;
    QAction* m_exportAction = nullptr;
    QAction* m_imageAction = nullptr;
    QAction* m_closeAction = nullptr;
    QAction* m_axisAction = nullptr;
    QList<QAction*> m_tabActions;
    QByteArray m_tabLayout;
    bool m_applyingPalette = false;
    uint64_t m_openingJob = 0; // the JobRunner job opening a job of ranks; one at a time
    std::vector<uint64_t> m_comparing; // the JobRunner jobs comparing files
    QPointer<SnapshotTab> m_loadingTab; // the tab of the file still loading, shown from its curves
    QString m_loadingPath; // its file; kept with no tab when the tab was closed (its load cancelled)
};

} // namespace memscope
