#include "ui/runner/job_runner.h"

#include "common/load_error.h"

#include <QThread>

#include <cmath>
#include <exception>
#include <new>

namespace memscope {

struct JobContext::State {
    JobRunner::JobId id = 0;
    QString title;
    QPointer<QObject> receiver;
    bool hasReceiver = false;
    JobCallbacks callbacks;
    std::atomic<bool> cancel{false};
    std::atomic<int> lastPercent{-1};

    bool receiverGone() const { return hasReceiver && receiver.isNull(); }
};

bool JobContext::cancelled() const { return m_state->cancel.load(); }

void JobContext::progress(double fraction, const QString& stage)
{
    const int percent = static_cast<int>(std::lround(std::clamp(fraction, 0.0, 1.0) * 100));
    if (m_state->lastPercent.exchange(percent) == percent)
        return;
    auto state = m_state;
    JobRunner* runner = m_runner;
    QMetaObject::invokeMethod(
        runner,
        [runner, state, fraction, stage] {
        if (state->cancel.load() || state->receiverGone())
            return;
        if (state->callbacks.progress)
            state->callbacks.progress(fraction, stage);
        emit runner->progressChanged(state->id, state->title, fraction, stage);
        },
        Qt::QueuedConnection);
}

void JobContext::post(std::function<void()> f)
{
    auto state = m_state;
    QMetaObject::invokeMethod(
        m_runner,
        [state, f = std::move(f)] {
        if (!state->cancel.load() && !state->receiverGone())
            f();
        },
        Qt::QueuedConnection);
}

QString currentExceptionMessage(const QString& title)
{
    try {
        throw;
    } catch (const LoadError& e) {
        return QString::fromStdString(e.what());
    } catch (const std::bad_alloc&) {
        return title + QStringLiteral(": not enough memory");
    } catch (const std::exception& e) {
        return title + QStringLiteral(": ") + QString::fromStdString(e.what());
    } catch (...) {
        return title + QStringLiteral(": failed with an unknown error");
    }
}

JobRunner::JobRunner(QObject* parent, int threads) : QObject(parent)
{
    m_pool.setMaxThreadCount(threads > 0 ? threads : std::max(2, QThread::idealThreadCount()));
}

JobRunner::~JobRunner()
{
    for (auto& [id, state] : m_jobs)
        state->cancel.store(true);
    m_pool.waitForDone();
}

JobRunner::JobId JobRunner::start(const QString& title, std::function<void(JobContext&)> work, JobCallbacks callbacks)
{
    auto state = std::make_shared<JobContext::State>();
    state->id = m_next++;
    state->title = title;
    state->hasReceiver = callbacks.receiver != nullptr;
    state->receiver = callbacks.receiver;
    state->callbacks = std::move(callbacks);
    m_jobs.emplace(state->id, state);
    emit started(state->id, title);
    m_pool.start([this, state, work = std::move(work)] {
        JobContext context(this, state);
        QString error;
        bool cancelled = false;
        try {
            if (!state->cancel.load())
                work(context);
            cancelled = state->cancel.load();
        } catch (const LoadCancelled&) {
            cancelled = true;
        } catch (...) {
            cancelled = state->cancel.load();
            if (!cancelled)
                error = currentExceptionMessage(state->title);
        }
        const JobId id = state->id;
        QMetaObject::invokeMethod(
            this, [this, id, error, cancelled] { end(id, error, cancelled); }, Qt::QueuedConnection);
    });
    return state->id;
}

void JobRunner::end(JobId id, const QString& error, bool cancelled)
{
    auto it = m_jobs.find(id);
    if (it == m_jobs.end())
        return;
    const std::shared_ptr<JobContext::State> state = it->second;
    m_jobs.erase(it);
    cancelled = cancelled || state->cancel.load();
    if (!state->receiverGone()) {
        const JobCallbacks& cb = state->callbacks;
        if (cancelled) {
            if (cb.cancelled)
                cb.cancelled();
        } else if (!error.isEmpty()) {
            if (cb.failed)
                cb.failed(error);
            else
                emit failed(state->title, error);
        } else if (cb.finished) {
            cb.finished();
        }
    } else if (!cancelled && !error.isEmpty()) {
        emit failed(state->title, error); // its tab is gone, the window still hears of it
    }
    emit ended(id);
    if (m_jobs.empty())
        emit idle();
}

void JobRunner::cancel(JobId id)
{
    auto it = m_jobs.find(id);
    if (it != m_jobs.end())
        it->second->cancel.store(true);
}

void JobRunner::cancelAll()
{
    for (auto& [id, state] : m_jobs)
        state->cancel.store(true);
}

void JobRunner::waitForDone() { m_pool.waitForDone(); }

} // namespace memscope
