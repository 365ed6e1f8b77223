#include "common/huge_pages.h"

#include <cstdint>
#include <sys/mman.h>

namespace memscope {

void adviseHugePages(const void* data, size_t bytes)
{
#ifdef MADV_HUGEPAGE
    constexpr uintptr_t kHuge = uintptr_t(2) << 20;
    constexpr uintptr_t kPage = 4096;
    if (!data || bytes < 2 * kHuge)
        return;
    // The whole pages of the buffer: malloc serves a buffer this large from its own
    // mapping, which the kernel aligns to 2 MiB, so the advice covers it from its start.
    const uintptr_t begin = reinterpret_cast<uintptr_t>(data) & ~(kPage - 1);
    const uintptr_t end = (reinterpret_cast<uintptr_t>(data) + bytes + kPage - 1) & ~(kPage - 1);
    ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#else
    (void)data;
    (void)bytes;
#endif
}

} // namespace memscope
