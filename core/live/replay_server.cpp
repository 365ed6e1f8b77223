#include "live/replay_server.h"

#include "live/live_encoder.h"
#include "live/protocol.h"

#include <nlohmann/json.hpp>

#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

namespace memscope {

namespace {

using Clock = std::chrono::steady_clock;

bool sendAll(int fd, const std::vector<uint8_t>& bytes)
{
    size_t at = 0;
    while (at < bytes.size()) {
        const ssize_t n = ::send(fd, bytes.data() + at, bytes.size() - at, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        at += static_cast<size_t>(n);
    }
    return true;
}

bool recvExact(int fd, uint8_t* p, size_t n, int timeoutMs)
{
    size_t at = 0;
    while (at < n) {
        pollfd pfd{fd, POLLIN, 0};
        if (::poll(&pfd, 1, timeoutMs) <= 0)
            return false;
        const ssize_t k = ::recv(fd, p + at, n - at, 0);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return false;
        at += static_cast<size_t>(k);
    }
    return true;
}

// CLIENT_HELLO: u32 length, u8 0x81, "MSCP", u16 major, u16 minor, JSON.
bool readClientHello(int fd)
{
    uint8_t head[5];
    if (!recvExact(fd, head, 5, 5000))
        return false;
    uint32_t length;
    std::memcpy(&length, head, 4);
    if (head[4] != static_cast<uint8_t>(live::MessageType::ClientHello) || length < 9 || length > 65536)
        return false;
    std::vector<uint8_t> rest(length - 1);
    if (!recvExact(fd, rest.data(), rest.size(), 5000))
        return false;
    return std::memcmp(rest.data(), live::kMagic, 4) == 0;
}

bool peerIsUs(int fd)
{
    ucred cred{};
    socklen_t len = sizeof cred;
    return ::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 && cred.uid == ::getuid();
}

struct Server {
    std::shared_ptr<const Snapshot> snap;
    const ReplayServeOptions& o;
    LiveStreamEncoder enc;
    std::string helloJson;
    std::vector<uint8_t> head; // HELLO, definitions, SETTINGS: the same for every client
    std::mutex mutex;
    int active = 0;
    bool firstDone = false;
    ReplayServeResult result;

    Server(std::shared_ptr<const Snapshot> s, const ReplayServeOptions& opt) : snap(std::move(s)), o(opt), enc(*snap)
    {
        nlohmann::json devices = nlohmann::json::array();
        for (const DeviceTrace& t : snap->devices)
            devices.push_back({{"index", t.device}, {"name", "replay"}, {"total_memory", 0}});
        nlohmann::json info = {
            {"pid", ::getpid()},
            {"argv", {"memscope", "replay-serve", o.source}},
            {"mode", "replay"},
            {"agent", "memscope replay-serve"},
            {"devices", devices},
            {"protocol", "1.1"},
            {"started_us",
             std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch()).count()},
            {"source", o.source}};
        helloJson = info.dump();
        enc.appendHello(head, helloJson);
        enc.appendDefinitions(head);
        enc.appendSettings(head);
    }

    bool stopped() const { return o.stop && o.stop->load(); }

    // One client's whole stream; returns the events sent.
    uint64_t serve(int fd)
    {
        if (!sendAll(fd, head))
            return 0;
        const auto t0 = Clock::now();
        auto lastStatus = t0;
        uint64_t sent = 0;
        size_t annotation = 0;
        const auto& annotations = snap->annotations;
        std::vector<uint8_t> out;
        out.reserve(1 << 22);
        auto status = [&](bool force) {
            const auto now = Clock::now();
            if (!force && now - lastStatus < std::chrono::milliseconds(500))
                return;
            lastStatus = now;
            nlohmann::json j = {{"events", sent}, {"dropped", 0}, {"clients", active}, {"mode", "replay"}};
            LiveStreamEncoder::appendJson(out, static_cast<uint8_t>(live::MessageType::Status), j.dump());
        };
        for (size_t d = 0; d < snap->devices.size(); ++d) {
            const EventTable& t = snap->devices[d].events;
            size_t k = 0;
            while (k < t.count()) {
                if (stopped())
                    return sent;
                size_t batch = 8192;
                if (o.rate > 0) {
                    // Send what is due by now; wait 10 ms when nothing is.
                    const double elapsed = std::chrono::duration<double>(Clock::now() - t0).count();
                    const double due = o.rate * elapsed - static_cast<double>(sent);
                    if (due < 1) {
                        std::this_thread::sleep_for(std::chrono::milliseconds(10));
                        continue;
                    }
                    batch = std::min<size_t>(static_cast<size_t>(due), 65536);
                }
                const size_t to = std::min(t.count(), k + batch);
                const int64_t lastTime = t.timeUs[to - 1];
                size_t a = annotation;
                while (a < annotations.size() && annotations[a].timeUs <= lastTime)
                    ++a;
                enc.appendAnnotations(out, annotation, a);
                annotation = a;
                enc.appendEvents(out, d, k, to);
                sent += to - k;
                k = to;
                status(false);
                if (!sendAll(fd, out))
                    return sent;
                out.clear();
            }
        }
        enc.appendAnnotations(out, annotation, annotations.size());
        status(true);
        enc.appendSegments(out);
        nlohmann::json end = {{"reason", "replay_done"}, {"dropped", 0}, {"source", o.source}};
        LiveStreamEncoder::appendJson(out, static_cast<uint8_t>(live::MessageType::End), end.dump());
        sendAll(fd, out);
        return sent;
    }

    void client(int fd)
    {
        const auto t0 = Clock::now();
        uint64_t sent = 0;
        if (peerIsUs(fd) && readClientHello(fd))
            sent = serve(fd);
        ::shutdown(fd, SHUT_WR);
        // Let the client read the end before the connection goes.
        uint8_t sink[256];
        pollfd pfd{fd, POLLIN, 0};
        for (int i = 0; i < 50 && ::poll(&pfd, 1, 100) > 0 && ::recv(fd, sink, sizeof sink, 0) > 0; ++i) { }
        ::close(fd);
        std::lock_guard<std::mutex> lock(mutex);
        if (!firstDone && sent > 0) {
            firstDone = true;
            result.eventsSent = sent;
            result.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
        }
        --active;
    }
};

} // namespace

ReplayServeResult serveReplay(std::shared_ptr<const Snapshot> snapshot, const ReplayServeOptions& options)
{
    Server server(std::move(snapshot), options);
    const int listener = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (listener < 0)
        throw std::runtime_error(std::string("socket(): ") + std::strerror(errno));
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (options.socketPath.size() >= sizeof addr.sun_path) {
        ::close(listener);
        throw std::runtime_error(options.socketPath + ": socket path too long");
    }
    std::strcpy(addr.sun_path, options.socketPath.c_str());
    ::unlink(options.socketPath.c_str());
    const mode_t old = ::umask(0177);
    const int rc = ::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    ::umask(old);
    if (rc != 0 || ::listen(listener, 16) != 0) {
        const std::string why = std::strerror(errno);
        ::close(listener);
        throw std::runtime_error(options.socketPath + ": cannot listen: " + why);
    }
    ::chmod(options.socketPath.c_str(), 0600);
    if (!options.infoPath.empty()) {
        nlohmann::json info = nlohmann::json::parse(server.helloJson);
        info["socket"] = options.socketPath;
        const mode_t o2 = ::umask(0177);
        std::ofstream(options.infoPath) << info.dump();
        ::umask(o2);
    }
    if (options.log)
        options.log("memscope replay-serve: listening on " + options.socketPath);
    std::vector<std::thread> threads;
    for (;;) {
        {
            std::lock_guard<std::mutex> lock(server.mutex);
            if ((server.firstDone && server.active == 0) || server.stopped())
                break;
        }
        pollfd pfd{listener, POLLIN, 0};
        if (::poll(&pfd, 1, 100) <= 0)
            continue;
        const int fd = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
        if (fd < 0)
            continue;
        {
            std::lock_guard<std::mutex> lock(server.mutex);
            ++server.active;
            ++server.result.clients;
        }
        threads.emplace_back(&Server::client, &server, fd);
    }
    for (std::thread& t : threads)
        t.join();
    ::close(listener);
    ::unlink(options.socketPath.c_str());
    if (!options.infoPath.empty())
        ::unlink(options.infoPath.c_str());
    return server.result;
}

} // namespace memscope
