#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace memscope {

/*
 * An append-only column that a writer thread grows while readers hold immutable views of
 * it, without ever copying it whole (Tracy's model: appended, never moved).
 *
 * Values live in fixed chunks of kChunk elements allocated once and never moved. A View is
 * the list of chunk pointers and the count published when it was taken: elements below that
 * count are never written again, so a reader needs no lock, and taking a view costs one
 * pointer per chunk (100M values: 6,104 pointers). The writer may evict chunks wholly before
 * an index (the bounded live mode keeps full detail for the recent stretch only); a view
 * taken before keeps them alive, one taken after reports them as not held (has()).
 */
template <class T>
class ChunkedSeries {
public:
    static constexpr size_t kShift = 14;
    static constexpr size_t kChunk = size_t(1) << kShift;
    using Chunk = std::shared_ptr<T[]>;

    class View {
    public:
        size_t size() const { return m_size; }
        bool empty() const { return m_size == 0; }
        // The first index still held (0 unless chunks were evicted).
        size_t firstHeld() const { return m_firstHeld; }
        bool has(size_t i) const { return i >= m_firstHeld && i < m_size; }
        const T& operator[](size_t i) const { return m_chunks[i >> kShift][i & (kChunk - 1)]; }
        const T& back() const { return (*this)[m_size - 1]; }

    private:
        friend class ChunkedSeries;
        std::vector<std::shared_ptr<const T[]>> m_chunks;
        size_t m_size = 0;
        size_t m_firstHeld = 0;
    };

    size_t size() const { return m_size; }
    bool empty() const { return m_size == 0; }
    size_t firstHeld() const { return m_firstHeld; }
    const T& operator[](size_t i) const { return m_chunks[i >> kShift][i & (kChunk - 1)]; }
    T& operator[](size_t i) { return m_chunks[i >> kShift][i & (kChunk - 1)]; }
    const T& back() const { return (*this)[m_size - 1]; }

    void push_back(const T& v)
    {
        if ((m_size & (kChunk - 1)) == 0)
            m_chunks.push_back(Chunk(new T[kChunk]));
        m_chunks.back()[m_size & (kChunk - 1)] = v;
        ++m_size;
    }

    // Drops chunk c alone (its elements may no longer be read; holds() says which are kept).
    void evictChunk(size_t c)
    {
        if (c < m_chunks.size())
            m_chunks[c].reset();
    }
    bool holds(size_t i) const { return i < m_size && m_chunks[i >> kShift] != nullptr; }

    // Drops the chunks that lie wholly before index i.
    void evictBefore(size_t i)
    {
        const size_t chunks = i >> kShift;
        for (size_t c = m_firstHeld >> kShift; c < chunks && c < m_chunks.size(); ++c)
            m_chunks[c].reset();
        if ((chunks << kShift) > m_firstHeld)
            m_firstHeld = chunks << kShift;
    }

    // The elements written so far, shared. Only elements < size() of the view may be read.
    View view() const
    {
        View v;
        v.m_chunks.assign(m_chunks.begin(), m_chunks.end());
        v.m_size = m_size;
        v.m_firstHeld = m_firstHeld;
        return v;
    }

    // Bytes held by the chunks still kept.
    size_t heldBytes() const
    {
        size_t chunks = 0;
        for (const Chunk& c : m_chunks)
            chunks += c != nullptr;
        return chunks * kChunk * sizeof(T);
    }

private:
    std::vector<Chunk> m_chunks;
    size_t m_size = 0;
    size_t m_firstHeld = 0;
};

} // namespace memscope
