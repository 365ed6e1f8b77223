#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace memscope {

/*
 * The process's worker threads, and the one setting of how many threads memscope uses
 * (`--threads N`; by default the cores this process may run on, sched_getaffinity).
 *
 * shared() is sized threadCount() - 1 (the calling thread is the last one): the parse's
 * decoders, the per-device replay and the GUI's loads all take their threads from it, so
 * the setting bounds the whole program. parallelFor(n, body) runs body(0..n-1) on the
 * workers and the caller and returns when every call has; the caller takes indices too, so
 * a nested or a one-thread call never waits on a busy pool. The first exception a body
 * throws is rethrown in the caller once the others have finished.
 */
class ThreadPool {
public:
    explicit ThreadPool(unsigned workers);
    ThreadPool(const ThreadPool&) = delete;
    ThreadPool& operator=(const ThreadPool&) = delete;
    ~ThreadPool();

    unsigned workers() const { return static_cast<unsigned>(m_threads.size()); }
    // Runs task on a worker (or, with none, now on the caller).
    void submit(std::function<void()> task);
    void parallelFor(size_t n, const std::function<void(size_t)>& body);

    // The pool of threadCount() - 1 workers, made on first use (and made again after
    // setThreadCount changes the setting, once nobody uses the old one).
    static ThreadPool& shared();

private:
    void work();

    std::mutex m_mutex;
    std::condition_variable m_wake;
    std::deque<std::function<void()>> m_tasks;
    std::vector<std::thread> m_threads;
    bool m_stop = false;
};

// How many threads memscope uses: setThreadCount's value, else the cores available to it, at
// most kDefaultThreadLimit.
inline constexpr unsigned kDefaultThreadLimit = 8;
unsigned threadCount();
// n >= 1; 0 goes back to the cores available. Set it before the work starts (the command line does).
void setThreadCount(unsigned n);
unsigned availableCores();

} // namespace memscope
