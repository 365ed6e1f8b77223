#pragma once

#include "attribute/category.h"

#include <QColor>
#include <QString>

#include <cstdint>

namespace memscope {

QString bytesText(int64_t bytes);   // "5.65 GiB", as the core prints it
QString countText(int64_t n);       // "11,513"
QString percentText(double share);  // "56.1%"
QString secondsText(double s);      // "586.2 ms", "1.234 s"
QString categoryText(Category c);
QString phaseText(Phase p);
QString colorSwatchHtml(const QColor& c); // a small coloured square for rich text

} // namespace memscope
