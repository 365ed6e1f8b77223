#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <utility>
#include <vector>

namespace memscope {

/*
 * A curve of 64-bit values, one per event, in about half the memory of a vector<int64_t>.
 *
 * Values are kept in blocks of kBlock (4096) consecutive values. A block stores its first
 * value whole (the base) and every value as a signed 32-bit difference from it; a curve of
 * bytes live moves by less than 2 GiB within 4096 events almost everywhere, so a value costs
 * 4 bytes. A block whose values stray 2 GiB or more from its base keeps them whole (8 bytes
 * each) in a second array: exact for any int64 value, only the memory differs. Reading value
 * i is one lookup in the small block table and one read in the narrow (or wide) array.
 *
 * Written front to back with push_back (a value is readable as soon as it is pushed); the
 * per-category curves of the attribution are 7 of these (56 bytes an event before, 28 now),
 * and the replay's requested and reserved curves two more.
 */
class CompactCurve {
public:
    static constexpr size_t kShift = 12;
    static constexpr size_t kBlock = size_t(1) << kShift;

    size_t size() const { return m_size; }
    bool empty() const { return m_size == 0; }

    int64_t operator[](size_t i) const
    {
        const Block& b = m_blocks[i >> kShift];
        const size_t at = b.offset + (i & (kBlock - 1));
        return b.wide ? m_wide[at] : b.base + m_narrow[at];
    }

    int64_t front() const { return (*this)[0]; }
    int64_t back() const { return (*this)[m_size - 1]; }

    void clear();
    // Room for n values, the narrow array advised to huge pages (see huge_pages.h).
    void reserve(size_t n);
    void push_back(int64_t v)
    {
        if ((m_size & (kBlock - 1)) == 0) {
            m_blocks.push_back({v, m_narrow.size(), false});
        } else {
            Block& b = m_blocks.back();
            int64_t d = 0;
            if (!b.wide && (__builtin_sub_overflow(v, b.base, &d) || d < INT32_MIN || d > INT32_MAX))
                widen();
        }
        Block& b = m_blocks.back();
        if (b.wide)
            m_wide.push_back(v);
        else
            m_narrow.push_back(static_cast<int32_t>(v - b.base));
        ++m_size;
    }
    // Pushes n values; whole blocks are checked and written in one tight pass (the
    // attribution writes its curves 4096 events at a time through this).
    void append(const int64_t* values, size_t n);
    // Copies values [first, first + count) to out, a block at a time: the way to walk a long
    // stretch of the curve (one block lookup per 4096 values instead of one per value).
    void read(size_t first, size_t count, int64_t* out) const;
    // The first index of the highest value in [first, last), walked with read(); first when
    // the range is empty.
    size_t firstMaxIndex(size_t first, size_t last) const;
    // Adds delta to every value written so far.
    void addToAll(int64_t delta);
    // Releases unused reserved capacity.
    void shrinkToFit();

    // For a curve whose values never decrease: the first index whose value fails pred (size()
    // when every value passes), pred being true on a prefix. Bisects the blocks by their
    // first values, then one block: O(log n) reads, all but ~12 of them in the block table.
    template <class Pred>
    size_t partitionPoint(Pred pred) const
    {
        size_t lo = 0, hi = m_blocks.size(); // the answer's block is in [lo, hi)
        while (hi - lo > 1) {
            const size_t mid = lo + (hi - lo) / 2;
            if (pred((*this)[mid << kShift]))
                lo = mid;
            else
                hi = mid;
        }
        return partitionPointInBlock(lo, pred);
    }
    // The same within one block: the first index of block `block` whose value fails pred,
    // or the block's end (for a caller that found the block itself).
    template <class Pred>
    size_t partitionPointInBlock(size_t block, Pred pred) const
    {
        size_t first = block << kShift;
        size_t last = std::min(m_size, (block + 1) << kShift);
        while (first < last) {
            const size_t mid = first + (last - first) / 2;
            if (pred((*this)[mid]))
                first = mid + 1;
            else
                last = mid;
        }
        return first;
    }
    size_t blockCount() const { return m_blocks.size(); }

    // Bytes held (capacity), and the narrow array's buffer (for a Prefaulter).
    size_t bytes() const;
    std::pair<const void*, size_t> narrowBuffer() const { return {m_narrow.data(), m_narrow.capacity() * sizeof(int32_t)}; }
    size_t wideBlocks() const;

    class const_iterator {
    public:
        using iterator_category = std::random_access_iterator_tag;
        using value_type = int64_t;
        using difference_type = std::ptrdiff_t;
        using pointer = void;
        using reference = int64_t;

        const_iterator() = default;
        const_iterator(const CompactCurve* c, size_t i) : m_curve(c), m_i(i) { }
        int64_t operator*() const { return (*m_curve)[m_i]; }
        int64_t operator[](difference_type k) const
        {
            return (*m_curve)[static_cast<size_t>(static_cast<difference_type>(m_i) + k)];
        }
        const_iterator& operator++()
        {
            ++m_i;
            return *this;
        }
        const_iterator operator++(int)
        {
            const_iterator t = *this;
            ++m_i;
            return t;
        }
        const_iterator& operator--()
        {
            --m_i;
            return *this;
        }
        const_iterator operator--(int)
        {
            const_iterator t = *this;
            --m_i;
            return t;
        }
        const_iterator& operator+=(difference_type k)
        {
            m_i = static_cast<size_t>(static_cast<difference_type>(m_i) + k);
            return *this;
        }
        const_iterator& operator-=(difference_type k) { return *this += -k; }
        friend const_iterator operator+(const_iterator a, difference_type k) { return a += k; }
        friend const_iterator operator+(difference_type k, const_iterator a) { return a += k; }
        friend const_iterator operator-(const_iterator a, difference_type k) { return a -= k; }
        friend difference_type operator-(const const_iterator& a, const const_iterator& b)
        {
            return static_cast<difference_type>(a.m_i) - static_cast<difference_type>(b.m_i);
        }
        friend bool operator==(const const_iterator& a, const const_iterator& b) { return a.m_i == b.m_i; }
        friend auto operator<=>(const const_iterator& a, const const_iterator& b) { return a.m_i <=> b.m_i; }

    private:
        const CompactCurve* m_curve = nullptr;
        size_t m_i = 0;
    };
    const_iterator begin() const { return {this, 0}; }
    const_iterator end() const { return {this, m_size}; }

private:
    struct Block {
        int64_t base = 0;
        size_t offset = 0; // of its first value, in m_narrow or (wide) in m_wide
        bool wide = false;
    };
    // The current block's values move from the narrow array to the wide one.
    void widen();

    std::vector<Block> m_blocks;
    std::vector<int32_t> m_narrow;
    std::vector<int64_t> m_wide;
    size_t m_size = 0;
};

} // namespace memscope
