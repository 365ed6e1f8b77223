#include "common/prefaulter.h"

#include <algorithm>
#include <cstdint>
#include <sys/mman.h>

namespace memscope {

void Prefaulter::start()
{
#ifdef MADV_POPULATE_WRITE
    if (m_ranges.empty() || m_thread.joinable())
        return;
    // In rounds, a slice of every buffer per round: writers fill several of them side by side.
    m_thread = std::thread([ranges = m_ranges] {
        constexpr uintptr_t kPage = 4096;
        constexpr size_t kRounds = 32;
        for (size_t round = 0; round < kRounds; ++round) {
            for (const auto& [data, bytes] : ranges) {
                const uintptr_t base = reinterpret_cast<uintptr_t>(data);
                const uintptr_t from = (base + bytes * round / kRounds) & ~(kPage - 1);
                const uintptr_t to = (base + bytes * (round + 1) / kRounds + kPage - 1) & ~(kPage - 1);
                if (!data || to <= from)
                    continue;
                if (::madvise(reinterpret_cast<void*>(from), to - from, MADV_POPULATE_WRITE) != 0)
                    return; // not supported here: the writers fault as usual
            }
        }
    });
#endif
}

void Prefaulter::join()
{
    if (m_thread.joinable())
        m_thread.join();
}

} // namespace memscope
