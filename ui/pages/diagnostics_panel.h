#pragma once

#include "diagnose/diagnostic.h"

#include <QWidget>

#include <memory>
#include <optional>

class QLabel;
class QPushButton;
class QTextBrowser;
class QTreeWidget;
class QTreeWidgetItem;

namespace memscope {

class FrameClassifier;
struct Replay;

/*
 * The findings of core/diagnose for one snapshot: a list (severity, finding, message,
 * bytes, per iteration), and for the selected one its explanation, figures and fix, and
 * its evidence: the call sites (expandable to their allocations, largest first).
 * Activating a call site or an allocation, or "Show moment", asks the window to go there.
 *
 * Plain widget: give it the core's results with setDiagnostics(); it keeps the shared
 * pointers and the classifier pointer (which must outlive it or the next call).
 */
class DiagnosticsPanel : public QWidget {
    Q_OBJECT
public:
    explicit DiagnosticsPanel(QWidget* parent = nullptr);

    // `deviceIndex`: show only that device's findings (an index into replay->devices).
    void setDiagnostics(std::shared_ptr<const Diagnostics> diagnostics, std::shared_ptr<const Replay> replay,
                        const FrameClassifier* frames, std::optional<size_t> deviceIndex = {});
    void setDeviceIndex(std::optional<size_t> deviceIndex);
    // No findings, and `message` in their place ("No snapshot" when empty): a document whose
    // findings are still being computed shows "Diagnosing…".
    void clear(const QString& message = {});

    int findingCount() const;
    const Diagnostic* finding(int row) const;
    const Diagnostic* currentFinding() const;
    void selectFinding(int row);
    QTreeWidget* list() const { return m_list; }
    QTreeWidget* evidence() const { return m_evidence; }
    QTextBrowser* detail() const { return m_detail; }

signals:
    void findingSelected(int row);
    void eventActivated(qint64 event); // the moment a finding is about (OOM, peak, release)
    void stackActivated(memscope::StackId stack); // a call site of the evidence
    void allocationActivated(memscope::AllocationId id);

private:
    void rebuild();
    void showFinding(const Diagnostic* d);
    QString siteText(StackId stack) const;

    QLabel* m_summary;
    QTreeWidget* m_list;
    QTextBrowser* m_detail;
    QTreeWidget* m_evidence;
    QPushButton* m_showMoment;
    std::shared_ptr<const Diagnostics> m_diagnostics;
    std::shared_ptr<const Replay> m_replay;
    const FrameClassifier* m_frames = nullptr;
    std::optional<size_t> m_device;
    std::vector<const Diagnostic*> m_shown;
};

} // namespace memscope
