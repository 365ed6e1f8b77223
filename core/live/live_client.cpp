#include "live/live_client.h"

#include "live/live_decoder.h"
#include "live/protocol.h"

#include <arpa/inet.h>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace memscope {

namespace {

int64_t nowMs()
{
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string errnoText() { return std::strerror(errno); }

bool sendAll(int fd, const std::string& data)
{
    size_t sent = 0;
    while (sent < data.size()) {
        const ssize_t n = ::send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        sent += static_cast<size_t>(n);
    }
    return true;
}

std::string jsonEscape(const std::string& s)
{
    std::string out;
    for (char c : s) {
        if (c == '"' || c == '\\')
            out += '\\';
        if (static_cast<unsigned char>(c) < 0x20)
            continue;
        out += c;
    }
    return out;
}

std::string clientHello(const std::string& token)
{
    std::string body(live::kMagic, 4);
    const uint16_t major = live::kVersionMajor, minor = live::kVersionMinor;
    body.append(reinterpret_cast<const char*>(&major), 2);
    body.append(reinterpret_cast<const char*>(&minor), 2);
    body += "{\"client\":\"memscope\",\"token\":\"" + jsonEscape(token) + "\"}";
    std::string msg;
    const uint32_t length = static_cast<uint32_t>(body.size() + 1);
    msg.append(reinterpret_cast<const char*>(&length), 4);
    msg.push_back(static_cast<char>(live::MessageType::ClientHello));
    return msg + body;
}

int connectUnix(const std::string& path, int timeoutMs)
{
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (path.size() >= sizeof addr.sun_path)
        throw std::runtime_error(path + ": socket path longer than " + std::to_string(sizeof addr.sun_path - 1) + " bytes");
    std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
    const int64_t deadline = nowMs() + timeoutMs;
    for (;;) {
        int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
            throw std::runtime_error("socket(): " + errnoText());
        if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
            ucred cred{};
            socklen_t len = sizeof cred;
            if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || cred.uid != ::getuid()) {
                ::close(fd);
                throw std::runtime_error(path + ": the agent runs as uid " + std::to_string(cred.uid) +
                                         ", not as this user; refusing to read from it");
            }
            return fd;
        }
        const int err = errno;
        ::close(fd);
        if ((err != ENOENT && err != ECONNREFUSED) || nowMs() >= deadline)
            throw std::runtime_error(path + ": cannot connect: " + std::strerror(err));
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
}

int connectTcp(const std::string& host, int port)
{
    addrinfo hints{};
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* res = nullptr;
    const std::string service = std::to_string(port);
    if (int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &res); rc != 0)
        throw std::runtime_error(host + ":" + service + ": " + gai_strerror(rc));
    std::string lastError = "no address";
    for (addrinfo* a = res; a; a = a->ai_next) {
        bool loopback = false;
        if (a->ai_family == AF_INET)
            loopback = (ntohl(reinterpret_cast<sockaddr_in*>(a->ai_addr)->sin_addr.s_addr) >> 24) == 127;
        else if (a->ai_family == AF_INET6)
            loopback = IN6_IS_ADDR_LOOPBACK(&reinterpret_cast<sockaddr_in6*>(a->ai_addr)->sin6_addr);
        if (!loopback) {
            lastError = "not a loopback address; memscope connects to local agents only";
            continue;
        }
        int fd = ::socket(a->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd >= 0 && ::connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
            ::freeaddrinfo(res);
            return fd;
        }
        lastError = errnoText();
        if (fd >= 0)
            ::close(fd);
    }
    ::freeaddrinfo(res);
    throw std::runtime_error(host + ":" + service + ": cannot connect: " + lastError);
}

} // namespace

std::string LiveEndpoint::describe() const { return unixPath.empty() ? tcpHost + ":" + std::to_string(tcpPort) : unixPath; }

std::string_view liveStateName(LiveState s)
{
    switch (s) {
    case LiveState::Idle: return "idle";
    case LiveState::Streaming: return "streaming";
    case LiveState::Ended: return "ended";
    case LiveState::Lost: return "lost";
    case LiveState::Failed: return "failed";
    case LiveState::Detached: return "detached";
    }
    return "?";
}

LiveClient::LiveClient() : LiveClient(Options{}) { }

LiveClient::LiveClient(Options options) : m_options(std::move(options)) { }

LiveClient::~LiveClient()
{
    detach();
    if (m_recovery)
        std::fclose(m_recovery);
}

void LiveClient::setOnUpdate(std::function<void()> callback)
{
    std::lock_guard<std::mutex> lock(m_mutex);
    m_onUpdate = std::move(callback);
}

int64_t LiveClient::quietMs() const
{
    const int64_t last = m_lastDataMs.load(std::memory_order_acquire);
    return last < 0 ? -1 : nowMs() - last;
}

void LiveClient::connect(const LiveEndpoint& endpoint)
{
    if (m_thread.joinable())
        throw std::runtime_error("already connected");
    int fd = endpoint.unixPath.empty() ? connectTcp(endpoint.tcpHost, endpoint.tcpPort)
                                       : connectUnix(endpoint.unixPath, m_options.connectTimeoutMs);
    if (!sendAll(fd, clientHello(endpoint.token))) {
        ::close(fd);
        throw std::runtime_error(endpoint.describe() + ": the agent closed the connection at once");
    }
    if (::pipe2(m_wakePipe, O_CLOEXEC) != 0) {
        ::close(fd);
        throw std::runtime_error("pipe(): " + errnoText());
    }
    if (!m_options.recoveryPath.empty()) {
        m_recovery = std::fopen(m_options.recoveryPath.c_str(), "wb");
        if (!m_recovery) {
            ::close(fd);
            throw std::runtime_error(m_options.recoveryPath + ": cannot create the recovery file: " + errnoText());
        }
    }
    m_fd = fd;
    m_lastDataMs.store(nowMs(), std::memory_order_release);
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        m_state = LiveState::Streaming;
    }
    m_thread = std::thread(&LiveClient::readLoop, this);
}

void LiveClient::detach()
{
    if (!m_thread.joinable())
        return;
    const char c = 'x';
    [[maybe_unused]] ssize_t n = ::write(m_wakePipe[1], &c, 1);
    m_thread.join();
    ::close(m_wakePipe[0]);
    ::close(m_wakePipe[1]);
    m_wakePipe[0] = m_wakePipe[1] = -1;
}

void LiveClient::flushRecovery(bool force)
{
    if (!m_recovery)
        return;
    const int64_t t = nowMs();
    if (force || t - m_lastFlushMs >= 500) {
        std::fflush(m_recovery);
        ::fdatasync(::fileno(m_recovery));
        m_lastFlushMs = t;
    }
}

void LiveClient::finish(LiveState state, std::string error)
{
    std::function<void()> callback;
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        if (m_state == LiveState::Streaming) {
            m_state = state;
            m_error = std::move(error);
        }
        callback = m_onUpdate;
    }
    m_revision.fetch_add(1, std::memory_order_acq_rel);
    m_finishedCv.notify_all();
    if (callback)
        callback();
}

void LiveClient::readLoop()
{
    LiveDecoder decoder(m_recording, m_options.maxMessage);
    std::vector<uint8_t> buffer(1 << 20);
    pollfd fds[2] = {{m_fd, POLLIN, 0}, {m_wakePipe[0], POLLIN, 0}};
    LiveState endState = LiveState::Lost;
    std::string endError;
    for (;;) {
        const int rc = ::poll(fds, 2, 200);
        if (rc < 0 && errno != EINTR) {
            endError = "poll(): " + errnoText();
            break;
        }
        flushRecovery(false);
        if (fds[1].revents) {
            endState = LiveState::Detached;
            break;
        }
        if (rc <= 0 || !fds[0].revents)
            continue;
        const ssize_t n = ::recv(m_fd, buffer.data(), buffer.size(), 0);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (n <= 0) {
            std::lock_guard<std::mutex> lock(m_mutex);
            if (m_recording.stats().ended) {
                endState = LiveState::Ended;
            } else {
                endState = LiveState::Lost;
                endError = n < 0 ? "the connection broke: " + errnoText()
                                 : "the agent closed the connection before the end of the recording "
                                   "(the process was killed or crashed?)";
                if (decoder.pendingBytes())
                    endError += "; " + std::to_string(decoder.pendingBytes()) + " bytes of an incomplete message dropped";
            }
            break;
        }
        m_lastDataMs.store(nowMs(), std::memory_order_release);
        if (m_recovery)
            std::fwrite(buffer.data(), 1, static_cast<size_t>(n), m_recovery);
        std::function<void()> callback;
        bool failed = false;
        {
            std::lock_guard<std::mutex> lock(m_mutex);
            try {
                decoder.feed(std::span<const uint8_t>(buffer.data(), static_cast<size_t>(n)));
            } catch (const LiveProtocolError& e) {
                endState = LiveState::Failed;
                endError = e.what();
                failed = true;
            } catch (const std::exception& e) {
                endState = LiveState::Failed;
                endError = std::string("decoding failed: ") + e.what();
                failed = true;
            }
            callback = m_onUpdate;
        }
        m_revision.fetch_add(1, std::memory_order_acq_rel);
        if (callback)
            callback();
        if (failed)
            break;
    }
    ::shutdown(m_fd, SHUT_RDWR);
    ::close(m_fd);
    m_fd = -1;
    flushRecovery(true);
    finish(endState, endError);
}

LiveState LiveClient::state() const
{
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_state;
}

std::string LiveClient::error() const
{
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_error;
}

bool LiveClient::finished() const
{
    const LiveState s = state();
    return s != LiveState::Idle && s != LiveState::Streaming;
}

bool LiveClient::waitFinished(int timeoutMs) const
{
    std::unique_lock<std::mutex> lock(m_mutex);
    return m_finishedCv.wait_for(lock, std::chrono::milliseconds(timeoutMs),
                                 [&] { return m_state != LiveState::Idle && m_state != LiveState::Streaming; });
}

std::shared_ptr<const Snapshot> LiveClient::snapshot() const
{
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_recording.snapshot();
}

void LiveClient::withRecording(const std::function<void(LiveRecording&)>& f)
{
    std::lock_guard<std::mutex> lock(m_mutex);
    f(m_recording);
}

LiveStats LiveClient::stats() const
{
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_recording.stats();
}

LiveHello LiveClient::hello() const
{
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_recording.hello();
}

bool looksLikeLiveStream(std::span<const uint8_t> head)
{
    return head.size() >= 9 && head[4] == static_cast<uint8_t>(live::MessageType::Hello) &&
           std::memcmp(head.data() + 5, live::kMagic, 4) == 0;
}

std::shared_ptr<const Snapshot> readLiveStreamFile(const std::string& path, std::string* note)
{
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f)
        throw std::runtime_error(path + ": cannot open: " + errnoText());
    LiveRecording recording;
    LiveDecoder decoder(recording);
    std::vector<uint8_t> buffer(1 << 20);
    std::string what;
    bool first = true;
    for (;;) {
        const size_t n = std::fread(buffer.data(), 1, buffer.size(), f);
        if (n == 0)
            break;
        if (first && !looksLikeLiveStream({buffer.data(), n})) {
            std::fclose(f);
            throw std::runtime_error(path + ": not a memscope live recording (no HELLO with 'MSCP' at offset 0)");
        }
        first = false;
        try {
            decoder.feed({buffer.data(), n});
        } catch (const LiveProtocolError& e) {
            what = e.what();
            break;
        }
    }
    std::fclose(f);
    if (what.empty() && decoder.pendingBytes())
        what = "the last " + std::to_string(decoder.pendingBytes()) + " bytes (an incomplete message) were dropped";
    if (what.empty() && !recording.stats().ended)
        what = "the recording stops before its end (no END message)";
    if (note)
        *note = what;
    auto s = copySnapshot(recording.model());
    s->path = path;
    return s;
}

} // namespace memscope
