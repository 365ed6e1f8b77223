#pragma once

#include "common/huge_pages.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace memscope {

/*
 * A column whose values repeat from a small set (a trace entry's stream, its
 * user_metadata, its compile_context): one byte per row, indexing a table of at most 255
 * distinct values. The 256th distinct value turns it into a plain column of values.
 * Reads are by value: col[i].
 */
template <class T>
class DictColumn {
public:
    T operator[](size_t i) const { return m_wide ? m_values[i] : m_table[m_codes[i]]; }
    size_t size() const { return m_wide ? m_values.size() : m_codes.size(); }
    bool empty() const { return size() == 0; }
    T front() const { return (*this)[0]; }
    T back() const { return (*this)[size() - 1]; }

    void reserve(size_t n)
    {
        if (m_wide)
            reserveHuge(m_values, n);
        else
            reserveHuge(m_codes, n);
    }

    void push_back(T v)
    {
        if (m_wide) {
            m_values.push_back(v);
            return;
        }
        if (m_last < m_table.size() && m_table[m_last] == v) {
            m_codes.push_back(static_cast<uint8_t>(m_last));
            return;
        }
        for (size_t k = 0; k < m_table.size(); ++k) {
            if (m_table[k] == v) {
                m_last = k;
                m_codes.push_back(static_cast<uint8_t>(k));
                return;
            }
        }
        if (m_table.size() < 255) {
            m_last = m_table.size();
            m_table.push_back(v);
            m_codes.push_back(static_cast<uint8_t>(m_last));
            return;
        }
        widen();
        m_values.push_back(v);
    }

    // Bytes held (capacity).
    size_t bytes() const { return m_codes.capacity() + m_table.capacity() * sizeof(T) + m_values.capacity() * sizeof(T); }

private:
    void widen()
    {
        m_values.reserve(m_codes.capacity() + 1);
        for (uint8_t c : m_codes)
            m_values.push_back(m_table[c]);
        std::vector<uint8_t>().swap(m_codes);
        m_wide = true;
    }

    std::vector<uint8_t> m_codes;
    std::vector<T> m_table;
    std::vector<T> m_values; // when wide
    size_t m_last = 0;
    bool m_wide = false;
};

} // namespace memscope
