#pragma once

#include <QWidget>

#include <memory>

class QComboBox;
class QLabel;
class QToolButton;

namespace memscope {

class CategoryTimelineView;
class LiveSession;
class MemoryGapBar;
struct LiveEndpoint;
struct Snapshot;

/*
 * A window showing one live recording: the category timeline growing as events arrive,
 * the agent, state, event count, rate, dropped events and peak above it, the NVML gap
 * bar beside it, and Pause / Follow / Detach / Save recording. When the process exits
 * or the connection breaks, everything received stays and can be saved.
 */
class LiveWindow : public QWidget {
    Q_OBJECT
public:
    explicit LiveWindow(QWidget* parent = nullptr);
    ~LiveWindow() override;

    void attach(const LiveEndpoint& endpoint); // throws std::runtime_error
    void showRecovered(const QString& recoveryFile); // throws std::runtime_error

    LiveSession* session() const { return m_session; }
    CategoryTimelineView* timeline() const { return m_timeline; }
    MemoryGapBar* gapBar() const { return m_gap; }
    QString statusText() const;
    bool following() const;
    void setFollowing(bool follow);
    void setPaused(bool paused);
    // Without it, closing a window with an unsaved recording asks first.
    void setAskBeforeClosing(bool ask) { m_ask = ask; }
    bool saveTo(const QString& path, QString* error);

protected:
    void closeEvent(QCloseEvent* event) override;

private:
    void onDocument();
    void onStatus();
    void saveRecording();
    size_t deviceIndex() const;

    LiveSession* m_session;
    CategoryTimelineView* m_timeline;
    MemoryGapBar* m_gap;
    QLabel* m_title;
    QLabel* m_status;
    QLabel* m_numbers;
    QComboBox* m_device;
    QToolButton* m_pause;
    QToolButton* m_follow;
    QToolButton* m_detach;
    QToolButton* m_save;
    bool m_ask = true;
    qint64 m_rateT0 = 0;
    uint64_t m_rateEvents = 0;
    double m_rate = 0;
};

} // namespace memscope
