#pragma once

#include "ui/document/document.h"
#include "query/point_report.h"

#include <QWidget>

#include <memory>

class QLabel;
class QPushButton;
class QSpinBox;
class QSortFilterProxyModel;
class QTabWidget;
class QTableView;
class QTableWidget;

namespace memscope {

class CallSiteModel;
class ActiveAllocationModel;
class ModuleBreakdownModel;
class StackView;

/*
 * What is in memory at the selected time (by default the global peak): the totals, each
 * category's bytes and share, a sortable table of the live allocations and one of their
 * call sites aggregated by stack (each with its op and nn.Module path), and the live bytes by
 * module path at a chosen depth (core/query's moduleBreakdown); selecting a row shows its full
 * stack. The numbers are the core's PointReport, the same that peak_report.csv writes.
 */
class PeakPanel : public QWidget {
    Q_OBJECT
public:
    explicit PeakPanel(QWidget* parent = nullptr);
    ~PeakPanel() override;

    void setDocument(std::shared_ptr<const Document> document, size_t deviceIndex);
    // A later stage of the same analysis, at the same event.
    // keepColumnWidths: a live tab's grown document (every few seconds) keeps the tables' widths
    // (measuring them cost the GUI thread 8-42 ms); a staged open's next stage measures again.
    void updateDocument(std::shared_ptr<const Document> document, bool keepColumnWidths = false);
    // Before the Attributed stage only the totals are shown, with "Categorising…" in place of
    // the categories, live allocations and call sites.
    void setEvent(int64_t event);
    // A range of events (the timeline's selection): the breakdown, the allocations and the call
    // sites show what was active during it (query/range_report.h), each allocation once, until
    // clearRange() goes back to the selected event.
    void setRange(int64_t firstEvent, int64_t lastEvent);
    void clearRange();
    bool hasRange() const { return m_rangeFirst >= 0; }
    // Shows only the allocations and call sites whose stack is flagged (one flag per StackId,
    // then one for no frames: query/stack_tree.h's stacksUnder), named `label`; empty clears.
    void setStackFilter(std::vector<uint8_t> stackMask, const QString& label);
    const PointReport& report() const { return m_report; }
    QString headerText() const;
    QTableWidget* breakdownTable() const { return m_breakdown; }
    QTableView* activeTable() const { return m_live; }
    QTableView* callSiteTable() const { return m_sites; }
    QTableView* moduleTable() const { return m_modules; }
    QSpinBox* moduleDepth() const { return m_depth; }
    QTabWidget* tabs() const { return m_tabs; }
    StackView* stackView() const { return m_stack; }

signals:
    void allocationSelected(memscope::AllocationId id);
    void goToPeakRequested();

private:
    void refresh();
    void refreshPending(int64_t event);
    void applyStackFilter();
    void showRangeText();
    void showLiveRow(const QModelIndex& proxyIndex);
    void showSiteRow(const QModelIndex& proxyIndex);
    void refreshModules();
    void showModuleRow(const QModelIndex& index);

    QLabel* m_header;
    QPushButton* m_peakButton;
    QTableWidget* m_breakdown;
    QTabWidget* m_tabs;
    QTableView* m_live;
    QTableView* m_sites;
    QTableView* m_modules;
    QSpinBox* m_depth;
    QLabel* m_moduleNote;
    ModuleBreakdownModel* m_moduleModel;
    bool m_depthChosen = false; // the user set the depth: kept from point to point
    ActiveAllocationModel* m_liveModel;
    CallSiteModel* m_siteModel;
    QSortFilterProxyModel* m_liveProxy;
    QSortFilterProxyModel* m_siteProxy;
    StackView* m_stack;
    std::shared_ptr<const Document> m_document;
    size_t m_deviceIndex = 0;
    PointReport m_report;
    int64_t m_event = -1;
    int64_t m_rangeFirst = -1, m_rangeLast = -1;
    double m_rangeByteSeconds = 0;
    bool m_rangeTimed = true;
    int64_t m_unfilteredCount = 0;
    std::vector<uint8_t> m_stackMask;
    QString m_filterLabel;
    bool m_grown = false; // updateDocument() is refreshing: keep the column widths
};

} // namespace memscope
