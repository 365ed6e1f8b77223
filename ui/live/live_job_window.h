#pragma once

#include "job/rank_set.h"
#include "live/job_live_session.h"

#include <QPointer>
#include <QTimer>
#include <QWidget>

#include <memory>
#include <vector>

class QLabel;
class QToolButton;

namespace memscope {

class JobRunner;
class JobTab;

/*
 * Every rank of a torchrun job attached at once (issue 17): the job's rank-set view (JobTab:
 * the rank table and each rank's timeline) fed by a JobLiveSession instead of files.
 *
 *   timer (250 ms) ── session.poll(): new ranks attached, states updated
 *        └─ ranks whose recording grew ──> a JobRunner job: replay, summarizeRank ──> RankSet ──> JobTab
 *
 * The State column says which rank streams, lags, died or ended; a dead rank keeps what it
 * sent and the others go on. Double-clicking a rank opens it in a live tab of its own (a
 * second client of that rank's agent, which replays the whole stream to it). "Save all…" writes
 * each rank's recording as rank<R>.pickle into a folder.
 */
class LiveJobWindow : public QWidget {
    Q_OBJECT
public:
    // `directory`: where the agents are (empty: agentDirectory()); `lagMs`: quiet that long
    // while others stream, a rank is shown lagging.
    // `runner`: the window's (null: one of its own).
    explicit LiveJobWindow(const QString& job, const QString& directory = {}, int64_t lagMs = 5000, QWidget* parent = nullptr,
                           JobRunner* runner = nullptr);
    ~LiveJobWindow() override;

    JobLiveSession& session() { return *m_session; }
    JobTab* jobTab() const { return m_tab; }
    const RankSet& rankSet() const { return *m_set; }
    QString statusText() const;
    // Summaries delivered to the view so far (tests wait on it).
    int updates() const { return m_updates; }
    // Writes rank<R>.pickle per rank into `folder`; false with `error` set on the first failure.
    bool saveAll(const QString& folder, QString* error);

signals:
    void updated();

private:
    void tick();
    void startSummaries();
    void publish();

    std::unique_ptr<JobLiveSession> m_session;
    JobTab* m_tab;
    QLabel* m_status;
    QToolButton* m_detach;
    QToolButton* m_save;
    QTimer m_timer;
    QPointer<JobRunner> m_runner; // the window's may go first
    uint64_t m_summarizing = 0; // the runner's job, 0: none
    std::vector<uint64_t> m_summarizedRevision; // per session index
    std::vector<RankEntry> m_entries; // per session index: the latest summary
    std::shared_ptr<const RankSet> m_set;
    int m_updates = 0;
};

// Opens a LiveJobWindow on job `job` (showLiveTab: a tab of the main window); shows errors
// in a message box. runner: the window's.
LiveJobWindow* attachLiveJob(QWidget* parent, const QString& job, JobRunner* runner = nullptr);

} // namespace memscope
