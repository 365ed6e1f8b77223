#include "ui/loader.h"

#include "common/load_error.h"

#include <QFileInfo>
#include <QThread>

#include <cmath>

namespace memscope {

Loader::Loader(QObject* parent) : QObject(parent) { qRegisterMetaType<std::shared_ptr<const memscope::Document>>(); }

Loader::~Loader()
{
    m_queue.clear();
    if (m_worker) {
        m_cancel->store(true);
        m_worker->wait();
        delete m_worker;
    }
}

void Loader::load(const QString& path)
{
    m_queue.push_back(path);
    if (!m_worker)
        startNext();
}

void Loader::load(const QStringList& paths)
{
    for (const QString& p : paths)
        m_queue.push_back(p);
    if (!m_worker)
        startNext();
}

void Loader::cancel()
{
    const QStringList dropped = m_queue;
    m_queue.clear();
    if (m_cancel)
        m_cancel->store(true);
    for (const QString& p : dropped)
        emit loadCancelled(p);
}

void Loader::cancelCurrent()
{
    if (m_cancel)
        m_cancel->store(true);
}

void Loader::startNext()
{
    if (m_queue.isEmpty()) {
        emit idle();
        return;
    }
    m_cancel = std::make_shared<std::atomic<bool>>(false);
    auto cancel = m_cancel;
    const QString path = m_queue.takeFirst();
    Loader* self = this; // outlives the worker: the destructor waits for it
    emit loadStarted(path);

    m_worker = QThread::create([self, path, cancel] {
        int lastPercent = -1;
        AnalysisCallbacks callbacks;
        callbacks.progress = [&](AnalysisStage stage, double f) {
            const double whole = analysisFraction(stage, f);
            const int percent = static_cast<int>(std::lround(whole * 100));
            if (percent != lastPercent) {
                lastPercent = percent;
                const QString name = QString::fromUtf8(analysisStageName(stage));
                QMetaObject::invokeMethod(
                    self, [self, path, whole, name] { emit self->progressChanged(path, whole, name); }, Qt::QueuedConnection);
            }
            return !cancel->load();
        };
        std::shared_ptr<const Document> doc;
        callbacks.stageReady = [&](const std::shared_ptr<const Analysis>& analysis) {
            if (analysis->stage == AnalysisStage::Loaded || cancel->load())
                return;
            doc = makeDocument(analysis, doc.get());
            if (analysis->stage == AnalysisStage::Diagnosed)
                return; // handed over below, with the end of the load
            const bool curves = analysis->stage == AnalysisStage::Replayed;
            QMetaObject::invokeMethod(
                self,
                [self, path, d = doc, curves] {
                if (curves)
                    emit self->curvesReady(path, d);
                else
                    emit self->attributed(path, d);
                },
                Qt::QueuedConnection);
        };
        QString error;
        bool cancelled = false;
        try {
            analyze(AnalysisSource::file(QFileInfo(path).filePath().toStdString()), {}, callbacks);
        } catch (const LoadCancelled&) {
            cancelled = true;
        } catch (const LoadError& e) {
            error = QString::fromStdString(e.what());
        } catch (const std::bad_alloc&) {
            error = path + QStringLiteral(": not enough memory to load this snapshot");
        } catch (const std::exception& e) {
            error = path + QStringLiteral(": ") + QString::fromStdString(e.what());
        }
        if (cancelled || !error.isEmpty())
            doc.reset();
        QMetaObject::invokeMethod(
            self,
            [self, path, doc, error, cancelled] {
            self->m_worker->wait();
            self->m_worker->deleteLater();
            self->m_worker = nullptr;
            if (cancelled)
                emit self->loadCancelled(path);
            else if (doc)
                emit self->snapshotLoaded(path, doc);
            else
                emit self->loadFailed(path, error);
            self->startNext();
            },
            Qt::QueuedConnection);
    });
    m_worker->start();
}

} // namespace memscope
