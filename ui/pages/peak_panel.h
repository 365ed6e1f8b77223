#pragma once

#include "ui/document/document.h"
#include "query/point_report.h"

#include <QWidget>

#include <memory>

class QLabel;
class QPushButton;
class QSortFilterProxyModel;
class QTabWidget;
class QTableView;
class QTableWidget;

namespace memscope {

class CallSiteModel;
class ActiveAllocationModel;
class StackView;

/*
 * What is in memory at the selected time (by default the global peak): the totals, each
 * category's bytes and share, a sortable table of the live allocations and one of their
 * call sites aggregated by stack; selecting a row shows its full stack. The numbers are
 * the core's PointReport, the same that peak_report.csv writes.
 */
class PeakPanel : public QWidget {
    Q_OBJECT
public:
    explicit PeakPanel(QWidget* parent = nullptr);
    ~PeakPanel() override;

    void setDocument(std::shared_ptr<const Document> document, size_t deviceIndex);
    // A later stage of the same analysis, at the same event.
    void updateDocument(std::shared_ptr<const Document> document);
    // Before the Attributed stage only the totals are shown, with "Categorising…" in place of
    // the categories, live allocations and call sites.
    void setEvent(int64_t event);
    const PointReport& report() const { return m_report; }
    QString headerText() const;
    QTableWidget* breakdownTable() const { return m_breakdown; }
    QTableView* activeTable() const { return m_live; }
    QTableView* callSiteTable() const { return m_sites; }
    StackView* stackView() const { return m_stack; }

signals:
    void allocationSelected(memscope::AllocationId id);
    void goToPeakRequested();

private:
    void refresh();
    void refreshPending(int64_t event);
    void showLiveRow(const QModelIndex& proxyIndex);
    void showSiteRow(const QModelIndex& proxyIndex);

    QLabel* m_header;
    QPushButton* m_peakButton;
    QTableWidget* m_breakdown;
    QTabWidget* m_tabs;
    QTableView* m_live;
    QTableView* m_sites;
    ActiveAllocationModel* m_liveModel;
    CallSiteModel* m_siteModel;
    QSortFilterProxyModel* m_liveProxy;
    QSortFilterProxyModel* m_siteProxy;
    StackView* m_stack;
    std::shared_ptr<const Document> m_document;
    size_t m_deviceIndex = 0;
    PointReport m_report;
    int64_t m_event = -1;
    bool m_grown = false; // updateDocument() is refreshing: keep the column widths
};

} // namespace memscope
