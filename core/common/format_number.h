#pragma once

#include <string>

namespace memscope {

// Numbers as text for files and terminals, with a '.' decimal point whatever the process's
// C locale says: a GUI process runs under QApplication, which sets the C locale from the
// environment (LC_NUMERIC=de_DE writes "0,5" through printf), and a CSV with decimal commas
// is a broken CSV. std::to_chars is locale-free by definition.

// `decimals` digits after the point, as "%.*f" in the C locale.
std::string formatFixed(double value, int decimals);

// As "%g" (6 significant digits) in the C locale.
std::string formatGeneral(double value);

} // namespace memscope
