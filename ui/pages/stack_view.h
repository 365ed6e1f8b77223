#pragma once

#include "common/strong_id.h"
#include "snapshot/event_table.h"

#include <QWidget>

class QLabel;
class QTreeWidget;

namespace memscope {

struct Document;

// One call stack: the user's own frames first (expanded), then the library frames
// (torch, transformers, the C++ runtime, …) folded into one collapsed group. What newer
// recordings add is shown with it: a "compiled: …" line (compile_context), the FX node and
// the original source line under each torch.compile frame, and the frames of the forward a
// backward allocation belongs to (forward_frames).
class StackView : public QWidget {
    Q_OBJECT
public:
    explicit StackView(QWidget* parent = nullptr);

    // `eventRow`: the trace entry the stack is of (its compile_context and forward_frames),
    // -1 for none; `events` is that entry's table.
    void setStack(const Document* document, StackId stack, const QString& title, const EventTable* events = nullptr,
                  int64_t eventRow = -1);
    // The stack of an allocation's alloc (of its block, for one from before recording).
    void setAllocation(const Document* document, size_t deviceIndex, AllocationId id, const QString& title);
    void clear(const QString& message = {});
    int userFrameCount() const { return m_user; }
    int libraryFrameCount() const { return m_library; }
    QTreeWidget* tree() const { return m_tree; }
    QString title() const;

protected:
    void resizeEvent(QResizeEvent* event) override;
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void fitColumns();
    void addForwardFrames(const Document* document, const EventTable* events, int64_t eventRow);

    QLabel* m_title;
    QTreeWidget* m_tree;
    int m_user = 0;
    int m_library = 0;
    bool m_userSized = false; // the user dragged the columns' divider
    bool m_fitting = false;
};

} // namespace memscope
