#include "live/agent_directory.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>
#include <sys/stat.h>
#include <unistd.h>

namespace memscope {

namespace {

std::string text(const nlohmann::json& j, const char* key)
{
    auto it = j.find(key);
    if (it == j.end() || it->is_null())
        return {};
    return it->is_string() ? it->get<std::string>() : it->dump();
}

bool processAlive(int pid) { return pid > 0 && (::kill(pid, 0) == 0 || errno == EPERM); }

} // namespace

std::string agentDirectory()
{
    if (const char* runtime = std::getenv("XDG_RUNTIME_DIR"); runtime && *runtime) {
        struct stat st { };
        if (::stat(runtime, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == ::getuid() && !(st.st_mode & 022))
            return std::string(runtime) + "/memscope";
    }
    const char* tmp = std::getenv("TMPDIR");
    return std::string(tmp && *tmp ? tmp : "/tmp") + "/memscope-" + std::to_string(::getuid());
}

std::string checkPrivateDirectory(const std::string& path)
{
    struct stat st { };
    if (::lstat(path.c_str(), &st) != 0)
        return path + ": " + std::strerror(errno);
    if (S_ISLNK(st.st_mode))
        return path + ": is a symbolic link";
    if (!S_ISDIR(st.st_mode))
        return path + ": not a directory";
    if (st.st_uid != ::getuid())
        return path + ": owned by uid " + std::to_string(st.st_uid) + ", not by this user";
    if (st.st_mode & 077)
        return path + ": mode " + [&] {
            char buf[8];
            std::snprintf(buf, sizeof buf, "%o", st.st_mode & 0777);
            return std::string(buf);
        }() + " lets other users in; expected 0700";
    return {};
}

std::vector<AgentInfo> listAgents(const std::string& directory)
{
    std::vector<AgentInfo> out;
    std::error_code ec;
    if (!std::filesystem::exists(directory, ec))
        return out;
    if (std::string why = checkPrivateDirectory(directory); !why.empty())
        throw std::runtime_error("refusing the agent directory " + why);
    for (const auto& entry : std::filesystem::directory_iterator(directory, ec)) {
        const std::string name = entry.path().filename().string();
        if (entry.path().extension() != ".json" || (name.rfind("agent-", 0) != 0 && name.rfind("job-", 0) != 0))
            continue;
        std::ifstream in(entry.path());
        nlohmann::json j;
        try {
            j = nlohmann::json::parse(in);
        } catch (const std::exception&) {
            continue;
        }
        if (!j.is_object())
            continue;
        AgentInfo a;
        a.pid = j.value("pid", 0);
        if (!processAlive(a.pid))
            continue;
        a.socketPath = text(j, "socket");
        a.mode = text(j, "mode");
        a.torchVersion = text(j, "torch");
        a.pythonVersion = text(j, "python");
        a.tcp = text(j, "tcp");
        a.token = text(j, "token");
        a.infoPath = entry.path().string();
        a.job = text(j, "job");
        if (!a.job.empty()) {
            a.rank = j.value("rank", -1);
            a.worldSize = j.value("world_size", -1);
        }
        if (auto it = j.find("argv"); it != j.end() && it->is_array())
            for (const auto& arg : *it)
                a.commandLine += (a.commandLine.empty() ? "" : " ") + (arg.is_string() ? arg.get<std::string>() : arg.dump());
        if (auto it = j.find("devices"); it != j.end() && it->is_array())
            for (const auto& d : *it)
                if (d.is_object())
                    a.devices.push_back(text(d, "name"));
        out.push_back(std::move(a));
    }
    std::sort(out.begin(), out.end(), [](const AgentInfo& x, const AgentInfo& y) { return x.pid < y.pid; });
    return out;
}

std::vector<AgentInfo> listJobAgents(const std::string& job, const std::string& directory)
{
    std::vector<AgentInfo> out;
    for (AgentInfo& a : listAgents(directory))
        if (!a.job.empty() && a.job == job)
            out.push_back(std::move(a));
    std::stable_sort(out.begin(), out.end(), [](const AgentInfo& x, const AgentInfo& y) { return x.rank < y.rank; });
    return out;
}

std::vector<std::pair<std::string, std::vector<AgentInfo>>> listJobs(const std::string& directory)
{
    std::map<std::string, std::vector<AgentInfo>> jobs;
    for (AgentInfo& a : listAgents(directory))
        if (!a.job.empty())
            jobs[a.job].push_back(std::move(a));
    std::vector<std::pair<std::string, std::vector<AgentInfo>>> out;
    for (auto& [job, agents] : jobs) {
        std::stable_sort(agents.begin(), agents.end(), [](const AgentInfo& x, const AgentInfo& y) { return x.rank < y.rank; });
        out.emplace_back(job, std::move(agents));
    }
    return out;
}

std::optional<LiveEndpoint> parseTcpTarget(const std::string& target, const std::string& token)
{
    const size_t colon = target.rfind(':');
    if (colon == std::string::npos || colon == 0 || target.find('/') != std::string::npos)
        return std::nullopt;
    std::string host = target.substr(0, colon);
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
        host = host.substr(1, host.size() - 2);
    const std::string port = target.substr(colon + 1);
    if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos || std::stoi(port) < 1 ||
        std::stoi(port) > 65535)
        throw std::invalid_argument(target + ": expected HOST:PORT with a port from 1 to 65535");
    if (token.empty())
        throw std::invalid_argument(target + ": a TCP agent needs its token (--token T; the agent prints "
                                             "'memscope-agent: tcp ADDRESS token T' when it starts)");
    LiveEndpoint e;
    e.tcpHost = host;
    e.tcpPort = std::stoi(port);
    e.token = token;
    return e;
}

LiveEndpoint resolveAttachTarget(const std::string& target, const std::string& directory)
{
    const bool numeric = !target.empty() && target.find_first_not_of("0123456789") == std::string::npos;
    LiveEndpoint e;
    if (!numeric) {
        e.unixPath = target;
        return e;
    }
    const int pid = std::atoi(target.c_str());
    for (const AgentInfo& a : listAgents(directory)) {
        if (a.pid == pid) {
            e.unixPath = a.socketPath;
            return e;
        }
    }
    throw std::runtime_error("no memscope agent runs in process " + target + " (looked in " + directory +
                             "); start it with MEMSCOPE_AGENT=1 or python -m memscope_agent");
}

} // namespace memscope
