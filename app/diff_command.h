#pragma once

#include <string>
#include <vector>

namespace memscope {

inline constexpr char kDiffUsage[] = "usage: memscope diff A B [--device N] [--json|--csv] [--fail-if-peak-grows LIMIT]\n"
                                     "                         [--fail-if-category-grows CATEGORY=LIMIT]...\n"
                                     "  LIMIT: a size (512MiB, 1.5GB) or a percentage of A's figure (5%)\n"
                                     "  exit 0: every rule holds; 1: a rule failed; 2: a usage or input error";
inline constexpr char kCheckUsage[] =
    "usage: memscope check FILE [--device N] [--json] --max-peak SIZE [--max-category CATEGORY=SIZE]...\n"
    "  SIZE: a number with B, KiB, MiB, GiB, KB, MB or GB (40GiB); a category's figure is its bytes at the peak\n"
    "  exit 0: every rule holds; 1: a rule failed; 2: a usage or input error";

// memscope diff A B [--device N] [--json|--csv] [--fail-if-peak-grows LIMIT]
//                   [--fail-if-category-grows CAT=LIMIT]…
// Exit 0: compared and every rule holds; 1: a rule failed (one line on stderr says which);
// 2: a usage or input error (a bad size, an unknown category, a file that cannot be read).
int runDiff(const std::vector<std::string>& args);

// memscope check FILE --max-peak SIZE [--max-category CAT=SIZE]… [--device N] [--json]
// The same exit codes.
int runCheck(const std::vector<std::string>& args);

} // namespace memscope
