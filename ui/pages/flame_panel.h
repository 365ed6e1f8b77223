#pragma once

#include "ui/document/document.h"

#include <QWidget>

#include <memory>
#include <string>
#include <utility>
#include <vector>

class QComboBox;
class QLabel;
class QScrollArea;
class QTreeView;

namespace memscope {

class FlameModel;
class FlameView;
struct StackTree;

/*
 * The snapshot tab's "Flame graph": memory by call stack (query/stack_tree.h) as an icicle
 * (FlameView) beside the same tree as a table (FlameModel), at the global peak, at the selected
 * time (bytes active there) or over the timeline's selected range (bytes × lifetime clipped to
 * the range), with every frame or the user's frames and the op. Clicking a frame zooms into it
 * and asks the tab to filter the allocations to the stacks under it (frameFilterRequested; the
 * root clears); the breadcrumb goes back. The tree is built when the panel is shown.
 */
class FlamePanel : public QWidget {
    Q_OBJECT
public:
    enum class When { Peak, SelectedTime, Range };

    explicit FlamePanel(QWidget* parent = nullptr);
    ~FlamePanel() override;

    void setDocument(std::shared_ptr<const Document> document, size_t deviceIndex);
    void updateDocument(std::shared_ptr<const Document> document);
    void setSelectedEvent(int64_t event);
    // A range selected in the timeline switches to it; clearing goes back to the selected time.
    void setRange(int64_t firstEvent, int64_t lastEvent);
    void clearRange();
    void setWhen(When when);
    When when() const { return m_when; }
    void setUserFramesOnly(bool on);

    // The tree shown, built now if it is out of date (null before the categories arrive).
    std::shared_ptr<const StackTree> tree();
    FlameModel* model() const { return m_model; }
    FlameView* view() const { return m_view; }
    QTreeView* treeView() const { return m_table; }
    QComboBox* whenSelector() const { return m_whenBox; }
    QString summaryText() const;
    QString breadcrumbText() const;
    // The stacks under a node of the tree shown (query/stack_tree.h stacksUnder) and its text.
    std::vector<uint8_t> stacksUnder(int node) const;
    QString nodeText(int node) const;
    // Zooms to the node whose path is `path` (frames' ids or synthetic labels), as deep as it exists.
    void zoomToPath(const std::vector<std::pair<int32_t, std::string>>& path);
    std::vector<std::pair<int32_t, std::string>> pathOf(int node) const;

signals:
    void frameFilterRequested(int node); // 0: clear the filter

protected:
    void showEvent(QShowEvent* event) override;

private:
    void invalidate();
    void rebuild();
    void updateBreadcrumb();
    void selectInTable(int node);

    QComboBox* m_whenBox;
    QComboBox* m_framesBox;
    QLabel* m_summary;
    QLabel* m_breadcrumb;
    QScrollArea* m_scroll;
    FlameModel* m_model;
    FlameView* m_view;
    QTreeView* m_table;
    std::shared_ptr<const Document> m_document;
    std::shared_ptr<const StackTree> m_tree;
    size_t m_deviceIndex = 0;
    int64_t m_event = -1;
    int64_t m_rangeFirst = -1, m_rangeLast = -1;
    When m_when = When::SelectedTime;
    bool m_dirty = true;
    std::vector<std::pair<int32_t, std::string>> m_keepPath; // zoom kept across rebuilds
};

} // namespace memscope
