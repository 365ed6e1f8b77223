#pragma once

#include <cstdint>
#include <vector>

namespace memscope {

/*
 * Address -> allocation reference for the replay's live set: open addressing with linear
 * probing over a power-of-two table, kept at most half full, deletion by backward shift
 * (no tombstones, so a long trace with millions of alloc/free pairs never degrades). One
 * cache line usually answers a lookup; std::unordered_map needed a node per entry.
 */
class AddressMap {
public:
    AddressMap() { rehash(1024); }

    // The value stored for addr, or nullptr.
    int32_t* find(uint64_t addr)
    {
        for (size_t i = slot(addr);; i = (i + 1) & m_mask) {
            Entry& e = m_table[i];
            if (!e.used)
                return nullptr;
            if (e.addr == addr)
                return &e.value;
        }
    }
    bool contains(uint64_t addr) { return find(addr) != nullptr; }

    // Sets addr -> value (replacing an existing value).
    void insert(uint64_t addr, int32_t value)
    {
        if (2 * (m_size + 1) > m_table.size())
            rehash(m_table.size() * 2);
        for (size_t i = slot(addr);; i = (i + 1) & m_mask) {
            Entry& e = m_table[i];
            if (!e.used) {
                e = Entry{addr, value, true};
                ++m_size;
                return;
            }
            if (e.addr == addr) {
                e.value = value;
                return;
            }
        }
    }

    void erase(uint64_t addr)
    {
        size_t i = slot(addr);
        for (;; i = (i + 1) & m_mask) {
            if (!m_table[i].used)
                return;
            if (m_table[i].addr == addr)
                break;
        }
        // Backward shift: pull later entries of the probe run into the hole.
        size_t hole = i;
        for (size_t j = (i + 1) & m_mask; m_table[j].used; j = (j + 1) & m_mask) {
            const size_t home = slot(m_table[j].addr);
            const bool movable = hole <= j ? (home <= hole || home > j) : (home <= hole && home > j);
            if (movable) {
                m_table[hole] = m_table[j];
                hole = j;
            }
        }
        m_table[hole].used = false;
        --m_size;
    }

    size_t size() const { return m_size; }

private:
    struct Entry {
        uint64_t addr = 0;
        int32_t value = 0;
        bool used = false;
    };
    size_t slot(uint64_t addr) const { return static_cast<size_t>((addr * 0x9E3779B97F4A7C15ull) >> m_shift); }
    void rehash(size_t capacity)
    {
        std::vector<Entry> old;
        old.swap(m_table);
        m_table.assign(capacity, Entry{});
        m_mask = capacity - 1;
        m_shift = 64;
        for (size_t c = capacity; c > 1; c >>= 1)
            --m_shift;
        m_size = 0;
        for (const Entry& e : old)
            if (e.used)
                insert(e.addr, e.value);
    }

    std::vector<Entry> m_table;
    size_t m_mask = 0;
    int m_shift = 64;
    size_t m_size = 0;
};

} // namespace memscope
