#pragma once

#include "live/agent_directory.h"

#include <QDialog>

class QLabel;
class QLineEdit;
class QListWidget;
class QMainWindow;
class QPushButton;
class QTableWidget;

namespace memscope {

class LiveWindow;

/*
 * File > Attach: the processes of this user that run a memscope agent (pid, command
 * line, GPU, torch version, mode); through NVML, the GPU processes without one, with
 * the line that starts them under the agent (and, where the process runs Python 3.14 or
 * newer, "Inject agent" through sys.remote_exec); a socket path or loopback TCP address
 * typed by hand; and recordings left in the recovery folder by a crash.
 */
class AttachDialog : public QDialog {
    Q_OBJECT
public:
    explicit AttachDialog(QWidget* parent = nullptr);

    enum class Choice { None, Agent, Recovered, Job };
    Choice choice() const { return m_choice; }
    LiveEndpoint endpoint() const { return m_endpoint; }
    QString recoveredFile() const { return m_recovered; }
    QString job() const { return m_job; } // Choice::Job: every rank of this torchrun job

    void refresh();
    int agentRows() const;
    int gpuProcessRows() const;
    QString nvmlText() const;

private:
    void attachSelected();
    void attachTyped();
    void attachJob();
    void openRecovered();
    void injectSelected();

    QTableWidget* m_agents;
    QTableWidget* m_gpu;
    QLabel* m_nvml;
    QLineEdit* m_address;
    QLineEdit* m_token;
    QListWidget* m_recoveredList;
    QPushButton* m_inject;
    std::vector<AgentInfo> m_agentInfo;
    Choice m_choice = Choice::None;
    LiveEndpoint m_endpoint;
    QString m_recovered;
    QString m_job;
    QPushButton* m_attachJob = nullptr;
};

// The agent package directory shipped with memscope (for the "start it under the agent" line).
QString agentPackageDirectory();
// Where live sessions keep their recovery files.
QString liveRecoveryDirectory();

// Shows the dialog and opens a LiveWindow for the choice; returns it (nullptr if cancelled,
// or when the choice was a whole job: a LiveJobWindow opens then).
LiveWindow* showAttachDialog(QWidget* parent);
// Opens a LiveWindow attached to `target` (a pid, a socket path, or HOST:PORT with its
// `token`); shows errors in a message box.
LiveWindow* attachLive(QWidget* parent, const QString& target, const QString& token = {});
// Adds "Attach to Running Process…" to the window's File menu (before its last group).
void installLiveMenu(QMainWindow* window);

} // namespace memscope
