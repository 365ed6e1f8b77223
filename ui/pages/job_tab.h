#pragma once

#include "job/rank_set.h"

#include <QWidget>

#include <memory>

class QComboBox;
class QLabel;
class QSortFilterProxyModel;
class QTableView;

namespace memscope {

class RankMultiplesView;
class RankTableModel;

/*
 * A distributed job's tab: the rank table (sortable: peak, its phase and time, reserved,
 * communication, OOM, % above the mean) above each rank's timeline as small multiples,
 * aligned by wall clock or by iteration. The rank shown first (RankSet::focusRank(): an OOM,
 * else the highest peak) is selected; activating a row or clicking a plot asks for that
 * rank's full snapshot (openRank), which opens in its own snapshot tab.
 */
class JobTab : public QWidget {
    Q_OBJECT
public:
    JobTab(std::shared_ptr<const RankSet> set, QString title, QWidget* parent = nullptr);

    const RankSet& rankSet() const { return *m_set; }
    // A new state of the same job (a live job's ranks as they stream): the table and the
    // timelines follow, the selected rank stays selected.
    void setRankSet(std::shared_ptr<const RankSet> set);
    QString title() const { return m_title; }
    QTableView* table() const { return m_table; }
    RankTableModel* model() const { return m_model; }
    RankMultiplesView* multiples() const { return m_multiples; }
    // The rank selected in the table, as an index into ranks().
    int selectedRank() const;
    void selectRank(int index);

signals:
    void openRank(const QString& path);
    void statusMessage(const QString& text);

private:
    void activate(int index);
    void updateInfo();

    std::shared_ptr<const RankSet> m_set;
    QString m_title;
    QLabel* m_info;
    QComboBox* m_align;
    QTableView* m_table;
    RankTableModel* m_model;
    QSortFilterProxyModel* m_proxy;
    RankMultiplesView* m_multiples;
};

} // namespace memscope
