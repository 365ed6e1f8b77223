#pragma once

#include "ui/document/document.h"

#include <QWidget>

#include <memory>

class QComboBox;
class QCustomPlot;
class QLabel;
class QLineEdit;
class QMouseEvent;

namespace memscope {

class ReplotGate;

class AllocationBandsLayer;
class StackView;

/*
 * All allocations of a device as bands stacked by lifetime (AllocationBandsLayer), with
 * the requested total drawn over them. Clicking a band shows that allocation's details
 * and stack; the search box highlights allocations whose stack has a frame containing the
 * text, or whose address contains the hex digits typed. Shares the x range with the
 * category timeline.
 */
class AllocationTimelineView : public QWidget {
    Q_OBJECT
public:
    explicit AllocationTimelineView(QWidget* parent = nullptr);

    void setDocument(std::shared_ptr<const Document> document, size_t deviceIndex);
    // A later stage of the same analysis (categories, frames): keeps the range, the selected
    // allocation and the search.
    void updateDocument(std::shared_ptr<const Document> document);
    void setXAxisMode(XAxisMode mode);
    void setXRange(double lower, double upper);
    void setSearchText(const QString& text);
    void selectAllocation(AllocationId id);
    // Highlights the allocations made at one call site (clears the search text).
    void highlightStack(StackId stack);
    // Highlights the allocations whose stack is flagged (one flag per StackId, then one for
    // allocations with no frames: query/stack_tree.h's stacksUnder); an empty mask clears.
    void highlightStacks(const std::vector<uint8_t>& stackMask, const QString& what);

    QCustomPlot* plot() const { return m_plot; }
    AllocationBandsLayer* bands() const { return m_bands; }
    AllocationId selectedAllocation() const { return m_selected; }
    int64_t matchCount() const { return m_matchCount; }
    int64_t matchBytesLive() const { return m_matchBytes; }
    QString detailsText() const;
    StackView* stackView() const { return m_stack; }
    QLineEdit* searchField() const { return m_search; }

signals:
    void allocationSelected(memscope::AllocationId id);
    void xRangeChanged(double lower, double upper);

protected:
    void changeEvent(QEvent* event) override;

private:
    void rebuild();
    void applyTheme();
    void runSearch();
    void showMatches(std::vector<uint8_t> matches, const QString& what);
    void onMousePress(QMouseEvent* event);
    void onMouseRelease(QMouseEvent* event);
    void onMouseMove(QMouseEvent* event);
    void refreshTotalLine();
    QString fieldsText(const DeviceModel& m, const Allocation& a) const;

    QCustomPlot* m_plot;
    ReplotGate* m_replot;
    AllocationBandsLayer* m_bands;
    QLineEdit* m_search;
    QLabel* m_matchLabel;
    QComboBox* m_colorMode;
    QLabel* m_details;
    StackView* m_stack;

    std::shared_ptr<const Document> m_document;
    size_t m_deviceIndex = 0;
    XAxisMode m_mode = XAxisMode::Time;
    AllocationId m_selected;
    int64_t m_matchCount = 0;
    int64_t m_matchBytes = 0;
    QPoint m_pressPos;
    bool m_syncing = false;
    double m_lastLower = 0, m_lastUpper = 0;
    int m_lastWidth = 0;
};

} // namespace memscope
