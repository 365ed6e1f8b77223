#include "common/page_warmer.h"

#include "common/huge_pages.h"

#include <algorithm>
#include <cstdint>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>
#include <vector>

namespace memscope {

void PageWarmer::start(size_t bytes)
{
#ifdef MADV_POPULATE_WRITE
    constexpr size_t kHuge = size_t(2) << 20;
    // Never more than a quarter of the free memory: a guess too high must not push out the
    // page cache (the file being read) or anything else.
    const long freePages = ::sysconf(_SC_AVPHYS_PAGES);
    const long pageSize = ::sysconf(_SC_PAGESIZE);
    if (freePages > 0 && pageSize > 0)
        bytes = std::min(bytes, static_cast<size_t>(freePages) * static_cast<size_t>(pageSize) / 4);
    bytes = bytes / kHuge * kHuge;
    if (m_data || bytes == 0)
        return;
    void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        return;
    m_data = p;
    m_bytes = bytes;
    adviseHugePages(p, bytes);
    m_stop = false;
    m_warmed = 0;
    m_thread = std::thread([this] {
#ifdef SCHED_IDLE
        sched_param idle{};
        pthread_setschedparam(pthread_self(), SCHED_IDLE, &idle);
#endif
        auto* base = static_cast<uint8_t*>(m_data);
        constexpr size_t kSlice = size_t(8) << 20;
        for (size_t at = 0; at < m_bytes && !m_stop.load(std::memory_order_relaxed); at += kSlice) {
            const size_t n = std::min(kSlice, m_bytes - at);
            if (::madvise(base + at, n, MADV_POPULATE_WRITE) != 0)
                return;
            m_warmed.store(at + n, std::memory_order_relaxed);
        }
    });
#else
    (void)bytes;
#endif
}

size_t PageWarmer::residentBytes() const
{
    if (!m_data)
        return 0;
    const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
    std::vector<unsigned char> in((m_bytes + page - 1) / page);
    if (::mincore(m_data, m_bytes, in.data()) != 0)
        return 0;
    size_t resident = 0;
    for (unsigned char c : in)
        resident += c & 1;
    return resident * page;
}

size_t PageWarmer::release()
{
    if (!m_data)
        return 0;
    m_stop = true;
    if (m_thread.joinable())
        m_thread.join();
    ::munmap(m_data, m_bytes);
    m_data = nullptr;
    m_bytes = 0;
    return m_warmed.load();
}

} // namespace memscope
