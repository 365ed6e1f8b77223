#include "ui/document/band_set.h"

#include <algorithm>

namespace memscope {

BandSet::BandSet(std::vector<Band> bands, int rows) : m_rows(std::max(1, rows))
{
    for (Band& b : bands)
        b.row = std::clamp(b.row, 0, m_rows - 1);
    std::stable_sort(bands.begin(), bands.end(),
                     [](const Band& a, const Band& b) { return a.row != b.row ? a.row < b.row : a.x0 < b.x0; });
    m_bands = std::move(bands);
    m_rowBegin.assign(static_cast<size_t>(m_rows) + 1, m_bands.size());
    for (size_t i = m_bands.size(); i-- > 0;)
        m_rowBegin[static_cast<size_t>(m_bands[i].row)] = i;
    for (size_t r = static_cast<size_t>(m_rows); r-- > 0;)
        m_rowBegin[r] = std::min(m_rowBegin[r], m_rowBegin[r + 1]);
    m_rowLod.clear();
    m_rowLod.reserve(static_cast<size_t>(m_rows));
    for (int r = 0; r < m_rows; ++r) {
        std::vector<BandLod::Input> lod;
        lod.reserve(rowEnd(r) - rowBegin(r));
        for (size_t i = rowBegin(r); i < rowEnd(r); ++i)
            lod.push_back({m_bands[i].x0, m_bands[i].x1, m_bands[i].style});
        m_rowLod.emplace_back(std::move(lod));
    }
}

size_t BandSet::firstReaching(int row, double lower) const
{
    if (row < 0 || row >= m_rows)
        return m_bands.size();
    const std::vector<double>& maxX1 = m_rowLod[static_cast<size_t>(row)].maxX1();
    return rowBegin(row) + static_cast<size_t>(std::lower_bound(maxX1.begin(), maxX1.end(), lower) - maxX1.begin());
}

std::vector<int64_t> BandSet::columnBands(int row, double lower, double upper, int columns) const
{
    if (row < 0 || row >= m_rows)
        return std::vector<int64_t>(static_cast<size_t>(std::max(columns, 0)), BandLod::kNone);
    const size_t b = rowBegin(row);
    std::vector<int64_t> out = m_rowLod[static_cast<size_t>(row)].columns(lower, upper, columns);
    for (int64_t& i : out)
        if (i != BandLod::kNone)
            i += static_cast<int64_t>(b);
    return out;
}

} // namespace memscope
