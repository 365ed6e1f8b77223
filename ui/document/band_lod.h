#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace memscope {

/*
 * Level of detail for thousands of shaded x ranges (bands) in one row: what each pixel
 * column shows. The visible x range [lower, upper] is cut into `columns` equal pixel
 * columns; every band adds, to each column it overlaps, the length it covers there, summed
 * per key (the band's colour: bands that look alike count together). A column shows the key
 * that covers most of it, represented by that key's band with the largest share (ties: the
 * first in x order); a column no band touches shows nothing. A band of zero width (or one
 * narrower than a pixel's rounding) is an instant: it counts 1e-12 of a pixel in the column
 * it sits in, so a lone instant stays visible; a key's score is its covered length plus
 * 1e-12 per instant.
 *
 * Wide bands give the same picture as drawing each band; where many bands fall into one
 * pixel the column shows the one that dominates it instead of whichever was drawn last.
 * The painter then gets at most one span per run of equal columns: O(pixels) primitives,
 * whatever the number of bands.
 *
 * Coarse levels, so that a zoomed-out frame does not visit every band: bands are grouped in
 * blocks of 16 consecutive bands (level 1), 256 (level 2), … Each block stores its x extent
 * (the least x0, the greatest x1) and, per key, in the order the keys first appear in it:
 * the covered length, the number of instants, and the longest band (the first on ties).
 * Built once with the bands: O(bands · keys). A frame walks the bands in x order as the
 * band-by-band algorithm does, but where a block starts, the largest block whose extent lies
 * inside the view and inside one pixel column is added whole, its keys in their first-seen
 * order, so ties between keys still go to the first in x order. Blocks that straddle a
 * column edge are opened to the next level down, down to single bands. A frame so costs
 * O(columns · 16 · levels) for a long sequence of short bands, and never more than
 * visiting each band. The picture equals the band-by-band one (`columnsByBand`, kept as the
 * reference) wherever the arithmetic is exact; otherwise the summed lengths may differ in
 * their last bits, which can only swap keys whose coverage is equal to ~1e-15, and a key may
 * be represented by another of its bands of the same length (same colour). A band narrower
 * than a pixel's rounding but not of zero width counts as an instant band by band and by its
 * length inside a whole block: again a difference of ~1e-12 of a pixel.
 */
class BandLod {
public:
    struct Input {
        double x0 = 0;
        double x1 = 0;
        uint32_t key = 0;
    };
    static constexpr int64_t kNone = -1;

    BandLod() = default;
    // `bands` sorted by x0 (non-finite or reversed bands are allowed and skipped as the
    // band-by-band algorithm skips them).
    explicit BandLod(std::vector<Input> bands);

    const std::vector<Input>& bands() const { return m_bands; }
    // maxX1()[i] = max of x1 over bands[0..i] (the first band that can reach a view is found by binary search).
    const std::vector<double>& maxX1() const { return m_maxX1; }
    // One band index per column, or kNone, using the coarse levels.
    std::vector<int64_t> columns(double lower, double upper, int columns) const;

    // The same, band by band: O(visible bands + columns covered). `bands` sorted by x0;
    // `maxX1[i]` = max of x1 over bands[0..i].
    static std::vector<int64_t> columnsByBand(std::span<const Input> bands, std::span<const double> maxX1, double lower,
                                              double upper, int columns);

private:
    static constexpr int kShift = 4; // 16 children per block
    struct Entry {
        uint32_t key = 0;
        int64_t instants = 0; // bands of zero width
        double length = 0; // summed x1 - x0
        int64_t best = kNone; // the longest band (the first on ties)
        double bestLength = -1;
    };
    struct Block {
        double x0 = 0; // the least x0; NaN when a band in the block is non-finite or reversed
        double x1 = 0; // the greatest x1
        size_t begin = 0; // entries [begin, end) of m_entries
        size_t end = 0;
    };

    std::vector<Input> m_bands;
    std::vector<double> m_maxX1;
    std::vector<std::vector<Block>> m_levels; // m_levels[l - 1][b]: block b of 16^l bands
    std::vector<Entry> m_entries;
};

} // namespace memscope
