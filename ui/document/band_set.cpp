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
    m_lod.resize(m_bands.size());
    m_maxX1.resize(m_bands.size());
    m_rowBegin.assign(static_cast<size_t>(m_rows) + 1, m_bands.size());
    for (size_t i = m_bands.size(); i-- > 0;)
        m_rowBegin[static_cast<size_t>(m_bands[i].row)] = i;
    for (size_t r = static_cast<size_t>(m_rows); r-- > 0;)
        m_rowBegin[r] = std::min(m_rowBegin[r], m_rowBegin[r + 1]);
    for (size_t i = 0; i < m_bands.size(); ++i) {
        const Band& b = m_bands[i];
        m_lod[i] = {b.x0, b.x1, b.style};
        const bool rowStart = i == 0 || m_bands[i - 1].row != b.row;
        m_maxX1[i] = rowStart ? b.x1 : std::max(m_maxX1[i - 1], b.x1);
    }
}

size_t BandSet::firstReaching(int row, double lower) const
{
    if (row < 0 || row >= m_rows)
        return m_bands.size();
    const auto b = m_maxX1.begin() + static_cast<std::ptrdiff_t>(rowBegin(row));
    const auto e = m_maxX1.begin() + static_cast<std::ptrdiff_t>(rowEnd(row));
    return static_cast<size_t>(std::lower_bound(b, e, lower) - m_maxX1.begin());
}

std::vector<int64_t> BandSet::columnBands(int row, double lower, double upper, int columns) const
{
    if (row < 0 || row >= m_rows)
        return std::vector<int64_t>(static_cast<size_t>(std::max(columns, 0)), BandLod::kNone);
    const size_t b = rowBegin(row);
    const size_t e = rowEnd(row);
    std::vector<int64_t> out = BandLod::columns(std::span(m_lod).subspan(b, e - b), std::span(m_maxX1).subspan(b, e - b), lower,
                                                upper, columns);
    for (int64_t& i : out)
        if (i != BandLod::kNone)
            i += static_cast<int64_t>(b);
    return out;
}

} // namespace memscope
