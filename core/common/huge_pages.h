#pragma once

#include <cstddef>
#include <vector>

namespace memscope {

/*
 * Huge pages for the big arrays the model fills once (event columns, curves, per-event
 * results). A fresh array is backed page by page on first touch: 4 KiB per page fault,
 * and on a virtual machine a fault costs microseconds, a third of the load time of a
 * large snapshot. madvise(MADV_HUGEPAGE) on the still-untouched buffer lets the kernel
 * back it with 2 MiB pages instead (transparent huge pages in "madvise" or "always"
 * mode; elsewhere a no-op). Only buffers of at least 4 MiB are advised.
 */
void adviseHugePages(const void* data, size_t bytes);

// v.reserve(n), advised; call before the elements are written.
template <class T>
void reserveHuge(std::vector<T>& v, size_t n)
{
    v.reserve(n);
    adviseHugePages(v.data(), v.capacity() * sizeof(T));
}

// v.assign(n, value) into a fresh advised buffer.
template <class T>
void assignHuge(std::vector<T>& v, size_t n, const T& value)
{
    if (v.capacity() < n) {
        std::vector<T>().swap(v);
        reserveHuge(v, n);
    }
    v.assign(n, value);
}

} // namespace memscope
