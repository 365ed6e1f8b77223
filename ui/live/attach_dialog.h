#pragma once

#include "live/agent_directory.h"

#include <QDialog>
#include <QHash>

#include <memory>

class QAction;
class QLabel;
class QMenu;
class QProcess;
class QTemporaryFile;
class QTimer;
class QLineEdit;
class QListWidget;
class QAction;
class QMainWindow;
class QMenu;
class QPushButton;
class QTableWidget;

namespace memscope {

class JobRunner;
class LiveTab;

/*
 * File > Attach: the processes of this user that run a memscope agent (pid, command
 * line, GPU, torch version, mode); through NVML, the GPU processes without one, with
 * the line that starts them under the agent (and, where the process runs Python 3.14 or
 * newer, "Inject agent" through sys.remote_exec); a socket path or loopback TCP address
 * typed by hand; and recordings left in the recovery folder by a crash.
 *
 * Nothing here waits on the GUI thread. Selecting a GPU process checks, with a QProcess,
 * whether its interpreter has sys.remote_exec (a state per process: checking, Python 3.14+,
 * not). "Inject agent" writes the agent's start script to a temporary file, runs
 * sys.remote_exec on it, then polls the agent directory every 100 ms for up to 10 s (the
 * target runs the script at its next safe point); Cancel stops either step. The script is
 * deleted in every outcome: the agent appeared, remote_exec failed, the wait ran out, Cancel,
 * or the dialog closed. MEMSCOPE_INJECT_PYTHON names another interpreter to run the check and
 * remote_exec with (the target's own by default).
 */
class AttachDialog : public QDialog {
    Q_OBJECT
public:
    explicit AttachDialog(QWidget* parent = nullptr);
    ~AttachDialog() override;

    enum class Choice { None, Agent, Recovered, Job };
    Choice choice() const { return m_choice; }
    LiveEndpoint endpoint() const { return m_endpoint; }
    QString recoveredFile() const { return m_recovered; }
    QString job() const { return m_job; } // Choice::Job: every rank of this torchrun job

    void refresh();
    int agentRows() const;
    int gpuProcessRows() const;
    QString nvmlText() const;

    // Whether a process's interpreter can take sys.remote_exec, as far as checked.
    enum class PythonCheck { Unknown, Checking, RemoteExec, No };
    PythonCheck pythonCheck(unsigned pid) const;
    void checkPython(unsigned pid); // starts the check (one at a time; a newer one replaces it)

    enum class InjectState { Idle, Injecting, WaitingForAgent, Failed, TimedOut };
    InjectState injectState() const { return m_injectState; }
    void injectInto(unsigned pid);
    void cancelInjection();
    QString injectStatus() const;
    QString injectionScript() const; // the temporary script while an injection runs, else empty

private:
    void attachSelected();
    void attachTyped();
    void attachJob();
    void openRecovered();
    void injectSelected();
    void updateInjectButton();
    void onInjected(int exitCode);
    void pollForAgent();
    void finishInjection(InjectState state, const QString& status);

    QTableWidget* m_agents;
    QTableWidget* m_gpu;
    QLabel* m_nvml;
    QLineEdit* m_address;
    QLineEdit* m_token;
    QListWidget* m_recoveredList;
    QPushButton* m_inject;
    QPushButton* m_cancelInject;
    QLabel* m_injectStatus;
    std::vector<AgentInfo> m_agentInfo;
    struct PythonState {
        PythonCheck check = PythonCheck::Unknown;
        QString python; // with RemoteExec: the interpreter to run sys.remote_exec with
    };
    QHash<unsigned, PythonState> m_python; // per GPU process
    QProcess* m_check = nullptr; // the running check, of m_checkPid
    unsigned m_checkPid = 0;
    QProcess* m_injector = nullptr; // sys.remote_exec, while it runs
    std::unique_ptr<QTemporaryFile> m_script; // the agent's start script, while an injection runs
    QTimer* m_poll;
    int m_pollsLeft = 0;
    unsigned m_injectPid = 0;
    InjectState m_injectState = InjectState::Idle;
    Choice m_choice = Choice::None;
    LiveEndpoint m_endpoint;
    QString m_recovered;
    QString m_job;
    QPushButton* m_attachJob = nullptr;
};

// core/live's agentPackageDirectory() for the "start it under the agent" hints, or a
// placeholder path when no package is found.
QString agentPackageDirectoryText();
// core/live's liveRecoveryDirectory() under this application's cache folder.
QString windowRecoveryDirectory();

// Shows the dialog and opens a LiveTab for the choice (showLiveTab: a tab of the main
// window); returns it (nullptr if cancelled, or when the choice was a whole job: a
// LiveJobWindow opens then). runner: the window's.
LiveTab* showAttachDialog(QWidget* parent, JobRunner* runner = nullptr);
// Opens a LiveTab attached to `target` (a pid, a socket path, or HOST:PORT with its
// `token`); shows errors in a message box.
LiveTab* attachLive(QWidget* parent, const QString& target, const QString& token = {}, JobRunner* runner = nullptr);
// Adds "Attach to Running Process…" (Ctrl+Shift+A, object name actionAttach) to `menu`
// before `before` (null: at the end); it opens the attach dialog over `window`.
QAction* addAttachAction(QWidget* window, QMenu* menu, QAction* before = nullptr, JobRunner* runner = nullptr);

} // namespace memscope
