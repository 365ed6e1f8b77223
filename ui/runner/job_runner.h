#pragma once

#include <QObject>
#include <QPointer>
#include <QString>
#include <QThreadPool>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <unordered_map>

namespace memscope {

class JobRunner;

/*
 * The one way the window runs long work: every background job (opening a file, a job of
 * ranks, a comparison, a live update, a what-if) is a function run on the runner's thread
 * pool, and this is the only class in ui/ that starts threads.
 *
 * A job reaches the GUI thread only through its JobContext: progress(fraction, stage) is
 * forwarded at most once per percent, and post(f) runs f on the GUI thread unless the job
 * was cancelled or its receiver destroyed meanwhile. When the function returns, throws or is
 * cancelled, exactly one of the callbacks finished / failed / cancelled runs on the GUI
 * thread. An exception becomes the one-line message of failed; a job without a failed
 * callback has it shown through the runner's failed() signal (the window's banner), so no
 * error is swallowed. Destroying the runner cancels its jobs and waits for them.
 */
class JobContext {
public:
    bool cancelled() const;
    // The fraction of the job done in [0, 1] and the stage running; throws nothing.
    void progress(double fraction, const QString& stage);
    // Runs f on the GUI thread, in order with the other posts and before the job's end.
    void post(std::function<void()> f);

private:
    friend class JobRunner;
    struct State;
    JobContext(JobRunner* runner, std::shared_ptr<State> state) : m_runner(runner), m_state(std::move(state)) { }
    JobRunner* m_runner;
    std::shared_ptr<State> m_state;
};

struct JobCallbacks {
    // Results go nowhere once the receiver is destroyed (its tab closed); null: the runner.
    QObject* receiver = nullptr;
    std::function<void(double fraction, const QString& stage)> progress;
    std::function<void()> finished;
    std::function<void(const QString& message)> failed; // unset: the runner's failed() signal
    std::function<void()> cancelled;
};

class JobRunner : public QObject {
    Q_OBJECT
public:
    using JobId = uint64_t;

    // threads = 0: the cores available.
    explicit JobRunner(QObject* parent = nullptr, int threads = 0);
    ~JobRunner() override;

    // Starts work(context) on a pool thread; title names the job in progress and errors.
    JobId start(const QString& title, std::function<void(JobContext&)> work, JobCallbacks callbacks = {});
    void cancel(JobId id);
    void cancelAll();
    bool isRunning(JobId id) const { return m_jobs.count(id) != 0; }
    int runningCount() const { return static_cast<int>(m_jobs.size()); }
    // Waits for every job's function to return (their GUI callbacks stay queued).
    void waitForDone();

signals:
    void started(quint64 id, const QString& title);
    void progressChanged(quint64 id, const QString& title, double fraction, const QString& stage);
    void failed(const QString& title, const QString& message); // a job with no failed callback
    void ended(quint64 id); // after its finished / failed / cancelled callback
    void idle();

private:
    friend class JobContext;
    void end(JobId id, const QString& error, bool cancelled);

    QThreadPool m_pool;
    JobId m_next = 1;
    std::unordered_map<JobId, std::shared_ptr<JobContext::State>> m_jobs;
};

// The one-line message of the exception being handled: LoadError's own text, a note for
// std::bad_alloc, else "title: what()".
QString currentExceptionMessage(const QString& title);

} // namespace memscope
