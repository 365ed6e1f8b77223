#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace memscope {

// A headless command's arguments that it cannot run with; the message names the argument.
struct UsageError : std::invalid_argument {
    using std::invalid_argument::invalid_argument;
};

/*
 * The arguments of one headless command, split the same way for every command:
 *
 *   memscope estimate run.pickle --device=1 --recorded-batch 8 --json
 *                     ^operand   ^option=value ^option value ^flag
 *
 * An option takes its value from "--name=value" or from the next argument (aliases such
 * as "-o" for "--output" share one value); a lone "-" is an operand (stdin or stdout);
 * with `passthrough`, everything after "--" is kept apart (a command to run). Anything else
 * starting with '-' is a UsageError, as are a missing value and too many operands.
 */
class CommandLine {
public:
    struct Spec {
        std::string command; // for messages: "summary takes one file, …"
        std::vector<std::string> flags; // "--json"
        std::vector<std::vector<std::string>> options; // names of each; the first is the one asked by
        size_t maxOperands = 1;
        bool passthrough = false;
    };

    CommandLine(const std::vector<std::string>& args, const Spec& spec);

    bool has(std::string_view flag) const;
    std::optional<std::string> value(std::string_view option) const; // the last one given
    std::vector<std::string> values(std::string_view option) const; // every one, in order
    std::string operand() const { return m_operands.empty() ? std::string() : m_operands.front(); }
    const std::vector<std::string>& operands() const { return m_operands; }
    const std::vector<std::string>& passthrough() const { return m_passthrough; }

    // "--device": a CUDA device ordinal (0, 1, …).
    std::optional<int> device() const;
    // A finite number > 0, or >= 0.
    std::optional<double> positive(std::string_view option) const;
    std::optional<double> nonNegative(std::string_view option) const;

private:
    std::optional<double> number(std::string_view option, bool zeroAllowed) const;

    std::vector<std::string> m_flags;
    std::vector<std::pair<std::string, std::string>> m_values; // canonical name, value
    std::vector<std::string> m_operands;
    std::vector<std::string> m_passthrough;
};

// Takes "--threads N" / "--threads=N" (any command, before a "--") out of args: the
// threads memscope uses (common/thread_pool.h), 1 to 4096; none given: the cores available, at most 8.
std::optional<unsigned> takeThreadsOption(std::vector<std::string>& args);

} // namespace memscope
