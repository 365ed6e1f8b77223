#pragma once

#include "query/allocator_state.h"
#include "ui/document/document.h"

#include <QWidget>

#include <memory>

class QComboBox;
class QLabel;

namespace memscope {

class SegmentMapWidget;
class StackView;

// The allocator at the selected time: every reserved segment with its live blocks and
// free gaps, reserved vs requested, and how fragmented the free space is. For the
// "reserved is much larger than allocated" question.
class AllocatorStateView : public QWidget {
    Q_OBJECT
public:
    explicit AllocatorStateView(QWidget* parent = nullptr);

    void setDocument(std::shared_ptr<const Document> document, size_t deviceIndex);
    void updateDocument(std::shared_ptr<const Document> document); // a later stage, at the same event
    void setEvent(int64_t event);
    int64_t event() const { return m_event; }
    const AllocatorState& state() const;
    QString summaryText() const;
    SegmentMapWidget* map() const { return m_map; }

signals:
    void allocationSelected(memscope::AllocationId id);

private:
    void refresh();

    QLabel* m_summary;
    QLabel* m_legend;
    QComboBox* m_sort;
    SegmentMapWidget* m_map;
    StackView* m_stack;
    std::shared_ptr<const Document> m_document;
    size_t m_deviceIndex = 0;
    int64_t m_event = -1;
};

} // namespace memscope
