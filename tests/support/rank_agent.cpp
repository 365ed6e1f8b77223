#include "rank_agent.h"

namespace memscope::test {

QProcessEnvironment agentEnvironment(const QString& agentDir, const QString& tmpDir)
{
    QProcessEnvironment e = QProcessEnvironment::systemEnvironment();
    for (const char* k : {"RANK", "LOCAL_RANK", "WORLD_SIZE", "TORCHELASTIC_RUN_ID", "MASTER_ADDR", "MASTER_PORT",
                          "MEMSCOPE_AGENT", "MEMSCOPE_AGENT_JOB", "MEMSCOPE_AGENT_SOCKET"})
        e.remove(QString::fromLatin1(k));
    e.insert(QStringLiteral("PYTHONPATH"), agentDir);
    e.insert(QStringLiteral("MEMSCOPE_AGENT_QUIET"), QStringLiteral("1"));
    e.insert(QStringLiteral("TMPDIR"), tmpDir);
    e.insert(QStringLiteral("XDG_RUNTIME_DIR"), QString());
    return e;
}

std::unique_ptr<QProcess> startReplayRank(const QString& python, QProcessEnvironment env, const QString& file, const QString& job,
                                          int rank, const QString& speed)
{
    env.insert(QStringLiteral("RANK"), QString::number(rank));
    env.insert(QStringLiteral("LOCAL_RANK"), QString::number(rank));
    env.insert(QStringLiteral("WORLD_SIZE"), QStringLiteral("2"));
    env.insert(QStringLiteral("TORCHELASTIC_RUN_ID"), job);
    auto p = std::make_unique<QProcess>();
    p->setProcessEnvironment(env);
    p->setProcessChannelMode(QProcess::ForwardedErrorChannel);
    p->start(python,
             {QStringLiteral("-m"), QStringLiteral("memscope_agent"), QStringLiteral("--replay"), file, QStringLiteral("--speed"),
              speed, QStringLiteral("--max-gap"), QStringLiteral("0.05"), QStringLiteral("--linger"), QStringLiteral("5")});
    if (!p->waitForStarted())
        return nullptr;
    return p;
}

} // namespace memscope::test
