#include "live/agent_locator.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <stdexcept>
#include <system_error>

#include <unistd.h>

extern char** environ;

namespace memscope {

namespace {
bool hasPackage(const std::filesystem::path& dir)
{
    std::error_code ec;
    return std::filesystem::exists(dir / "memscope_agent" / "__init__.py", ec);
}

bool startsWith(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }
} // namespace

std::string agentPackageDirectory()
{
    if (const char* p = std::getenv("MEMSCOPE_AGENT_PATH"); p && *p)
        return p;
    std::string looked;
    std::error_code ec;
    const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (!ec) {
        const auto installed = exe.parent_path().parent_path() / "share" / "memscope" / "agent";
        if (hasPackage(installed))
            return std::filesystem::weakly_canonical(installed, ec).string();
        looked = installed.string();
    }
#ifdef MEMSCOPE_AGENT_SOURCE_DIR
    if (hasPackage(MEMSCOPE_AGENT_SOURCE_DIR))
        return MEMSCOPE_AGENT_SOURCE_DIR;
    looked += std::string(looked.empty() ? "" : ", ") + MEMSCOPE_AGENT_SOURCE_DIR;
#endif
    throw std::runtime_error("cannot find the memscope_agent package (looked in " + (looked.empty() ? "no place" : looked) +
                             "); set MEMSCOPE_AGENT_PATH to the folder that holds memscope_agent/");
}

std::vector<std::string> currentEnvironment()
{
    std::vector<std::string> out;
    for (char** e = environ; e && *e; ++e)
        out.emplace_back(*e);
    return out;
}

std::vector<std::string> agentEnvironment(const std::vector<std::string>& parent, const AgentLaunch& launch)
{
    std::vector<std::string> env;
    std::string oldPath;
    for (const std::string& kv : parent) {
        if (startsWith(kv, "PYTHONPATH=")) {
            oldPath = kv.substr(11);
            continue;
        }
        if (startsWith(kv, "MEMSCOPE_AGENT=") || startsWith(kv, "MEMSCOPE_AGENT_SOCKET=") ||
            startsWith(kv, "MEMSCOPE_AGENT_JOB=") || startsWith(kv, "MEMSCOPE_AGENT_RECORDER="))
            continue;
        if (launch.stacks != AgentStacks::Full &&
            (startsWith(kv, "MEMSCOPE_AGENT_LIGHT=") || startsWith(kv, "MEMSCOPE_AGENT_MARKERS=") ||
             startsWith(kv, "MEMSCOPE_AGENT_CONTEXT=")))
            continue;
        env.push_back(kv);
    }
    env.push_back("PYTHONPATH=" + agentPackageDirectory() + (oldPath.empty() ? "" : ":" + oldPath));
    if (launch.job.empty()) {
        env.push_back("MEMSCOPE_AGENT=1");
        env.push_back("MEMSCOPE_AGENT_SOCKET=" + launch.socketPath);
    } else {
        env.push_back("MEMSCOPE_AGENT=ranks");
        env.push_back("MEMSCOPE_AGENT_JOB=" + launch.job);
    }
    // The recorder attaches after the start: a program that ends first waits for it (LIVE.md).
    env.push_back("MEMSCOPE_AGENT_RECORDER=1");
    if (launch.stacks == AgentStacks::Light)
        env.push_back("MEMSCOPE_AGENT_LIGHT=1");
    else if (launch.stacks == AgentStacks::Markers)
        env.push_back("MEMSCOPE_AGENT_MARKERS=1");
    return env;
}

std::string liveRecoveryDirectory(const std::string& cacheRoot)
{
    std::string root = cacheRoot;
    if (root.empty()) {
        if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x == '/')
            root = std::string(x) + "/memscope/memscope";
        else if (const char* h = std::getenv("HOME"); h && *h)
            root = std::string(h) + "/.cache/memscope/memscope";
        else
            root = "/tmp/memscope-cache-" + std::to_string(::getuid());
    }
    return root + "/recovery";
}

std::string newRecoveryPath(const std::string& directory)
{
    std::error_code ec;
    std::filesystem::create_directories(directory, ec);
    if (ec)
        throw std::runtime_error(directory + ": cannot create the recovery folder: " + ec.message());
    const auto now = std::chrono::system_clock::now();
    const std::time_t t = std::chrono::system_clock::to_time_t(now);
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
    std::tm local{};
    ::localtime_r(&t, &local);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &local);
    char name[96];
    std::snprintf(name, sizeof name, "live-%d-%s-%03d.mscp", static_cast<int>(::getpid()), stamp, static_cast<int>(ms));
    return directory + "/" + name;
}

} // namespace memscope
