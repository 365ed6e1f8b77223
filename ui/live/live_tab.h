#pragma once

#include <QWidget>

#include <functional>
#include <memory>

class QLabel;
class QStackedWidget;
class QToolButton;

namespace memscope {

class CategoryTimelineView;
class JobRunner;
class LiveOverview;
class LiveSession;
class MemoryGapBar;
class SnapshotTab;
struct Document;
struct LiveEndpoint;

/*
 * One live recording as a tab like any other: above, the process, the state (a failed update
 * says so here), the event count, rate, dropped events, lag and peak, the NVML gap bar,
 * Pause / Follow / Detach / Save recording, and the whole run's overview, redrawn on every
 * incremental update (LiveSession::viewUpdated, up to 25 a second); below, a SnapshotTab fed
 * through the same Document path as a file (categories, phases, peak panel, allocations,
 * allocator state, diagnostics), each full analysis a grown document of the same recording. When the process exits or the
 * connection breaks, everything received stays and can be saved.
 */
class LiveTab : public QWidget {
    Q_OBJECT
public:
    // runner: the window's (null: one of the session's own). detailEvents: the bounded mode
    // (LiveSession); -1: the setting live/detailEvents (default 0: every event).
    explicit LiveTab(QWidget* parent = nullptr, JobRunner* runner = nullptr, int64_t detailEvents = -1);
    ~LiveTab() override;

    void attach(const LiveEndpoint& endpoint); // throws std::runtime_error
    void showRecovered(const QString& recoveryFile); // throws std::runtime_error

    LiveSession* session() const { return m_session; }
    // The tab of the recording: null until the first events are analysed.
    SnapshotTab* snapshotTab() const { return m_tab; }
    CategoryTimelineView* timeline() const; // the snapshot tab's; null before it exists
    MemoryGapBar* gapBar() const { return m_gap; }
    LiveOverview* overview() const { return m_overview; }
    QString title() const;
    QString statusText() const;
    bool following() const;
    void setFollowing(bool follow);
    void setPaused(bool paused);
    // Without it, closing a tab with an unsaved recording asks first.
    void setAskBeforeClosing(bool ask) { m_ask = ask; }
    bool saveTo(const QString& path, QString* error);
    // Asks to save an unsaved recording (unless told not to); false: the user cancelled.
    // On true the connection is closed and the recovery file discarded.
    bool confirmClose();

signals:
    void titleChanged(const QString& title);
    // A view update shown (tests and MEMSCOPE_LIVE_STATS wait on it).
    void documentShown();

protected:
    void closeEvent(QCloseEvent* event) override;

private:
    void onView();
    void onDocument();
    void onStatus();
    void saveRecording();
    void writeStats(qint64 arrivalMs);

    LiveSession* m_session;
    SnapshotTab* m_tab = nullptr;
    QStackedWidget* m_stack;
    QLabel* m_waiting;
    MemoryGapBar* m_gap;
    LiveOverview* m_overview;
    QLabel* m_title;
    QLabel* m_status;
    QLabel* m_numbers;
    QToolButton* m_pause;
    QToolButton* m_follow;
    QToolButton* m_detach;
    QToolButton* m_save;
    bool m_ask = true;
    bool m_closed = false;
    qint64 m_attachedMs = 0;
    qint64 m_rateT0 = 0;
    uint64_t m_rateEvents = 0;
    double m_rate = 0;
    QString m_statsPath; // MEMSCOPE_LIVE_STATS
};

// Where attaching puts a live tab or a live job's view: the main window registers itself;
// with no host, the widget shows as a window of its own.
void setLiveTabHost(std::function<void(QWidget* tab, const QString& title)> host);
void showLiveTab(QWidget* tab, const QString& title);

} // namespace memscope
