#pragma once

#include "query/allocator_state.h"

#include <QWidget>

namespace memscope {

struct Document;
struct DeviceModel;

// The segments of an AllocatorState, one row each: a bar the width of the widget with the
// live allocations in their category colour at their offset and the gaps hatched. Only
// the visible rows are painted, so thousands of segments scroll smoothly. A private pool's
// segments (CUDA graph / MemPool) are labelled "pool N" and drawn in the pool's colour.
class SegmentMapWidget : public QWidget {
    Q_OBJECT
public:
    enum class Sort { Size, Address, Gaps };

    explicit SegmentMapWidget(QWidget* parent = nullptr);
    void setState(const Document* document, const DeviceModel* model, AllocatorState state);
    void setSort(Sort sort);
    const AllocatorState& state() const { return m_state; }
    QSize sizeHint() const override;
    // Which allocation (or gap: invalid id, gap bytes in *gap) is under a position.
    AllocationId hit(const QPoint& pos, int* row = nullptr, uint64_t* gap = nullptr) const;

signals:
    void allocationClicked(memscope::AllocationId id);

protected:
    void paintEvent(QPaintEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    bool event(QEvent* event) override;

private:
    int rowHeight() const;
    int poolIndex(const SegmentLife& segment) const; // into the model's pools, -1 for the default pool
    int labelWidth() const;
    QRect barRect(int row) const;
    void reorder();

    const Document* m_document = nullptr;
    const DeviceModel* m_model = nullptr;
    AllocatorState m_state;
    Sort m_sort = Sort::Size;
    std::vector<size_t> m_order;
};

} // namespace memscope
