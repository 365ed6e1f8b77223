#include "command_line.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>

namespace memscope {

CommandLine::CommandLine(const std::vector<std::string>& args, const Spec& spec)
{
    auto optionOf = [&](std::string_view name) -> const std::vector<std::string>* {
        for (const auto& names : spec.options)
            if (std::find(names.begin(), names.end(), name) != names.end())
                return &names;
        return nullptr;
    };
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (spec.passthrough && a == "--") {
            m_passthrough.assign(args.begin() + static_cast<std::ptrdiff_t>(i) + 1, args.end());
            break;
        }
        if (a.size() < 2 || a[0] != '-') {
            if (m_operands.size() == spec.maxOperands) {
                if (spec.maxOperands == 0)
                    throw UsageError(spec.command + " takes no operand, got '" + a + "'");
                if (spec.maxOperands == 1)
                    throw UsageError(spec.command + " takes one file, got '" + m_operands.back() + "' and '" + a + "'");
                throw UsageError(spec.command + " takes " + std::to_string(spec.maxOperands) + " files, got a further '" + a +
                                 "'");
            }
            m_operands.push_back(a);
            continue;
        }
        if (std::find(spec.flags.begin(), spec.flags.end(), a) != spec.flags.end()) {
            m_flags.push_back(a);
            continue;
        }
        const size_t eq = a.find('=');
        const std::string name = a.substr(0, eq);
        const std::vector<std::string>* option = optionOf(name);
        if (!option)
            throw UsageError("unknown option '" + a + "'");
        if (eq != std::string::npos) {
            m_values.emplace_back(option->front(), a.substr(eq + 1));
            continue;
        }
        if (i + 1 >= args.size())
            throw UsageError(name + " needs a value");
        m_values.emplace_back(option->front(), args[++i]);
    }
}

bool CommandLine::has(std::string_view flag) const { return std::find(m_flags.begin(), m_flags.end(), flag) != m_flags.end(); }

std::optional<std::string> CommandLine::value(std::string_view option) const
{
    for (auto it = m_values.rbegin(); it != m_values.rend(); ++it)
        if (it->first == option)
            return it->second;
    return std::nullopt;
}

std::vector<std::string> CommandLine::values(std::string_view option) const
{
    std::vector<std::string> out;
    for (const auto& [name, v] : m_values)
        if (name == option)
            out.push_back(v);
    return out;
}

std::optional<int> CommandLine::device() const
{
    const auto v = value("--device");
    if (!v)
        return std::nullopt;
    try {
        size_t used = 0;
        const int d = std::stoi(*v, &used);
        if (used == v->size() && d >= 0)
            return d;
    } catch (...) {
    }
    throw UsageError("--device takes a device ordinal (0, 1, …), got '" + *v + "'");
}

std::optional<double> CommandLine::positive(std::string_view option) const { return number(option, false); }

std::optional<double> CommandLine::nonNegative(std::string_view option) const { return number(option, true); }

std::optional<double> CommandLine::number(std::string_view option, bool zeroAllowed) const
{
    const auto v = value(option);
    if (!v)
        return std::nullopt;
    char* end = nullptr;
    const double d = std::strtod(v->c_str(), &end);
    if (!v->empty() && end && !*end && std::isfinite(d) && (d > 0 || (zeroAllowed && d == 0)))
        return d;
    throw UsageError(std::string(option) + (zeroAllowed ? " takes a number >= 0" : " takes a positive number") + ", got '" + *v +
                     "'");
}

std::optional<unsigned> takeThreadsOption(std::vector<std::string>& args)
{
    std::optional<unsigned> threads;
    for (size_t i = 0; i < args.size();) {
        if (args[i] == "--")
            break;
        std::string text;
        size_t take = 1;
        if (args[i] == "--threads") {
            if (i + 1 >= args.size())
                throw UsageError("--threads needs a value, a number of threads (1 or more)");
            text = args[i + 1];
            take = 2;
        } else if (args[i].rfind("--threads=", 0) == 0) {
            text = args[i].substr(10);
        } else {
            ++i;
            continue;
        }
        char* end = nullptr;
        const unsigned long n = std::strtoul(text.c_str(), &end, 10);
        if (text.empty() || !end || *end != '\0' || text[0] == '-' || n < 1 || n > 4096)
            throw UsageError("--threads takes a number of threads from 1 to 4096, not '" + text + "'");
        threads = static_cast<unsigned>(n);
        args.erase(args.begin() + static_cast<std::ptrdiff_t>(i), args.begin() + static_cast<std::ptrdiff_t>(i + take));
    }
    return threads;
}

} // namespace memscope
