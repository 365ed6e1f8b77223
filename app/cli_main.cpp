// memscope built with -DMEMSCOPE_BUILD_UI=OFF: the headless commands alone, no Qt.
#include "cli.h"

#include <iostream>
#include <string>
#include <vector>

int main(int argc, char** argv)
{
    int status = 0;
    if (argc < 2) {
        std::cerr << memscope::helpText(false);
        return 2;
    }
    if (memscope::handleTopLevelOption(argc, argv, false, status))
        return status;
    if (!memscope::isHeadlessCommand(argv[1])) {
        std::cerr << "memscope: '" << argv[1]
                  << "' is not a command; this memscope has no GUI to open files in (built with "
                     "MEMSCOPE_BUILD_UI=OFF). memscope --help lists the commands.\n";
        return 2;
    }
    return memscope::runHeadless(argv[1], std::vector<std::string>(argv + 2, argv + argc));
}
