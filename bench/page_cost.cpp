// memscope_page_cost: what a fresh page of memory costs this machine, against the work that
// fills it. Every big array of the model is fresh memory, written once; on bare metal the
// kernel zeroes a fresh page at ~10 GB/s, on a virtual machine whose host takes free memory
// back (virtio free-page reporting, ballooning) the first touch of a page the host reclaimed
// also faults in the host, which can cost more than the whole computation.
//
//   memscope_page_cost [MiB]        (default 1024)
//
// Maps MiB of anonymous memory and touches one byte a page, in this order: 4 KiB pages
// fresh, the same again (the kernel reuses the pages just freed), 2 MiB pages (transparent
// huge pages, MADV_HUGEPAGE) fresh, the same again; then a memset over memory already
// touched (the cost of writing, without the page's first touch). Prints GB/s for each, one
// JSON object. Run it as its own process: "fresh" means fresh to this process.

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/mman.h>

namespace {

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

// Seconds to first-touch `bytes` of a new mapping advised with `advice`.
double firstTouch(size_t bytes, int advice, double* memsetSeconds)
{
    void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        std::perror("mmap");
        std::exit(1);
    }
    ::madvise(p, bytes, advice);
    auto* c = static_cast<volatile char*>(p);
    const double t0 = now();
    for (size_t i = 0; i < bytes; i += 4096)
        c[i] = 1;
    const double t1 = now();
    if (memsetSeconds) {
        std::memset(p, 2, bytes);
        *memsetSeconds = now() - t1;
    }
    ::munmap(p, bytes);
    return t1 - t0;
}

} // namespace

int main(int argc, char** argv)
{
    const size_t mib = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1024;
    const size_t bytes = mib << 20;
    const double gb = static_cast<double>(bytes) / 1e9;
    double write = 0;
    const double small1 = firstTouch(bytes, MADV_NOHUGEPAGE, nullptr);
    const double small2 = firstTouch(bytes, MADV_NOHUGEPAGE, nullptr);
    const double huge1 = firstTouch(bytes, MADV_HUGEPAGE, nullptr);
    const double huge2 = firstTouch(bytes, MADV_HUGEPAGE, &write);
    std::printf("{\"mib\": %zu, \"fresh_4k_gb_s\": %.2f, \"reused_4k_gb_s\": %.2f, \"fresh_2m_gb_s\": %.2f, "
                "\"reused_2m_gb_s\": %.2f, \"memset_touched_gb_s\": %.2f}\n",
                mib, gb / small1, gb / small2, gb / huge1, gb / huge2, gb / write);
    return 0;
}
