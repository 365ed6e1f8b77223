#include "ui/live/attach_dialog.h"

#include "live/agent_locator.h"
#include "live/nvml.h"
#include "ui/live/live_job_window.h"
#include "ui/live/live_tab.h"
#include "ui/style/text_format.h"

#include <QAction>
#include <QCoreApplication>
#include <QDialogButtonBox>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMainWindow>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QProcess>
#include <QRegularExpression>
#include <QPushButton>
#include <QStandardPaths>
#include <QTableWidget>
#include <QTemporaryFile>
#include <QTimer>
#include <QVBoxLayout>

#include <set>

namespace memscope {

namespace {

QString commandLineOf(unsigned pid)
{
    QFile f(QStringLiteral("/proc/%1/cmdline").arg(pid));
    if (!f.open(QIODevice::ReadOnly))
        return {};
    QByteArray raw = f.readAll();
    if (raw.endsWith('\0'))
        raw.chop(1);
    return QString::fromLocal8Bit(raw.replace('\0', ' '));
}

QString shellQuote(const QString& s)
{
    if (!s.isEmpty() && s.indexOf(QRegularExpression(QStringLiteral("[^A-Za-z0-9_./=:,+-]"))) < 0)
        return s;
    QString q = s;
    q.replace(QLatin1Char('\''), QStringLiteral("'\\''"));
    return QLatin1Char('\'') + q + QLatin1Char('\'');
}

QTableWidgetItem* item(const QString& text)
{
    auto* i = new QTableWidgetItem(text);
    i->setFlags(i->flags() & ~Qt::ItemIsEditable);
    return i;
}

// The interpreter to ask about sys.remote_exec and run it with: MEMSCOPE_INJECT_PYTHON, else the
// process's own executable when it is a Python; else empty.
QString candidatePython(unsigned pid)
{
    const QString forced = qEnvironmentVariable("MEMSCOPE_INJECT_PYTHON");
    if (!forced.isEmpty())
        return forced;
    const QString exe = QFileInfo(QStringLiteral("/proc/%1/exe").arg(pid)).canonicalFilePath();
    if (exe.isEmpty() || !QFileInfo(exe).fileName().startsWith(QLatin1String("python")))
        return {};
    return exe;
}

constexpr int kCheckTimeoutMs = 5000;
constexpr int kInjectTimeoutMs = 10000;
constexpr int kPollMs = 100;
constexpr int kPolls = 100; // 10 s for the target to reach a safe point and start the agent

// Stops a process with no signal of it reaching anyone. A SIGKILLed child ends at once: the wait
// only reaps it (milliseconds), so no zombie and no "destroyed while running".
void discard(QProcess*& p)
{
    if (!p)
        return;
    p->disconnect();
    if (p->state() != QProcess::NotRunning) {
        p->kill();
        p->waitForFinished(1000);
    }
    p->deleteLater();
    p = nullptr;
}

} // namespace

QString agentPackageDirectoryText()
{
    try {
        return QString::fromStdString(agentPackageDirectory());
    } catch (const std::runtime_error&) {
        return QStringLiteral("/path/to/memscope/agent"); // a hint only; attaching needs no package here
    }
}

QString windowRecoveryDirectory()
{
    return QString::fromStdString(
        memscope::liveRecoveryDirectory(QStandardPaths::writableLocation(QStandardPaths::CacheLocation).toStdString()));
}

AttachDialog::AttachDialog(QWidget* parent) : QDialog(parent)
{
    setWindowTitle(tr("Attach to a running process"));
    resize(980, 620);

    m_agents = new QTableWidget(0, 5, this);
    m_agents->setHorizontalHeaderLabels({tr("PID"), tr("Command line"), tr("GPU"), tr("torch"), tr("Agent")});
    m_agents->horizontalHeader()->setSectionResizeMode(1, QHeaderView::Stretch);
    m_agents->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_agents->setSelectionMode(QAbstractItemView::SingleSelection);
    m_agents->verticalHeader()->hide();
    connect(m_agents, &QTableWidget::cellDoubleClicked, this, &AttachDialog::attachSelected);

    m_gpu = new QTableWidget(0, 4, this);
    m_gpu->setHorizontalHeaderLabels({tr("PID"), tr("GPU"), tr("Memory"), tr("Start it under the agent")});
    m_gpu->horizontalHeader()->setSectionResizeMode(3, QHeaderView::Stretch);
    m_gpu->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_gpu->setSelectionMode(QAbstractItemView::SingleSelection);
    m_gpu->verticalHeader()->hide();
    m_nvml = new QLabel(this);
    m_nvml->setWordWrap(true);
    m_inject = new QPushButton(tr("Inject agent (Python 3.14+)"), this);
    m_inject->setEnabled(false);
    m_inject->setToolTip(tr("Starts the agent inside the selected process with sys.remote_exec"));
    m_cancelInject = new QPushButton(tr("Cancel injection"), this);
    m_cancelInject->setVisible(false);
    m_injectStatus = new QLabel(this);
    m_injectStatus->setWordWrap(true);
    m_poll = new QTimer(this);
    m_poll->setInterval(kPollMs);
    connect(m_poll, &QTimer::timeout, this, &AttachDialog::pollForAgent);
    connect(m_gpu, &QTableWidget::itemSelectionChanged, this, [this] {
        const int row = m_gpu->currentRow();
        if (row >= 0 && pythonCheck(m_gpu->item(row, 0)->text().toUInt()) == PythonCheck::Unknown)
            checkPython(m_gpu->item(row, 0)->text().toUInt());
        updateInjectButton();
    });
    connect(m_inject, &QPushButton::clicked, this, &AttachDialog::injectSelected);
    connect(m_cancelInject, &QPushButton::clicked, this, &AttachDialog::cancelInjection);

    m_address = new QLineEdit(this);
    m_address->setPlaceholderText(tr("socket path, or HOST:PORT (an ssh -L forward of a GPU server's agent)"));
    m_token = new QLineEdit(this);
    m_token->setPlaceholderText(tr("token (TCP only)"));
    auto* typed = new QPushButton(tr("Connect"), this);
    connect(typed, &QPushButton::clicked, this, &AttachDialog::attachTyped);

    m_recoveredList = new QListWidget(this);
    m_recoveredList->setMaximumHeight(90);
    auto* openRecovered = new QPushButton(tr("Open"), this);
    connect(openRecovered, &QPushButton::clicked, this, &AttachDialog::openRecovered);

    auto* agentsBox = new QGroupBox(tr("Processes running the memscope agent"), this);
    auto* a = new QVBoxLayout(agentsBox);
    a->addWidget(m_agents);
    auto* gpuBox = new QGroupBox(tr("GPU processes without an agent (NVML)"), this);
    auto* g = new QVBoxLayout(gpuBox);
    g->addWidget(m_nvml);
    g->addWidget(m_gpu);
    auto* injectRow = new QHBoxLayout;
    injectRow->addWidget(m_inject);
    injectRow->addWidget(m_cancelInject);
    injectRow->addWidget(m_injectStatus, 1);
    g->addLayout(injectRow);
    auto* typedBox = new QGroupBox(tr("Connect to an address"), this);
    auto* t = new QHBoxLayout(typedBox);
    t->addWidget(m_address, 3);
    t->addWidget(m_token, 1);
    t->addWidget(typed);
    auto* recoveredBox = new QGroupBox(tr("Recovered recordings (left by a crash)"), this);
    auto* r = new QHBoxLayout(recoveredBox);
    r->addWidget(m_recoveredList, 1);
    r->addWidget(openRecovered, 0, Qt::AlignTop);

    auto* buttons = new QDialogButtonBox(this);
    auto* attach = buttons->addButton(tr("Attach"), QDialogButtonBox::AcceptRole);
    m_attachJob = buttons->addButton(tr("Attach All Ranks of Its Job"), QDialogButtonBox::ActionRole);
    m_attachJob->setToolTip(tr("The selected agent is a rank of a torchrun job: attach to every rank of it at once"));
    m_attachJob->setEnabled(false);
    connect(m_attachJob, &QPushButton::clicked, this, &AttachDialog::attachJob);
    connect(m_agents, &QTableWidget::itemSelectionChanged, this, [this] {
        const int row = m_agents->currentRow();
        const bool job = row >= 0 && static_cast<size_t>(row) < m_agentInfo.size() &&
                         !m_agentInfo[static_cast<size_t>(row)].job.empty();
        m_attachJob->setEnabled(job);
        if (job)
            m_attachJob->setText(
                tr("Attach All Ranks of Job %1").arg(QString::fromStdString(m_agentInfo[static_cast<size_t>(row)].job)));
    });
    auto* refreshButton = buttons->addButton(tr("Refresh"), QDialogButtonBox::ActionRole);
    buttons->addButton(QDialogButtonBox::Close);
    connect(attach, &QPushButton::clicked, this, &AttachDialog::attachSelected);
    connect(refreshButton, &QPushButton::clicked, this, &AttachDialog::refresh);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);

    auto* layout = new QVBoxLayout(this);
    layout->addWidget(agentsBox, 2);
    layout->addWidget(gpuBox, 2);
    layout->addWidget(typedBox);
    layout->addWidget(recoveredBox);
    layout->addWidget(buttons);
    refresh();
}

AttachDialog::~AttachDialog()
{
    discard(m_check);
    discard(m_injector);
    m_script.reset(); // removes the file
}

int AttachDialog::agentRows() const { return m_agents->rowCount(); }

int AttachDialog::gpuProcessRows() const { return m_gpu->rowCount(); }

QString AttachDialog::nvmlText() const { return m_nvml->text(); }

void AttachDialog::refresh()
{
    m_agents->setRowCount(0);
    try {
        m_agentInfo = listAgents();
    } catch (const std::exception& e) {
        m_agentInfo.clear();
        m_nvml->setText(QString::fromUtf8(e.what()));
    }
    std::set<unsigned> withAgent;
    for (const AgentInfo& info : m_agentInfo) {
        const int row = m_agents->rowCount();
        m_agents->insertRow(row);
        withAgent.insert(static_cast<unsigned>(info.pid));
        QStringList gpus;
        for (const std::string& d : info.devices)
            gpus << QString::fromStdString(d);
        m_agents->setItem(row, 0, item(QString::number(info.pid)));
        m_agents->setItem(row, 1, item(QString::fromStdString(info.commandLine)));
        m_agents->setItem(row, 2, item(gpus.join(QStringLiteral(", "))));
        m_agents->setItem(row, 3, item(QString::fromStdString(info.torchVersion)));
        m_agents->setItem(row, 4,
                          item(info.job.empty() ? QString::fromStdString(info.mode)
                                                : tr("%1 · rank %2/%3 of job %4")
                                                      .arg(QString::fromStdString(info.mode))
                                                      .arg(info.rank)
                                                      .arg(info.worldSize > 0 ? QString::number(info.worldSize) : tr("?"))
                                                      .arg(QString::fromStdString(info.job))));
    }
    if (m_agents->rowCount())
        m_agents->selectRow(0);

    m_gpu->setRowCount(0);
    Nvml& nvml = Nvml::instance();
    if (!nvml.available()) {
        m_nvml->setText(tr("No list: %1. Start a program under the agent with\n  MEMSCOPE_AGENT=1 PYTHONPATH=%2 python3 train.py")
                            .arg(QString::fromStdString(nvml.error()), shellQuote(agentPackageDirectoryText())));
    } else {
        m_nvml->setText(tr("Processes the driver reports on the GPUs, with the line that starts each under the agent."));
        for (const GpuProcess& p : nvml.processes()) {
            if (withAgent.count(p.pid))
                continue;
            const QString cmd = commandLineOf(p.pid);
            const int row = m_gpu->rowCount();
            m_gpu->insertRow(row);
            m_gpu->setItem(row, 0, item(QString::number(p.pid)));
            m_gpu->setItem(row, 1, item(QStringLiteral("%1: %2").arg(p.gpu).arg(QString::fromStdString(p.gpuName))));
            m_gpu->setItem(row, 2, item(p.usedKnown ? bytesText(static_cast<int64_t>(p.usedBytes)) : tr("?")));
            m_gpu->setItem(row, 3,
                           item(cmd.isEmpty() ? tr("(another user's process)")
                                              : QStringLiteral("MEMSCOPE_AGENT=1 PYTHONPATH=%1 %2")
                                                    .arg(shellQuote(agentPackageDirectoryText()), cmd)));
        }
    }

    m_recoveredList->clear();
    const QDir dir(windowRecoveryDirectory());
    for (const QFileInfo& f : dir.entryInfoList({QStringLiteral("*.mscp")}, QDir::Files, QDir::Time))
        m_recoveredList->addItem(f.absoluteFilePath());
}

void AttachDialog::attachSelected()
{
    const int row = m_agents->currentRow();
    if (row < 0 || static_cast<size_t>(row) >= m_agentInfo.size()) {
        if (!m_address->text().trimmed().isEmpty())
            attachTyped();
        return;
    }
    m_endpoint = LiveEndpoint{};
    m_endpoint.unixPath = m_agentInfo[static_cast<size_t>(row)].socketPath;
    m_choice = Choice::Agent;
    accept();
}

void AttachDialog::attachJob()
{
    const int row = m_agents->currentRow();
    if (row < 0 || static_cast<size_t>(row) >= m_agentInfo.size() || m_agentInfo[static_cast<size_t>(row)].job.empty())
        return;
    m_job = QString::fromStdString(m_agentInfo[static_cast<size_t>(row)].job);
    m_choice = Choice::Job;
    accept();
}

void AttachDialog::attachTyped()
{
    const QString text = m_address->text().trimmed();
    if (text.isEmpty())
        return;
    try {
        const std::optional<LiveEndpoint> tcp = parseTcpTarget(text.toStdString(), m_token->text().trimmed().toStdString());
        m_endpoint = tcp ? *tcp : resolveAttachTarget(text.toStdString());
    } catch (const std::exception& e) {
        QMessageBox::warning(this, windowTitle(), QString::fromUtf8(e.what()));
        return;
    }
    m_choice = Choice::Agent;
    accept();
}

void AttachDialog::openRecovered()
{
    if (!m_recoveredList->currentItem())
        return;
    m_recovered = m_recoveredList->currentItem()->text();
    m_choice = Choice::Recovered;
    accept();
}

AttachDialog::PythonCheck AttachDialog::pythonCheck(unsigned pid) const { return m_python.value(pid).check; }

void AttachDialog::checkPython(unsigned pid)
{
    if (m_check) { // a newer selection: the older check is asked again when selected again
        m_python.remove(m_checkPid);
        discard(m_check);
    }
    const QString python = candidatePython(pid);
    if (python.isEmpty()) {
        m_python[pid] = {PythonCheck::No, {}};
        updateInjectButton();
        return;
    }
    m_python[pid] = {PythonCheck::Checking, {}};
    m_checkPid = pid;
    m_check = new QProcess(this);
    QProcess* p = m_check;
    auto done = [this, p, pid, python](bool ok) {
        if (m_check != p)
            return; // already answered (its timeout and its end both call this)
        const bool yes = ok && p->readAllStandardOutput().trimmed() == "True";
        m_python[pid] = {yes ? PythonCheck::RemoteExec : PythonCheck::No, yes ? python : QString()};
        discard(m_check);
        updateInjectButton();
    };
    connect(p, &QProcess::finished, this,
            [done](int code, QProcess::ExitStatus status) { done(code == 0 && status == QProcess::NormalExit); });
    connect(p, &QProcess::errorOccurred, this, [done](QProcess::ProcessError e) {
        if (e == QProcess::FailedToStart)
            done(false);
    });
    QTimer::singleShot(kCheckTimeoutMs, p, [done] { done(false); });
    p->start(python, {QStringLiteral("-c"), QStringLiteral("import sys; print(hasattr(sys, 'remote_exec'))")});
    updateInjectButton();
}

void AttachDialog::updateInjectButton()
{
    const bool busy = m_injectState == InjectState::Injecting || m_injectState == InjectState::WaitingForAgent;
    m_cancelInject->setVisible(busy);
    const int row = m_gpu->currentRow();
    const unsigned pid = row >= 0 ? m_gpu->item(row, 0)->text().toUInt() : 0;
    const PythonCheck check = row >= 0 ? pythonCheck(pid) : PythonCheck::Unknown;
    m_inject->setEnabled(!busy && check == PythonCheck::RemoteExec);
    if (busy || m_injectState == InjectState::Failed || m_injectState == InjectState::TimedOut)
        return; // the injection's own message stays
    if (check == PythonCheck::Checking)
        m_injectStatus->setText(tr("Checking whether process %1 runs Python 3.14 or newer…").arg(pid));
    else if (check == PythonCheck::No)
        m_injectStatus->setText(
            tr("Process %1 is not a Python with sys.remote_exec (3.14+): start it under the agent.").arg(pid));
    else
        m_injectStatus->clear();
}

QString AttachDialog::injectStatus() const { return m_injectStatus->text(); }

QString AttachDialog::injectionScript() const { return m_script ? m_script->fileName() : QString(); }

void AttachDialog::injectSelected()
{
    const int row = m_gpu->currentRow();
    if (row >= 0)
        injectInto(m_gpu->item(row, 0)->text().toUInt());
}

void AttachDialog::injectInto(unsigned pid)
{
    if (m_injectState == InjectState::Injecting || m_injectState == InjectState::WaitingForAgent)
        return;
    QString python = m_python.value(pid).python;
    if (python.isEmpty())
        python = candidatePython(pid);
    if (python.isEmpty()) {
        finishInjection(InjectState::Failed, tr("Process %1 is not a Python with sys.remote_exec (3.14+).").arg(pid));
        return;
    }
    m_script = std::make_unique<QTemporaryFile>(QDir::tempPath() + QStringLiteral("/memscope-inject-XXXXXX.py"));
    if (!m_script->open()) {
        finishInjection(InjectState::Failed, tr("Could not write the agent's start script in %1.").arg(QDir::tempPath()));
        return;
    }
    m_script->write(QStringLiteral("import sys\nsys.path.insert(0, %1)\nimport memscope_agent\nmemscope_agent.start()\n")
                        .arg(QStringLiteral("r'%1'").arg(agentPackageDirectoryText()))
                        .toUtf8());
    m_script->flush();
    m_injectPid = pid;
    m_injectState = InjectState::Injecting;
    m_injectStatus->setText(tr("Injecting the agent into process %1…").arg(pid));
    m_injector = new QProcess(this);
    QProcess* p = m_injector;
    connect(p, &QProcess::finished, this,
            [this](int code, QProcess::ExitStatus status) { onInjected(status == QProcess::NormalExit ? code : -1); });
    connect(p, &QProcess::errorOccurred, this, [this](QProcess::ProcessError e) {
        if (e == QProcess::FailedToStart)
            onInjected(-1);
    });
    QTimer::singleShot(kInjectTimeoutMs, p, [this, p] {
        if (m_injectState == InjectState::Injecting && m_injector == p)
            finishInjection(InjectState::TimedOut, tr("sys.remote_exec did not return in %1 s.").arg(kInjectTimeoutMs / 1000));
    });
    p->start(python,
             {QStringLiteral("-c"), QStringLiteral("import sys; sys.remote_exec(%1, r'%2')").arg(pid).arg(m_script->fileName())});
    updateInjectButton();
}

void AttachDialog::onInjected(int exitCode)
{
    if (m_injectState != InjectState::Injecting || !m_injector)
        return;
    const QString error = QString::fromLocal8Bit(m_injector->readAllStandardError()).trimmed();
    discard(m_injector);
    if (exitCode != 0) {
        finishInjection(InjectState::Failed,
                        tr("sys.remote_exec failed: %1").arg(error.isEmpty() ? tr("exit code %1").arg(exitCode) : error));
        return;
    }
    m_injectState = InjectState::WaitingForAgent;
    m_injectStatus->setText(tr("Waiting for the agent to start in process %1…").arg(m_injectPid));
    m_pollsLeft = kPolls;
    m_poll->start();
    updateInjectButton();
}

void AttachDialog::pollForAgent()
{
    refresh();
    for (int r = 0; r < m_agents->rowCount(); ++r)
        if (m_agents->item(r, 0)->text().toUInt() == m_injectPid) {
            finishInjection(InjectState::Idle, QString()); // the target has run the script: it can go
            m_agents->selectRow(r);
            attachSelected();
            return;
        }
    if (--m_pollsLeft <= 0)
        finishInjection(InjectState::TimedOut, tr("The agent did not start in process %1 yet.").arg(m_injectPid));
}

void AttachDialog::cancelInjection()
{
    if (m_injectState == InjectState::Injecting || m_injectState == InjectState::WaitingForAgent)
        finishInjection(InjectState::Idle, tr("Injection cancelled."));
}

void AttachDialog::finishInjection(InjectState state, const QString& status)
{
    m_poll->stop();
    discard(m_injector);
    m_script.reset(); // removes the file
    m_injectState = state;
    m_injectStatus->setText(status);
    updateInjectButton();
}

LiveTab* showAttachDialog(QWidget* parent, JobRunner* runner)
{
    AttachDialog dialog(parent);
    if (dialog.exec() != QDialog::Accepted)
        return nullptr;
    if (dialog.choice() == AttachDialog::Choice::Job) {
        attachLiveJob(parent, dialog.job(), runner);
        return nullptr;
    }
    auto* tab = new LiveTab(nullptr, runner);
    try {
        if (dialog.choice() == AttachDialog::Choice::Recovered)
            tab->showRecovered(dialog.recoveredFile());
        else
            tab->attach(dialog.endpoint());
    } catch (const std::exception& e) {
        QMessageBox::warning(parent, dialog.windowTitle(), QString::fromUtf8(e.what()));
        delete tab;
        return nullptr;
    }
    showLiveTab(tab, tab->title());
    return tab;
}

LiveTab* attachLive(QWidget* parent, const QString& target, const QString& token, JobRunner* runner)
{
    auto* tab = new LiveTab(nullptr, runner);
    try {
        const std::optional<LiveEndpoint> tcp = parseTcpTarget(target.toStdString(), token.toStdString());
        tab->attach(tcp ? *tcp : resolveAttachTarget(target.toStdString()));
    } catch (const std::exception& e) {
        QMessageBox::warning(parent, QObject::tr("Attach"), QString::fromUtf8(e.what()));
        delete tab;
        return nullptr;
    }
    showLiveTab(tab, tab->title());
    return tab;
}

QAction* addAttachAction(QWidget* window, QMenu* menu, QAction* before, JobRunner* runner)
{
    auto* attach = new QAction(QObject::tr("&Attach to Running Process…"), window);
    attach->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_A));
    attach->setObjectName(QStringLiteral("actionAttach"));
    QObject::connect(attach, &QAction::triggered, window, [window, runner] { showAttachDialog(window, runner); });
    menu->insertAction(before, attach);
    return attach;
}

} // namespace memscope
