#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

namespace memscope {

/*
 * The innermost time range holding time t, for times asked in trace order. `ranges` are
 * sorted by start and nest only a few deep (a closure's zero_grad, forward and backward
 * inside an optimizer step): the answer is the latest range starting at or before t whose
 * end is at or after t, looking back at most 8 ranges from the first range starting after t.
 *
 * The search for that first range starts where the previous time's ended: a trace's times
 * rarely go back (when they do, it searches the whole list again), so most events cost a
 * comparison instead of a binary search over every step of the run. Range: any type with
 * int64_t `start` and `end`.
 */
template <class Range>
class RangeCursor {
public:
    explicit RangeCursor(const std::vector<Range>& ranges) : m_ranges(ranges), m_next(ranges.begin()) { }

    const Range* at(int64_t t)
    {
        if (m_ranges.empty())
            return nullptr;
        // m_next: the first range starting after m_last.
        auto after = [](int64_t v, const Range& r) { return v < r.start; };
        if (t < m_last)
            m_next = std::upper_bound(m_ranges.begin(), m_ranges.end(), t, after);
        else if (m_next != m_ranges.end() && m_next->start <= t)
            m_next = std::upper_bound(m_next, m_ranges.end(), t, after);
        m_last = t;
        auto it = m_next;
        for (int k = 0; k < 8 && it != m_ranges.begin(); ++k) {
            --it;
            if (t <= it->end)
                return &*it;
        }
        return nullptr;
    }

private:
    const std::vector<Range>& m_ranges;
    typename std::vector<Range>::const_iterator m_next;
    int64_t m_last = std::numeric_limits<int64_t>::min();
};

} // namespace memscope
