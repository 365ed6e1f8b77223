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
 * first in x order); a column no band touches shows nothing. A band of zero width still
 * counts, by a vanishing share, in the column it sits in, so a lone instant stays visible.
 *
 * Wide bands give the same picture as drawing each band; where many bands fall into one
 * pixel the column shows the one that dominates it instead of whichever was drawn last.
 * The painter then gets at most one span per run of equal columns: O(pixels) primitives,
 * whatever the number of bands. Cost: O(visible bands + columns covered).
 */
class BandLod {
public:
    struct Input {
        double x0 = 0;
        double x1 = 0;
        uint32_t key = 0;
    };
    static constexpr int64_t kNone = -1;

    // `bands` sorted by x0; `maxX1[i]` = max of x1 over bands[0..i] (so the first band that
    // can reach the view is found by binary search). Returns one band index per column, or kNone.
    static std::vector<int64_t> columns(std::span<const Input> bands, std::span<const double> maxX1, double lower, double upper,
                                        int columns);
};

} // namespace memscope
