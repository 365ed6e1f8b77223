#pragma once

#include "ui/document/document.h"

#include <QObject>
#include <QPointer>
#include <QStringList>

#include <atomic>
#include <memory>

namespace memscope {

class JobRunner;

/*
 * Loads snapshot files one after another, each a job of the JobRunner, through core's analyze(). Each
 * file emits loadStarted, progressChanged (naming the running stage), then
 *   curvesReady     once replayed: a document with the requested/reserved curves, no categories
 *   attributed      once phases and categories are known: the document without findings
 *   snapshotLoaded  once diagnosed: the finished document
 * (or loadFailed / loadCancelled). Signals are emitted on the thread the Loader lives in (the
 * GUI thread), so receivers never see a half-built result. cancel() stops the file being
 * loaded and drops the queued ones; cancelCurrent() stops only the file being loaded.
 */
class Loader : public QObject {
    Q_OBJECT
public:
    // runner: the window's; null: a runner of the loader's own.
    explicit Loader(QObject* parent = nullptr, JobRunner* runner = nullptr);
    ~Loader() override;

    void load(const QString& path);
    void load(const QStringList& paths);
    void cancel();
    void cancelCurrent(); // stops the file being loaded; the queued ones still load
    bool isBusy() const { return m_job != 0; }
    int queuedCount() const { return static_cast<int>(m_queue.size()); }

signals:
    void loadStarted(const QString& path);
    void progressChanged(const QString& path, double fraction, const QString& stage);
    void curvesReady(const QString& path, std::shared_ptr<const memscope::Document> document);
    void attributed(const QString& path, std::shared_ptr<const memscope::Document> document);
    void snapshotLoaded(const QString& path, std::shared_ptr<const memscope::Document> document);
    void loadFailed(const QString& path, const QString& message);
    void loadCancelled(const QString& path);
    void idle();

private:
    void startNext();

    QStringList m_queue;
    // The window's runner may go first (MainWindow's children are destroyed in the order
    // made, the runner before the loader: tst_job_tab under ASan).
    QPointer<JobRunner> m_runner;
    uint64_t m_job = 0; // the file loading now, 0: none
};

} // namespace memscope

Q_DECLARE_METATYPE(std::shared_ptr<const memscope::Document>)
