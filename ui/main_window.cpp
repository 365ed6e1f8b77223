#include "ui/main_window.h"

#include "job/rank_discovery.h"
#include "job/rank_set.h"
#include "ui/pages/allocation_timeline_view.h"
#include "ui/pages/job_tab.h"
#include "ui/plot/category_timeline_view.h"
#include "ui/loader.h"
#include "ui/runner/job_runner.h"
#include "ui/pages/report_exporter.h"
#include "ui/pages/snapshot_tab.h"
#include "ui/compare/comparison_view.h"
#include "ui/live/attach_dialog.h"
#include "ui/live/live_tab.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDir>
#include <QDragEnterEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QFrame>
#include <QHBoxLayout>
#include <QKeySequence>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QProgressBar>
#include <QPushButton>
#include <QSettings>
#include <QStackedWidget>
#include <QStatusBar>
#include <QStyle>
#include <QTabWidget>
#include <QToolButton>
#include <QUrl>
#include <QPointer>
#include <QVBoxLayout>
#include <qcustomplot.h>

#include "analysis/analysis.h"
#include "compare/comparison.h"

namespace memscope {

namespace {

constexpr int kMaxRecent = 10;

QString canonical(const QString& path)
{
    const QFileInfo info(path);
    const QString c = info.canonicalFilePath();
    return c.isEmpty() ? info.absoluteFilePath() : c;
}

// The status bar's words for a running stage: "Attributing train.pickle…".
QString stageText(const QString& stage, const QString& path)
{
    QString what = stage;
    if (!what.isEmpty())
        what[0] = what[0].toUpper();
    return QStringLiteral("%1 %2…").arg(what, QFileInfo(path).fileName());
}

} // namespace

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent), m_runner(new JobRunner(this)), m_loader(new Loader(this, m_runner)), m_stack(new QStackedWidget(this)),
      m_tabs(new QTabWidget(this)), m_banner(new QFrame(this)), m_bannerText(new QLabel(m_banner)), m_loadLabel(new QLabel(this)),
      m_progress(new QProgressBar(this)), m_cancel(new QPushButton(tr("Cancel"), this))
{
    setWindowTitle(QStringLiteral("memscope"));
    setAcceptDrops(true);
    m_tabs->setTabsClosable(true);
    m_tabs->setMovable(true);
    m_tabs->setDocumentMode(true);
    m_tabs->setElideMode(Qt::ElideMiddle);

    // The error banner: non-modal, so a failed file never blocks the ones already open.
    m_banner->setObjectName(QStringLiteral("errorBanner"));
    m_banner->setFrameShape(QFrame::StyledPanel);
    m_banner->setAutoFillBackground(true);
    applyBannerPalette();
    auto* bannerLayout = new QHBoxLayout(m_banner);
    bannerLayout->setContentsMargins(10, 6, 6, 6);
    auto* icon = new QLabel(m_banner);
    icon->setPixmap(style()->standardIcon(QStyle::SP_MessageBoxWarning).pixmap(20, 20));
    m_bannerText->setWordWrap(true);
    m_bannerText->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto* dismiss = new QToolButton(m_banner);
    dismiss->setText(QStringLiteral("✕"));
    dismiss->setAutoRaise(true);
    dismiss->setToolTip(tr("Dismiss"));
    bannerLayout->addWidget(icon, 0, Qt::AlignTop);
    bannerLayout->addWidget(m_bannerText, 1);
    bannerLayout->addWidget(dismiss, 0, Qt::AlignTop);
    m_banner->hide();
    connect(dismiss, &QToolButton::clicked, m_banner, &QWidget::hide);

    createWelcome();
    m_stack->addWidget(m_welcome);
    m_stack->addWidget(m_tabs);
    auto* central = new QWidget(this);
    auto* layout = new QVBoxLayout(central);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    layout->addWidget(m_banner);
    layout->addWidget(m_stack, 1);
    setCentralWidget(central);

    m_progress->setRange(0, 100);
    m_progress->setMaximumWidth(220);
    m_progress->setTextVisible(true);
    statusBar()->addPermanentWidget(m_loadLabel);
    statusBar()->addPermanentWidget(m_progress);
    statusBar()->addPermanentWidget(m_cancel);
    m_loadLabel->hide();
    m_progress->hide();
    m_cancel->hide();
    // The chart's mouse hints only while a chart is shown; the welcome page has none. A
    // normal status-bar widget: a temporary message covers it, and it comes back after.
    auto* hint = new QLabel(tr("Wheel: zoom · drag: pan · Shift+drag: select a range · click: inspect a time · "
                               "double-click: reset · F1: shortcuts"),
                            this);
    hint->setObjectName(QStringLiteral("chartHint"));
    hint->setMinimumWidth(1); // elided by the layout rather than widening the window
    statusBar()->addWidget(hint, 1);
    auto showHint = [this, hint] { hint->setVisible(m_stack->currentWidget() == m_tabs && currentTab()); };
    connect(m_stack, &QStackedWidget::currentChanged, this, showHint);
    connect(m_tabs, &QTabWidget::currentChanged, this, showHint);
    showHint();

    connect(m_cancel, &QPushButton::clicked, this, [this] {
        m_loader->cancel();
        for (uint64_t id : m_comparing)
            m_runner->cancel(id);
        if (m_openingJob)
            m_runner->cancel(m_openingJob);
    });
    // A job that reports no error of its own (a tab closed meanwhile, say) reaches the banner.
    connect(m_runner, &JobRunner::failed, this, [this](const QString&, const QString& message) { showError(message); });
    connect(m_loader, &Loader::loadStarted, this, [this](const QString& path) {
        m_loadLabel->setText(tr("Loading %1…").arg(QFileInfo(path).fileName()));
        m_loadLabel->show();
        m_progress->setValue(0);
        m_progress->show();
        m_cancel->show();
    });
    connect(m_loader, &Loader::progressChanged, this, [this](const QString& path, double f, const QString& stage) {
        m_progress->setValue(static_cast<int>(f * 100));
        m_progress->setFormat(stage + QStringLiteral(" %p%"));
        m_loadLabel->setText(stageText(stage, path));
    });
    connect(m_loader, &Loader::curvesReady, this, &MainWindow::onCurves);
    connect(m_loader, &Loader::attributed, this, &MainWindow::onAttributed);
    connect(m_loader, &Loader::snapshotLoaded, this, &MainWindow::onLoaded);
    connect(m_loader, &Loader::loadFailed, this, &MainWindow::onFailed);
    connect(m_loader, &Loader::loadCancelled, this, [this](const QString& path) {
        if (path == m_loadingPath)
            dropLoadingTab();
        statusBar()->showMessage(tr("Cancelled loading %1").arg(QFileInfo(path).fileName()), 5000);
    });
    connect(m_loader, &Loader::idle, this, [this] {
        m_loadLabel->hide();
        m_progress->hide();
        m_cancel->hide();
    });
    connect(m_tabs, &QTabWidget::tabCloseRequested, this, &MainWindow::closeTab);
    connect(m_tabs, &QTabWidget::currentChanged, this, [this] {
        updateActions();
        if (SnapshotTab* t = currentTab())
            setWindowTitle(QFileInfo(t->path()).fileName() + QStringLiteral(" — memscope"));
        else
            setWindowTitle(QStringLiteral("memscope"));
    });

    createActions();
    // Attaching (File > Attach, --attach, a live job's rank) opens a tab here.
    setLiveTabHost([this](QWidget* widget, const QString& title) { addLiveTab(widget, title); });
    QSettings settings;
    if (!restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray()))
        resize(1500, 950);
    restoreState(settings.value(QStringLiteral("window/state")).toByteArray());
    m_tabLayout = settings.value(QStringLiteral("window/tabLayout")).toByteArray();
    m_axisAction->setChecked(settings.value(QStringLiteral("view/eventAxis"), false).toBool());
    rebuildRecentMenu();
    updateActions();
}

MainWindow::~MainWindow()
{
    setLiveTabHost({});
    m_runner->cancelAll();
}

void MainWindow::createWelcome()
{
    m_welcome = new QWidget(this);
    auto* layout = new QVBoxLayout(m_welcome);
    layout->addStretch(2);
    auto* title = new QLabel(tr("<h1>memscope</h1>"), m_welcome);
    title->setAlignment(Qt::AlignCenter);
    auto* text = new QLabel(tr("Where does a PyTorch program's GPU memory go?<br><br>"
                               "Drop snapshot files here (written by <tt>torch.cuda.memory._dump_snapshot()</tt>),<br>"
                               "or open them with File &gt; Open (Ctrl+O)."),
                            m_welcome);
    text->setAlignment(Qt::AlignCenter);
    auto* open = new QPushButton(tr("Open snapshot…"), m_welcome);
    connect(open, &QPushButton::clicked, this, &MainWindow::chooseFiles);
    auto* buttons = new QHBoxLayout;
    buttons->addStretch();
    buttons->addWidget(open);
#ifdef MEMSCOPE_SAMPLES_DIR
    const QString example = QStringLiteral(MEMSCOPE_SAMPLES_DIR "/llm_bs16.pickle");
    if (QFileInfo::exists(example)) {
        auto* ex = new QPushButton(tr("Open an example"), m_welcome);
        connect(ex, &QPushButton::clicked, this, [this, example] { openFile(example); });
        buttons->addWidget(ex);
    }
#endif
    buttons->addStretch();
    m_recentList = new QLabel(m_welcome);
    m_recentList->setAlignment(Qt::AlignCenter);
    m_recentList->setTextFormat(Qt::RichText);
    connect(m_recentList, &QLabel::linkActivated, this, [this](const QString& link) { openFile(QUrl(link).toLocalFile()); });
    layout->addWidget(title);
    layout->addWidget(text);
    layout->addSpacing(12);
    layout->addLayout(buttons);
    layout->addSpacing(18);
    layout->addWidget(m_recentList);
    layout->addStretch(3);
}

void MainWindow::createActions()
{
    QMenu* file = menuBar()->addMenu(tr("&File"));
    QAction* open = file->addAction(tr("&Open…"), this, &MainWindow::chooseFiles);
    open->setShortcut(QKeySequence::Open);
    QAction* folder = file->addAction(tr("Open &Folder…"), this, &MainWindow::chooseFolder);
    folder->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_O));
    folder->setToolTip(tr("Open a distributed job: a folder of per-rank snapshots or *.summary.json"));
    m_recentMenu = file->addMenu(tr("Open &Recent"));
    QAction* compare = file->addAction(tr("Co&mpare…"), this, &MainWindow::chooseComparison);
    compare->setToolTip(tr("Two or more snapshots on one axis of iterations and phases: what changed, where and why"));
    addAttachAction(this, file, nullptr, m_runner);
    file->addSeparator();
    m_exportAction = file->addAction(tr("&Export Report…"), this, &MainWindow::chooseExportDirectory);
    m_exportAction->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
    m_exportAction->setToolTip(tr("Write peak_report.png, peak_report.csv, timeline.csv, report.json, flame.json and flame.svg"));
    m_imageAction = file->addAction(tr("Save Chart &Image…"), this, &MainWindow::saveChartImage);
    m_imageAction->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_S));
    file->addSeparator();
    m_closeAction = file->addAction(tr("&Close Tab"), this, [this] { closeTab(m_tabs->currentIndex()); });
    m_closeAction->setShortcut(QKeySequence::Close);
    QAction* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
    quit->setShortcut(QKeySequence::Quit);

    QMenu* view = menuBar()->addMenu(tr("&View"));
    m_axisAction = view->addAction(tr("X Axis: &Event Index"));
    m_axisAction->setCheckable(true);
    m_axisAction->setShortcut(QKeySequence(Qt::Key_T));
    connect(m_axisAction, &QAction::toggled, this, [this](bool on) {
        for (int i = 0; i < tabCount(); ++i)
            if (SnapshotTab* t = tab(i))
                t->setXAxisMode(on ? XAxisMode::EventIndex : XAxisMode::Time);
    });
    view->addSeparator();
    auto tabAction = [&](QMenu* menu, const QString& text, const QKeySequence& key, auto fn) {
        QAction* a = menu->addAction(text);
        a->setShortcut(key);
        connect(a, &QAction::triggered, this, [this, fn] {
            if (SnapshotTab* t = currentTab())
                fn(t);
        });
        m_tabActions << a;
        return a;
    };
    tabAction(view, tr("Go to Global &Peak"), QKeySequence(Qt::Key_P), [](SnapshotTab* t) { t->goToPeak(); });
    tabAction(view, tr("&Reset Zoom"), QKeySequence(Qt::CTRL | Qt::Key_0), [](SnapshotTab* t) { t->timeline()->resetZoom(); });
    tabAction(view, tr("Zoom &In"), QKeySequence::ZoomIn, [](SnapshotTab* t) { t->timeline()->zoomBy(0.5); });
    tabAction(view, tr("Zoom &Out"), QKeySequence::ZoomOut, [](SnapshotTab* t) { t->timeline()->zoomBy(2.0); });
    tabAction(view, tr("Pan &Left"), QKeySequence(Qt::ALT | Qt::Key_Left), [](SnapshotTab* t) { t->timeline()->panBy(-0.25); });
    tabAction(view, tr("Pan Ri&ght"), QKeySequence(Qt::ALT | Qt::Key_Right), [](SnapshotTab* t) { t->timeline()->panBy(0.25); });
    tabAction(view, tr("Clear Range &Selection"), QKeySequence(Qt::Key_Escape),
              [](SnapshotTab* t) { t->timeline()->clearRangeSelection(); });
    view->addSeparator();
    using Detail = SnapshotTab::DetailTab;
    tabAction(view, tr("&Breakdown"), QKeySequence(Qt::CTRL | Qt::Key_1),
              [](SnapshotTab* t) { t->showDetail(Detail::Breakdown); });
    tabAction(view, tr("&Allocations Timeline"), QKeySequence(Qt::CTRL | Qt::Key_2),
              [](SnapshotTab* t) { t->showDetail(Detail::Allocations); });
    tabAction(view, tr("Allocator &State"), QKeySequence(Qt::CTRL | Qt::Key_3),
              [](SnapshotTab* t) { t->showDetail(Detail::Allocator); });
    tabAction(view, tr("&Diagnostics"), QKeySequence(Qt::CTRL | Qt::Key_4),
              [](SnapshotTab* t) { t->showDetail(Detail::Diagnostics); });
    tabAction(view, tr("&Estimator"), QKeySequence(Qt::CTRL | Qt::Key_5),
              [](SnapshotTab* t) { t->showDetail(Detail::Estimator); });
    tabAction(view, tr("&What-If…"), QKeySequence(Qt::CTRL | Qt::Key_6), [](SnapshotTab* t) { t->showDetail(Detail::WhatIf); });
    tabAction(view, tr("&Flame Graph"), QKeySequence(Qt::CTRL | Qt::Key_7), [](SnapshotTab* t) { t->showDetail(Detail::Flame); });
    tabAction(view, tr("&Find Allocations…"), QKeySequence::Find, [](SnapshotTab* t) {
        t->showDetail(Detail::Allocations);
        t->allocations()->searchField()->setFocus();
        t->allocations()->searchField()->selectAll();
    });
    view->addSeparator();
    QAction* next = view->addAction(tr("&Next Tab"), this, [this] {
        if (m_tabs->count())
            m_tabs->setCurrentIndex((m_tabs->currentIndex() + 1) % m_tabs->count());
    });
    next->setShortcut(QKeySequence::NextChild);
    QAction* prev = view->addAction(tr("P&revious Tab"), this, [this] {
        if (m_tabs->count())
            m_tabs->setCurrentIndex((m_tabs->currentIndex() + m_tabs->count() - 1) % m_tabs->count());
    });
    prev->setShortcut(QKeySequence::PreviousChild);

    QMenu* help = menuBar()->addMenu(tr("&Help"));
    QAction* keys = help->addAction(tr("&Keyboard Shortcuts and Mouse"), this, &MainWindow::showShortcuts);
    keys->setShortcut(QKeySequence::HelpContents);
    help->addSeparator();
    help->addAction(tr("&About memscope"), this, &MainWindow::about);
    help->addAction(tr("About &Qt"), qApp, &QApplication::aboutQt);
}

int MainWindow::tabCount() const { return m_tabs->count(); }

SnapshotTab* MainWindow::tab(int index) const
{
    if (auto* live = qobject_cast<LiveTab*>(m_tabs->widget(index)))
        return live->snapshotTab();
    return qobject_cast<SnapshotTab*>(m_tabs->widget(index));
}

SnapshotTab* MainWindow::currentTab() const { return tab(m_tabs->currentIndex()); }

LiveTab* MainWindow::liveTab(int index) const { return qobject_cast<LiveTab*>(m_tabs->widget(index)); }

void MainWindow::addLiveTab(QWidget* widget, const QString& title)
{
    const int index = m_tabs->addTab(widget, title);
    m_tabs->setCurrentIndex(index);
    m_stack->setCurrentWidget(m_tabs);
    if (auto* live = qobject_cast<LiveTab*>(widget)) {
        connect(live, &LiveTab::titleChanged, this, [this, live](const QString& t) {
            if (const int i = m_tabs->indexOf(live); i >= 0)
                m_tabs->setTabText(i, t);
        });
        // The live tab's snapshot view appears with the first events: the actions follow it.
        connect(live, &LiveTab::documentShown, this, &MainWindow::updateActions);
    }
    updateActions();
}

QString MainWindow::errorText() const { return m_bannerText->text(); }

bool MainWindow::isErrorVisible() const { return !m_banner->isHidden(); }

void MainWindow::openFile(const QString& path) { openFiles({path}); }

bool MainWindow::isJob(const QStringList& paths)
{
    int ranked = 0;
    for (const QString& p : paths) {
        if (QFileInfo(p).isDir())
            return true;
        ranked += rankFromFileName(QFileInfo(p).fileName().toStdString()) ? 1 : 0;
    }
    return ranked >= 2 && ranked == paths.size();
}

JobTab* MainWindow::jobTab(int index) const { return qobject_cast<JobTab*>(m_tabs->widget(index)); }

void MainWindow::openJob(const QStringList& paths)
{
    if (m_openingJob) {
        showError(tr("A job is still opening; wait for it before opening another."));
        return;
    }
    std::vector<std::string> list;
    for (const QString& p : paths)
        list.push_back(p.toStdString());
    const QString title = paths.size() == 1 ? QFileInfo(paths.front()).fileName() : tr("%1 ranks").arg(paths.size());
    m_loadLabel->setText(tr("Opening job %1…").arg(title));
    m_loadLabel->show();
    m_progress->setRange(0, 0);
    m_progress->show();
    m_cancel->show();
    auto set = std::make_shared<std::shared_ptr<const RankSet>>();
    auto done = [this] {
        m_openingJob = 0;
        m_loadLabel->hide();
        m_progress->hide();
        m_cancel->hide();
        m_progress->setRange(0, 100);
    };
    JobCallbacks callbacks;
    callbacks.receiver = this;
    callbacks.finished = [this, set, title, done] {
        done();
        onJobOpened(title, *set);
    };
    callbacks.failed = [this, title, done](const QString& message) {
        done();
        showError(tr("Could not open the job %1: %2").arg(title, message));
    };
    callbacks.cancelled = [this, title, done] {
        done();
        statusBar()->showMessage(tr("Cancelled opening %1").arg(title), 5000);
    };
    m_openingJob = m_runner->start(
        title,
        [list, set](JobContext& job) {
        RankSetOptions options;
        options.progress = [&job](size_t, size_t) { return !job.cancelled(); };
        *set = RankSet::open(list, options);
        },
        std::move(callbacks));
}

void MainWindow::onJobOpened(const QString& title, std::shared_ptr<const RankSet> set)
{
    auto* t = new JobTab(std::move(set), title, m_tabs);
    connect(t, &JobTab::openRank, this, &MainWindow::openFile);
    connect(t, &JobTab::statusMessage, this, [this](const QString& s) { statusBar()->showMessage(s, 10000); });
    const int index = m_tabs->addTab(t, tr("Job %1").arg(title));
    m_tabs->setCurrentIndex(index);
    m_stack->setCurrentWidget(m_tabs);
    updateActions();
    statusBar()->showMessage(tr("Opened job %1: %2 ranks").arg(title).arg(t->rankSet().size()), 5000);
}

void MainWindow::chooseFolder()
{
    QSettings settings;
    const QString dir = QFileDialog::getExistingDirectory(this, tr("Open a Job's Folder"),
                                                          settings.value(QStringLiteral("lastDir")).toString());
    if (dir.isEmpty())
        return;
    settings.setValue(QStringLiteral("lastDir"), dir);
    openJob({dir});
}

void MainWindow::openFiles(const QStringList& paths)
{
    if (isJob(paths)) {
        QStringList folders, files;
        for (const QString& p : paths)
            (QFileInfo(p).isDir() ? folders : files) << p;
        for (const QString& f : folders)
            openJob({f}); // one job a folder; a second waits its turn with an error
        if (!files.isEmpty() && folders.isEmpty())
            openJob(files);
        return;
    }
    for (const QString& p : paths) {
        const QString c = canonical(p);
        bool open = false;
        for (int i = 0; i < tabCount() && !open; ++i)
            if (tab(i) && canonical(tab(i)->path()) == c) {
                m_tabs->setCurrentIndex(i);
                open = true;
            }
        if (!open)
            m_loader->load(p);
    }
}

SnapshotTab* MainWindow::addSnapshotTab(const QString& path, std::shared_ptr<const Document> document)
{
    auto* t = new SnapshotTab(std::move(document), m_tabs);
    t->restoreLayout(m_tabLayout);
    if (m_axisAction->isChecked())
        t->setXAxisMode(XAxisMode::EventIndex);
    connect(t, &SnapshotTab::statusMessage, this, [this](const QString& s) { statusBar()->showMessage(s, 10000); });
    connect(t, &SnapshotTab::xAxisModeChanged, this, [this](XAxisMode mode) {
        const QSignalBlocker block(m_axisAction);
        m_axisAction->setChecked(mode == XAxisMode::EventIndex);
    });
    const int index = m_tabs->addTab(t, QFileInfo(path).fileName());
    m_tabs->setTabToolTip(index, path);
    m_tabs->setCurrentIndex(index);
    m_stack->setCurrentWidget(m_tabs);
    return t;
}

void MainWindow::onCurves(const QString& path, std::shared_ptr<const Document> document)
{
    const QString next = QString::fromUtf8(analysisStageName(AnalysisStage::Attributed)); // the stage that runs now
    m_loadLabel->setText(stageText(next, path));
    m_progress->setFormat(next + QStringLiteral(" %p%"));
    m_loadingPath = path;
    m_loadingTab = addSnapshotTab(path, std::move(document));
    updateActions();
}

void MainWindow::onAttributed(const QString& path, std::shared_ptr<const Document> document)
{
    if (m_loadingTab && path == m_loadingPath) {
        m_loadingTab->setDocument(std::move(document));
        updateActions();
    }
}

void MainWindow::dropLoadingTab()
{
    if (m_loadingTab) {
        const int index = m_tabs->indexOf(m_loadingTab);
        m_tabs->removeTab(index);
        m_loadingTab->deleteLater();
        if (m_tabs->count() == 0)
            m_stack->setCurrentWidget(m_welcome);
    }
    m_loadingTab = nullptr;
    m_loadingPath.clear();
    updateActions();
}

void MainWindow::onLoaded(const QString& path, std::shared_ptr<const Document> document)
{
    QStringList odd; // what the reader took as unknown rather than refuse the file
    for (const std::string& w : document->snapshot().warnings)
        odd << QString::fromStdString(w);
    const bool staged = path == m_loadingPath;
    const bool closed = staged && !m_loadingTab; // its tab was closed while it loaded
    if (staged && m_loadingTab)
        m_loadingTab->setDocument(std::move(document));
    else if (!closed)
        addSnapshotTab(path, std::move(document));
    m_loadingTab = nullptr;
    m_loadingPath.clear();
    if (closed) {
        updateActions();
        return;
    }
    addRecent(path);
    updateActions();
    if (odd.isEmpty())
        statusBar()->showMessage(tr("Opened %1").arg(path), 5000);
    else
        statusBar()->showMessage(tr("Opened %1; %2").arg(path, odd.join(QStringLiteral("; "))), 30000);
    emit documentOpened(path);
}

void MainWindow::onFailed(const QString& path, const QString& message)
{
    if (path == m_loadingPath)
        dropLoadingTab();
    showError(message);
}

void MainWindow::showError(const QString& message)
{
    QStringList lines;
    if (!m_banner->isHidden() && !m_bannerText->text().isEmpty())
        lines = m_bannerText->text().split(QStringLiteral("<br>"));
    lines << tr("<b>Could not open</b> %1").arg(message.toHtmlEscaped());
    while (lines.size() > 4)
        lines.removeFirst();
    m_bannerText->setText(lines.join(QStringLiteral("<br>")));
    m_banner->show();
    statusBar()->showMessage(tr("Could not open a file; see the message above."), 5000);
}

void MainWindow::closeTab(int index)
{
    if (auto* live = qobject_cast<LiveTab*>(m_tabs->widget(index))) {
        if (!live->confirmClose())
            return;
    }
    if (m_tabs->widget(index) && !qobject_cast<SnapshotTab*>(m_tabs->widget(index)) && !jobTab(index) &&
        !comparisonTab(index)) { // a live tab or a live job's view
        QWidget* w = m_tabs->widget(index);
        m_tabs->removeTab(index);
        w->deleteLater();
        if (m_tabs->count() == 0)
            m_stack->setCurrentWidget(m_welcome);
        updateActions();
        return;
    }
    if (JobTab* j = jobTab(index)) {
        m_tabs->removeTab(index);
        j->deleteLater();
        if (m_tabs->count() == 0)
            m_stack->setCurrentWidget(m_welcome);
        updateActions();
        return;
    }
    if (ComparisonView* v = comparisonTab(index)) {
        m_tabs->removeTab(index);
        v->deleteLater();
        if (m_tabs->count() == 0)
            m_stack->setCurrentWidget(m_welcome);
        updateActions();
        return;
    }
    SnapshotTab* t = tab(index);
    if (!t)
        return;
    if (t == m_loadingTab) { // still categorising or diagnosing: stop that, the queued files still load
        m_loadingTab = nullptr; // m_loadingPath stays: a result already on its way is dropped
        m_loader->cancelCurrent();
    }
    m_tabLayout = t->saveLayout();
    m_tabs->removeTab(index);
    t->deleteLater();
    if (m_tabs->count() == 0)
        m_stack->setCurrentWidget(m_welcome);
    updateActions();
}

void MainWindow::updateActions()
{
    const bool any = currentTab() != nullptr;
    const bool comparison = comparisonTab(m_tabs->currentIndex()) != nullptr;
    const bool categorised = any && currentTab()->document().attributed(); // the report needs the categories
    m_exportAction->setEnabled(categorised || comparison);
    m_imageAction->setEnabled(any);
    m_closeAction->setEnabled(any || comparison || jobTab(m_tabs->currentIndex()) != nullptr);
    for (QAction* a : m_tabActions)
        a->setEnabled(any);
}

QStringList MainWindow::recentFiles() const { return QSettings().value(QStringLiteral("recentFiles")).toStringList(); }

void MainWindow::addRecent(const QString& path)
{
    QStringList recent = recentFiles();
    const QString abs = QFileInfo(path).absoluteFilePath();
    recent.removeAll(abs);
    recent.prepend(abs);
    while (recent.size() > kMaxRecent)
        recent.removeLast();
    QSettings().setValue(QStringLiteral("recentFiles"), recent);
    rebuildRecentMenu();
}

void MainWindow::rebuildRecentMenu()
{
    m_recentMenu->clear();
    const QStringList recent = recentFiles();
    QString links;
    for (int i = 0; i < recent.size(); ++i) {
        const QString p = recent[i];
        QAction* a = m_recentMenu->addAction(QStringLiteral("&%1 %2").arg((i + 1) % 10).arg(QFileInfo(p).fileName()), this,
                                             [this, p] { openFile(p); });
        a->setToolTip(p);
        a->setStatusTip(p);
        if (i < 6)
            links += QStringLiteral("<a href=\"%1\">%2</a><br>")
                         .arg(QUrl::fromLocalFile(p).toString().toHtmlEscaped(), p.toHtmlEscaped());
    }
    m_recentMenu->setEnabled(!recent.isEmpty());
    if (!recent.isEmpty()) {
        m_recentMenu->addSeparator();
        m_recentMenu->addAction(tr("Clear List"), this, [this] {
            QSettings().remove(QStringLiteral("recentFiles"));
            rebuildRecentMenu();
        });
    }
    if (m_recentList)
        m_recentList->setText(links.isEmpty() ? QString() : tr("<b>Recent files</b><br>") + links);
}

void MainWindow::chooseFiles()
{
    QSettings settings;
    const QStringList files = QFileDialog::getOpenFileNames(
        this, tr("Open Snapshots"), settings.value(QStringLiteral("lastDir")).toString(),
        tr("PyTorch memory snapshots (*.pickle *.pkl *.pickle.gz *.gz *.json);;All files (*)"));
    if (files.isEmpty())
        return;
    settings.setValue(QStringLiteral("lastDir"), QFileInfo(files.front()).absolutePath());
    openFiles(files);
}

bool MainWindow::exportReport(const QString& directory, QString* message)
{
    if (ComparisonView* v = comparisonTab(m_tabs->currentIndex())) {
        try {
            const QStringList files = v->exportTo(directory);
            if (message)
                *message = tr("Wrote %1").arg(files.join(QStringLiteral(", ")));
            return true;
        } catch (const std::exception& e) {
            if (message)
                *message = QString::fromStdString(e.what());
            return false;
        }
    }
    SnapshotTab* t = currentTab();
    if (!t)
        return false;
    if (!t->document().attributed()) {
        if (message)
            *message = tr("%1 is still being categorised; export its report once it has loaded").arg(t->path());
        return false;
    }
    try {
        const ReportFiles files = writeReport(t->document(), t->deviceIndex(), t->selectedEvent(), directory);
        if (message)
            *message = tr("Wrote %1, %2, %3, %4 and the flame graph (flame.json, flame.svg)")
                           .arg(files.png, files.peakCsv, files.timelineCsv, files.json);
        return true;
    } catch (const std::exception& e) {
        if (message)
            *message = QString::fromStdString(e.what());
        return false;
    }
}

void MainWindow::chooseExportDirectory()
{
    QSettings settings;
    // Starts in the last export folder (else the open file's); the dialog can make a new one.
    QString start = settings.value(QStringLiteral("exportDir")).toString();
    if (start.isEmpty() || !QFileInfo(start).isDir())
        if (SnapshotTab* t = currentTab())
            start = QFileInfo(t->path()).absolutePath();
    const QString dir = QFileDialog::getExistingDirectory(this, tr("Export Report To"), start, QFileDialog::ShowDirsOnly);
    if (dir.isEmpty())
        return;
    settings.setValue(QStringLiteral("exportDir"), dir);
    QString message;
    if (exportReport(dir, &message))
        statusBar()->showMessage(message, 10000);
    else
        QMessageBox::warning(this, tr("Export failed"), message);
}

void MainWindow::saveChartImage()
{
    SnapshotTab* t = currentTab();
    if (!t)
        return;
    const QString suggested = QFileInfo(t->path()).completeBaseName() + QStringLiteral("_timeline.png");
    const QString path = QFileDialog::getSaveFileName(this, tr("Save Chart Image"), suggested, tr("PNG image (*.png)"));
    if (path.isEmpty())
        return;
    QCustomPlot* plot = t->detailTabs()->currentIndex() == 1 && t->allocations()->hasFocus() ? t->allocations()->plot()
                                                                                             : t->timeline()->plot();
    if (!plot->savePng(path, 0, 0, devicePixelRatioF()))
        QMessageBox::warning(this, tr("Save failed"), tr("Could not write %1").arg(path));
    else
        statusBar()->showMessage(tr("Saved %1").arg(path), 5000);
}

void MainWindow::showShortcuts()
{
    // Read off the menus, so the page never disagrees with them.
    QString rows;
    for (QAction* top : menuBar()->actions()) {
        QMenu* menu = top->menu();
        if (!menu)
            continue;
        QString menuRows;
        for (QAction* a : menu->actions())
            if (!a->isSeparator() && !a->shortcut().isEmpty())
                menuRows += QStringLiteral("<tr><td>%1</td><td><b>%2</b></td></tr>")
                                .arg(a->text().remove(QLatin1Char('&')).toHtmlEscaped(),
                                     a->shortcut().toString(QKeySequence::NativeText).toHtmlEscaped());
        if (!menuRows.isEmpty())
            rows += QStringLiteral("<tr><td colspan=2><br><i>%1</i></td></tr>")
                        .arg(top->text().remove(QLatin1Char('&')).toHtmlEscaped()) +
                    menuRows;
    }
    QMessageBox box(this);
    box.setWindowTitle(tr("Keyboard Shortcuts and Mouse"));
    box.setTextFormat(Qt::RichText);
    box.setText(tr("<h3>Using memscope</h3>"
                   "<p>Open a snapshot (<tt>torch.cuda.memory._dump_snapshot()</tt>) or drop it on the window. The timeline "
                   "shows memory by category; the peak is marked. Click a time to see what is live then in the tabs below; "
                   "Shift+drag selects a range; double-click resets the zoom. Findings in Diagnostics have a \"Show "
                   "moment\" link; activating an allocation or a call site selects it in the timeline.</p>"
                   "<table cellspacing=0 cellpadding=3>"
                   "<tr><td>Mouse wheel</td><td><b>zoom</b></td></tr>"
                   "<tr><td>Drag</td><td><b>pan</b></td></tr>"
                   "<tr><td>Shift+drag</td><td><b>select a range</b></td></tr>"
                   "<tr><td>Click</td><td><b>inspect a time</b></td></tr>"
                   "<tr><td>Double-click</td><td><b>reset the zoom</b></td></tr>"
                   "%1</table>")
                    .arg(rows));
    box.exec();
}

void MainWindow::about()
{
    QMessageBox::about(this, tr("About memscope"),
                       tr("<h3>memscope %1</h3>"
                          "<p>Where does a PyTorch program's GPU memory go? memscope reads the allocator snapshots "
                          "written by <tt>torch.cuda.memory._dump_snapshot()</tt> and shows memory over time by "
                          "category, the peak and what it is made of, and the code that allocated it.</p>"
                          "<p>Built with Qt %2 and QCustomPlot.</p>")
                           .arg(QApplication::applicationVersion(), QString::fromLatin1(qVersion())));
}

void MainWindow::applyBannerPalette()
{
    QPalette bp = palette();
    const bool dark = bp.color(QPalette::Window).lightness() < 128;
    bp.setColor(QPalette::Window, dark ? QColor(90, 30, 30) : QColor(253, 226, 226));
    bp.setColor(QPalette::WindowText, dark ? QColor(255, 220, 220) : QColor(120, 0, 0));
    m_banner->setPalette(bp);
}

void MainWindow::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::ApplicationPaletteChange || event->type() == QEvent::PaletteChange)
        if (m_banner && !m_applyingPalette) {
            m_applyingPalette = true;
            applyBannerPalette();
            m_applyingPalette = false;
        }
    QMainWindow::changeEvent(event);
}

void MainWindow::saveSettings()
{
    QSettings settings;
    settings.setValue(QStringLiteral("window/geometry"), saveGeometry());
    settings.setValue(QStringLiteral("window/state"), saveState());
    if (SnapshotTab* t = currentTab())
        m_tabLayout = t->saveLayout();
    settings.setValue(QStringLiteral("window/tabLayout"), m_tabLayout);
    settings.setValue(QStringLiteral("view/eventAxis"), m_axisAction->isChecked());
}

void MainWindow::closeEvent(QCloseEvent* event)
{
    for (int i = 0; i < m_tabs->count(); ++i)
        if (LiveTab* live = liveTab(i); live && !live->confirmClose()) {
            event->ignore(); // an unsaved recording the user kept
            return;
        }
    saveSettings();
    m_loader->cancel();
    event->accept();
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event)
{
    if (event->mimeData()->hasUrls())
        for (const QUrl& u : event->mimeData()->urls())
            if (u.isLocalFile()) {
                event->acceptProposedAction();
                return;
            }
}

void MainWindow::dropEvent(QDropEvent* event)
{
    QStringList files;
    for (const QUrl& u : event->mimeData()->urls())
        if (u.isLocalFile())
            files << u.toLocalFile();
    if (!files.isEmpty()) {
        event->acceptProposedAction();
        // Ctrl while dropping several files: compare them instead of opening each.
        if (files.size() >= 2 && (event->modifiers() & Qt::ControlModifier))
            compareFiles(files);
        else
            openFiles(files);
    }
}

ComparisonView* MainWindow::comparisonTab(int index) const { return qobject_cast<ComparisonView*>(m_tabs->widget(index)); }

void MainWindow::chooseComparison()
{
    QSettings settings;
    const QStringList files = QFileDialog::getOpenFileNames(
        this, tr("Compare Snapshots (the first is the baseline A)"), settings.value(QStringLiteral("lastDir")).toString(),
        tr("PyTorch memory snapshots (*.pickle *.pkl *.pickle.gz *.gz *.json);;All files (*)"));
    if (files.isEmpty())
        return;
    settings.setValue(QStringLiteral("lastDir"), QFileInfo(files.front()).absolutePath());
    if (files.size() < 2) {
        showError(tr("Compare needs two or more files; %1 was the only one chosen").arg(files.front()));
        return;
    }
    compareFiles(files);
}

void MainWindow::compareFiles(const QStringList& paths)
{
    if (paths.size() < 2) {
        showError(tr("Compare needs two or more files, got %1").arg(paths.size()));
        return;
    }
    statusBar()->showMessage(tr("Comparing %1 files…").arg(paths.size()));
    std::vector<std::string> files;
    for (const QString& p : paths)
        files.push_back(p.toStdString());
    const QString title = tr("Comparing %1").arg(QFileInfo(paths.front()).fileName());
    JobCallbacks callbacks;
    callbacks.receiver = this;
    auto forget = [this](uint64_t id) { std::erase(m_comparing, id); };
    auto id = std::make_shared<uint64_t>(0);
    callbacks.finished = [forget, id] { forget(*id); };
    callbacks.cancelled = [this, forget, id] {
        forget(*id);
        statusBar()->showMessage(tr("Comparison cancelled"), 5000);
    };
    callbacks.failed = [this, forget, id](const QString& message) {
        forget(*id);
        showError(message);
    };
    *id = m_runner->start(
        title,
        [this, files](JobContext& job) {
        AnalysisCallbacks analysis;
        analysis.progress = [&job](AnalysisStage, double) { return !job.cancelled(); };
        std::vector<std::shared_ptr<const Analysis>> runs;
        for (const std::string& f : files)
            runs.push_back(analyze(AnalysisSource::file(f), {.load = {}, .until = AnalysisStage::Attributed}, analysis));
        for (size_t i = 1; i < runs.size(); ++i) {
            auto comparison = compareRuns(runs.front(), runs[i]);
            job.post([this, comparison] { onCompared(comparison); });
        }
        },
        std::move(callbacks));
    m_comparing.push_back(*id);
}

void MainWindow::onCompared(std::shared_ptr<const Comparison> comparison)
{
    auto* v = new ComparisonView(std::move(comparison), m_tabs);
    const int index = m_tabs->addTab(v, v->title());
    m_tabs->setTabToolTip(index, QString::fromStdString(v->comparison().a().name + "\n" + v->comparison().b().name));
    m_tabs->setCurrentIndex(index);
    m_stack->setCurrentWidget(m_tabs);
    updateActions();
    statusBar()->showMessage(tr("Compared %1").arg(v->title()), 5000);
    emit comparisonOpened(v->title());
}

} // namespace memscope
