#pragma once

#include <string>
#include <vector>

namespace memscope {

// memscope diff A B [--device N] [--json|--csv] [--fail-if-peak-grows LIMIT]
//                   [--fail-if-category-grows CAT=LIMIT]…
// Exit 0: compared and every rule holds; 1: a rule failed (one line on stderr says which);
// 2: a usage or input error (a bad size, an unknown category, a file that cannot be read).
int runDiff(const std::vector<std::string>& args);

// memscope check FILE --max-peak SIZE [--max-category CAT=SIZE]… [--device N] [--json]
// The same exit codes.
int runCheck(const std::vector<std::string>& args);

} // namespace memscope
