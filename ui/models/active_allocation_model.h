#pragma once

#include "query/point_report.h"

#include <QAbstractTableModel>

namespace memscope {

struct Document;
struct DeviceModel;

// The live allocations of a PointReport as table rows. Qt::UserRole gives the raw value
// each column sorts by; AllocationIdRole the allocation. Op and Module are the stack's
// operation and nn.Module path (FrameClassifier::opText, moduleText), the module shortened
// for the cell ("modeling_qwen2.py:452 > :388 > …") and whole in the tooltip.
class ActiveAllocationModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Size, CategoryColumn, PhaseColumn, AllocatedAt, Lifetime, TopFrame, Op, Module, Address, ColumnCount };
    static constexpr int SortRole = Qt::UserRole;
    static constexpr int AllocationIdRole = Qt::UserRole + 1;

    explicit ActiveAllocationModel(QObject* parent = nullptr);
    void setReport(const Document* document, const DeviceModel* model, const PointReport* report);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

private:
    const Document* m_document = nullptr;
    const DeviceModel* m_model = nullptr;
    const PointReport* m_report = nullptr;
    std::vector<QString> m_topFrames;
    std::vector<QString> m_ops;
    std::vector<QString> m_modules;
};

} // namespace memscope
