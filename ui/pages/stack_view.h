#pragma once

#include "common/strong_id.h"

#include <QWidget>

class QLabel;
class QTreeWidget;

namespace memscope {

struct Document;

// One call stack: the user's own frames first (expanded), then the library frames
// (torch, transformers, the C++ runtime, …) folded into one collapsed group.
class StackView : public QWidget {
    Q_OBJECT
public:
    explicit StackView(QWidget* parent = nullptr);

    void setStack(const Document* document, StackId stack, const QString& title);
    void clear(const QString& message = {});
    int userFrameCount() const { return m_user; }
    int libraryFrameCount() const { return m_library; }
    QTreeWidget* tree() const { return m_tree; }
    QString title() const;

private:
    QLabel* m_title;
    QTreeWidget* m_tree;
    int m_user = 0;
    int m_library = 0;
};

} // namespace memscope
