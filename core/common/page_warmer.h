#pragma once

#include <atomic>
#include <cstddef>
#include <thread>

namespace memscope {

/*
 * Warms memory for a stage that has not allocated it yet, with CPU time nobody else wants.
 * A fresh page costs the kernel a fault and a zeroing on its first write; on a virtual
 * machine whose host takes free guest memory back (free page reporting, ballooning), the
 * first write to such a page also faults in the host, and then fresh 2 MiB pages come at
 * 0.3-1.3 GB/s against 9 GB/s for pages this process has just freed
 * (`memscope_page_cost`). The Prefaulter covers buffers that exist; the replay's do not
 * exist while the file is parsed, and their sizes follow from the parse.
 *
 * start(bytes) maps that much anonymous memory (advised to huge pages) and populates it
 * slice by slice on a thread of the lowest scheduling class (SCHED_IDLE: it runs only on
 * a core left idle, never slowing the parse or the Prefaulter). release() stops it between
 * slices and unmaps what it reached: the kernel hands those pages straight to the next
 * allocations, the replay's columns, without asking the host again. On a machine where
 * fresh pages are cheap it costs one zeroing of idle time. Without MADV_POPULATE_WRITE
 * (kernels before 5.14) it does nothing.
 */
class PageWarmer {
public:
    PageWarmer() = default;
    PageWarmer(const PageWarmer&) = delete;
    PageWarmer& operator=(const PageWarmer&) = delete;
    ~PageWarmer() { release(); }

    void start(size_t bytes);
    // Stops warming and gives the memory back; returns the bytes that were warmed.
    size_t release();
    // The bytes populated so far (a whole slice at a time), and of the mapping those the
    // kernel holds resident now (mincore): what the next stage will get without a fault.
    size_t warmed() const { return m_warmed.load(); }
    size_t residentBytes() const;

private:
    void* m_data = nullptr;
    size_t m_bytes = 0;
    std::atomic<bool> m_stop{false};
    std::atomic<size_t> m_warmed{0};
    std::thread m_thread;
};

} // namespace memscope
