#include "ui/loader.h"

#include "ui/runner/job_runner.h"

#include <QFileInfo>

namespace memscope {

Loader::Loader(QObject* parent, JobRunner* runner) : QObject(parent), m_runner(runner ? runner : new JobRunner(this))
{
    qRegisterMetaType<std::shared_ptr<const memscope::Document>>();
}

Loader::~Loader()
{
    m_queue.clear();
    if (m_job && m_runner)
        m_runner->cancel(m_job);
}

void Loader::load(const QString& path)
{
    m_queue.push_back(path);
    if (!m_job)
        startNext();
}

void Loader::load(const QStringList& paths)
{
    for (const QString& p : paths)
        m_queue.push_back(p);
    if (!m_job)
        startNext();
}

void Loader::cancel()
{
    const QStringList dropped = m_queue;
    m_queue.clear();
    if (m_job)
        m_runner->cancel(m_job);
    for (const QString& p : dropped)
        emit loadCancelled(p);
}

void Loader::cancelCurrent()
{
    if (m_job)
        m_runner->cancel(m_job);
}

void Loader::startNext()
{
    if (m_queue.isEmpty()) {
        emit idle();
        return;
    }
    const QString path = m_queue.takeFirst();
    emit loadStarted(path);
    auto finalDoc = std::make_shared<std::shared_ptr<const Document>>();
    JobCallbacks callbacks;
    callbacks.receiver = this;
    callbacks.progress = [this, path](double fraction, const QString& stage) { emit progressChanged(path, fraction, stage); };
    auto next = [this] {
        m_job = 0;
        startNext();
    };
    callbacks.finished = [this, path, finalDoc, next] {
        emit snapshotLoaded(path, *finalDoc);
        next();
    };
    callbacks.failed = [this, path, next](const QString& message) {
        emit loadFailed(path, message);
        next();
    };
    callbacks.cancelled = [this, path, next] {
        emit loadCancelled(path);
        next();
    };
    const std::string file = QFileInfo(path).filePath().toStdString();
    m_job = m_runner->start(
        path,
        [this, path, file, finalDoc](JobContext& job) {
        AnalysisCallbacks callbacks;
        callbacks.progress = [&](AnalysisStage stage, double f) {
            job.progress(analysisFraction(stage, f), QString::fromUtf8(analysisStageName(stage)));
            return !job.cancelled();
        };
        std::shared_ptr<const Document> doc;
        callbacks.stageReady = [&](const std::shared_ptr<const Analysis>& analysis) {
            if (analysis->stage == AnalysisStage::Loaded || job.cancelled())
                return;
            doc = makeDocument(analysis, doc.get());
            if (analysis->stage == AnalysisStage::Diagnosed)
                return; // handed over with the end of the job
            const bool curves = analysis->stage == AnalysisStage::Replayed;
            job.post([this, path, d = doc, curves] {
                if (curves)
                    emit curvesReady(path, d);
                else
                    emit attributed(path, d);
            });
        };
        try {
            analyze(AnalysisSource::file(file), {}, callbacks);
        } catch (const std::bad_alloc&) {
            throw std::runtime_error("not enough memory to load this snapshot");
        }
        *finalDoc = doc;
        },
        std::move(callbacks));
}

} // namespace memscope
