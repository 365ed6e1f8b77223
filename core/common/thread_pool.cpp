#include "common/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <memory>
#include <sched.h>

namespace memscope {

namespace {

std::atomic<unsigned> g_threads{0};
std::mutex g_sharedMutex;
std::unique_ptr<ThreadPool> g_shared;

} // namespace

ThreadPool::ThreadPool(unsigned workers)
{
    m_threads.reserve(workers);
    for (unsigned i = 0; i < workers; ++i)
        m_threads.emplace_back([this] { work(); });
}

ThreadPool::~ThreadPool()
{
    {
        std::lock_guard lock(m_mutex);
        m_stop = true;
    }
    m_wake.notify_all();
    for (std::thread& t : m_threads)
        t.join();
}

void ThreadPool::submit(std::function<void()> task)
{
    if (m_threads.empty()) {
        task();
        return;
    }
    {
        std::lock_guard lock(m_mutex);
        m_tasks.push_back(std::move(task));
    }
    m_wake.notify_one();
}

void ThreadPool::work()
{
    while (true) {
        std::function<void()> task;
        {
            std::unique_lock lock(m_mutex);
            m_wake.wait(lock, [this] { return m_stop || !m_tasks.empty(); });
            if (m_tasks.empty())
                return;
            task = std::move(m_tasks.front());
            m_tasks.pop_front();
        }
        task();
    }
}

void ThreadPool::parallelFor(size_t n, const std::function<void(size_t)>& body)
{
    if (n == 0)
        return;
    struct State {
        std::atomic<size_t> next{0};
        std::mutex mutex;
        std::condition_variable done;
        size_t active = 0; // helpers inside run()
        bool closed = false; // the caller is done: a helper starting now has nothing to do
        std::exception_ptr error;
    };
    auto state = std::make_shared<State>();
    auto run = [&state, n, &body] {
        size_t i;
        while ((i = state->next.fetch_add(1)) < n) {
            try {
                body(i);
            } catch (...) {
                std::lock_guard lock(state->mutex);
                if (!state->error)
                    state->error = std::current_exception();
                state->next = n;
            }
        }
    };
    const size_t helpers = std::min<size_t>(m_threads.size(), n - 1);
    for (size_t h = 0; h < helpers; ++h)
        submit([state, &run] {
            {
                std::lock_guard lock(state->mutex);
                if (state->closed) // never touches run (the caller's frame may be gone)
                    return;
                ++state->active;
            }
            run();
            std::lock_guard lock(state->mutex);
            if (--state->active == 0)
                state->done.notify_all();
        });
    run();
    std::unique_lock lock(state->mutex);
    // Helpers still queued (the pool busy elsewhere, or nested) are not waited for.
    state->closed = true;
    state->done.wait(lock, [&] { return state->active == 0; });
    if (state->error)
        std::rethrow_exception(state->error);
}

ThreadPool& ThreadPool::shared()
{
    std::lock_guard lock(g_sharedMutex);
    const unsigned want = threadCount() - 1;
    if (!g_shared || g_shared->workers() != want)
        g_shared = std::make_unique<ThreadPool>(want);
    return *g_shared;
}

unsigned availableCores()
{
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        const int n = CPU_COUNT(&set);
        if (n > 0)
            return static_cast<unsigned>(n);
    }
    const unsigned h = std::thread::hardware_concurrency();
    return h ? h : 1;
}

unsigned threadCount()
{
    const unsigned n = g_threads.load();
    // More than 8 did not pay on a 16-core host (bench/results/scaling_h100_16core.jsonl:
    // 930k diagnose 0.30 s at 8 threads, 0.45 s at 16; 100M summary 14.1 s at 8 and 16)
    return n ? n : std::min(availableCores(), kDefaultThreadLimit);
}

void setThreadCount(unsigned n) { g_threads = n; }

} // namespace memscope
