#pragma once

#include "attribute/category.h"
#include "common/strong_id.h"

#include <QColor>
#include <QString>

#include <cstdint>
#include <string_view>

namespace memscope {

QString bytesText(int64_t bytes); // "5.65 GiB", as the core prints it
QString countText(int64_t n); // "11,513"
QString percentText(double share); // "56.1%"
QString secondsText(double s); // "586.2 ms", "1.234 s"
QString categoryText(Category c);
QString phaseText(Phase p);
QString colorSwatchHtml(const QColor& c); // a small coloured square for rich text

class FrameClassifier;
// A call site: the user frames of the stack (stackSummary) and, when a library made the
// block, what in the library made it first (librarySummary: the autograd node and ATen
// operator, else the innermost frame), so that stacks sharing the user's code read
// differently: "functional.py:2397 silu  ←  train.py:61 llm_train < train.py:181 main",
// "aten::mm  ←  train.py:63 llm_train". Empty: no frames.
QString callSiteText(const FrameClassifier& frames, StackId stack, size_t maxFrames = 4);
// A module path (FrameClassifier::moduleText) for a table cell: a level in the same file as the
// one before it keeps only its line, "modeling_qwen2.py:452 > :388 > :282 > :220".
QString moduleCellText(std::string_view path);
// The whole path for a tooltip, one level a line, indented by depth.
QString moduleToolTip(std::string_view path);
// frames->stackSummary(), or empty while a document has no frame classifier yet (before Attributed).
QString stackSummaryText(const FrameClassifier* frames, StackId stack, size_t maxFrames = 4);

} // namespace memscope
