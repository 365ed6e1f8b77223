#pragma once

#include "common/huge_pages.h"

#include <cstddef>
#include <thread>
#include <utility>
#include <vector>

namespace memscope {

/*
 * Faults in the pages of buffers on the second core while this one computes what will
 * fill them. A fresh buffer costs the kernel a fault and a zeroing of every page on its
 * first write, which on this kind of machine is as slow as computing the values: the
 * per-category curves alone are 56 bytes an event. The buffers are reserved (advised to
 * huge pages) up front, handed to a Prefaulter, which populates them with
 * madvise(MADV_POPULATE_WRITE), a slice of each in turn, (no user-space write, so it never races the writer: a page
 * the writer reaches first is simply skipped), and the writer fills them with push_back.
 * The destructor (or join()) waits; the buffers should not be reallocated before that. If
 * one is (a reservation from an estimate fell short), populating its old range does no
 * harm: madvise fails on an unmapped range and never changes the contents of a mapped one.
 * Without the madvise (kernels before 5.14) it does nothing and the writer faults as usual.
 */
class Prefaulter {
public:
    Prefaulter() = default;
    Prefaulter(const Prefaulter&) = delete;
    Prefaulter& operator=(const Prefaulter&) = delete;
    ~Prefaulter() { join(); }

    template <class T>
    void add(const std::vector<T>& v)
    {
        add(v.data(), v.capacity() * sizeof(T));
    }
    void add(const void* data, size_t bytes) { m_ranges.emplace_back(data, bytes); }
    // Starts populating what was added, in order.
    void start();
    void join();

private:
    std::vector<std::pair<const void*, size_t>> m_ranges;
    std::thread m_thread;
};

} // namespace memscope
