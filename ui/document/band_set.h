#pragma once

#include "ui/document/band_lod.h"

#include <cstdint>
#include <span>
#include <vector>

namespace memscope {

// One shaded x range of a band layer. Plain data, so whole sets are built off the GUI thread;
// how a style looks (colour, label) is the layer's.
struct Band {
    double x0 = 0;
    double x1 = 0;
    int64_t firstEvent = -1;
    int64_t lastEvent = -1;
    int64_t source = -1; // the owner's index of what the band shows (an iteration, an annotation)
    int row = 0;
    int tag = 0; // the owner's kind of band (a phase)
    uint32_t style = 0; // the layer's colour index; bands of one style merge per pixel (BandLod)
};

// Bands in rows, sorted by row then x0, with what drawing them per pixel needs: per row, a
// BandLod (its inputs, coarse levels and the running maximum of x1, so the first band
// reaching a view is found by binary search), built once with the set.
class BandSet {
public:
    BandSet() = default;
    BandSet(std::vector<Band> bands, int rows); // rows are clamped to [0, rows)

    const std::vector<Band>& bands() const { return m_bands; }
    int rows() const { return m_rows; }
    size_t rowBegin(int row) const { return m_rowBegin[static_cast<size_t>(row)]; }
    size_t rowEnd(int row) const { return m_rowBegin[static_cast<size_t>(row) + 1]; }
    // The first band of a row whose x1 can reach `lower` (rowEnd when none).
    size_t firstReaching(int row, double lower) const;
    // The band each pixel column of a row shows over [lower, upper] (an index into bands(), or -1).
    std::vector<int64_t> columnBands(int row, double lower, double upper, int columns) const;

private:
    int m_rows = 1;
    std::vector<Band> m_bands;
    std::vector<BandLod> m_rowLod = std::vector<BandLod>(1); // per row, over bands [rowBegin, rowEnd)
    std::vector<size_t> m_rowBegin{0, 0};
};

} // namespace memscope
