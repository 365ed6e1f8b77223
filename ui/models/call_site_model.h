#pragma once

#include "query/point_report.h"

#include <QAbstractTableModel>

namespace memscope {

struct Document;

// The call sites of a PointReport (live allocations grouped by stack) as table rows.
// Qt::UserRole gives each column's raw sort value; StackRole the stack id. Op and Module tell
// apart the sites of one user line (FrameClassifier::opText, moduleText).
class CallSiteModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Bytes, Share, Count, CategoryColumn, TopFrame, Op, Module, StackColumn, ColumnCount };
    static constexpr int SortRole = Qt::UserRole;
    static constexpr int StackRole = Qt::UserRole + 1;

    explicit CallSiteModel(QObject* parent = nullptr);
    void setReport(const Document* document, const PointReport* report);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

private:
    const Document* m_document = nullptr;
    const PointReport* m_report = nullptr;
    std::vector<QString> m_top;
    std::vector<QString> m_stack;
    std::vector<QString> m_ops;
    std::vector<QString> m_modules;
};

} // namespace memscope
