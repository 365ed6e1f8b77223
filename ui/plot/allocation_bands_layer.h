#pragma once

#include "ui/document/device_model.h"

#include <QImage>
#include <QPointer>
#include <qcustomplot.h>

#include <array>
#include <vector>

namespace memscope {

/*
 * Every allocation of a device as a band stacked by lifetime, like PyTorch's "Active
 * Memory Timeline": at any time the live allocations are stacked in the order they were
 * made, so a band drops when one below it is freed. Nothing is capped: the layer paints
 * one column per device pixel. A column shows the state at its bucket's highest event
 * (from the min/max pyramid), stacks that live set bottom-up and gives each pixel row
 * the colour of the allocation covering most of it. Cost per frame: columns × (live set
 * + replay checkpoint distance), independent of the trace length.
 */
class AllocationBandsLayer : public QCPLayerable {
    Q_OBJECT
public:
    enum class ColorMode { Category, Allocation };

    AllocationBandsLayer(QCustomPlot* plot, QCPAxisRect* rect);

    void setModel(const DeviceModel* model, XAxisMode mode);
    void setColorMode(ColorMode mode);
    void setMatches(std::vector<uint8_t> matches); // per allocation; empty: no search
    void setSelected(AllocationId id);
    const std::vector<uint8_t>& matches() const { return m_matches; }
    void setDark(bool dark);
    void invalidate() { m_valid = false; }

    // The allocation drawn at a widget position, if any.
    AllocationId allocationAt(const QPointF& pos) const;
    // The event whose live set a widget x shows.
    int64_t eventAtPixel(double x) const;
    double lastRenderMs() const { return m_lastRenderMs; }
    const QImage& image() const { return m_image; }

protected:
    void applyDefaultAntialiasingHint(QCPPainter* painter) const override;
    void draw(QCPPainter* painter) override;
    QRect clipRect() const override;

private:
    void render(const QRect& area, double dpr);
    void buildPalette();
    QRgb colorOf(AllocationId id) const;

    QPointer<QCPAxisRect> m_rect;
    const DeviceModel* m_model = nullptr;
    XAxisMode m_mode = XAxisMode::Time;
    ColorMode m_colorMode = ColorMode::Category;
    std::vector<uint8_t> m_matches;
    AllocationId m_selected;
    bool m_dark = false;

    bool m_valid = false;
    QImage m_image;
    QRect m_area;
    double m_dpr = 1;
    QCPRange m_x, m_y;
    std::vector<int64_t> m_columnEvent;
    // Every colour an allocation can get, so colouring needs no per-allocation cache (one
    // would be tens of MB to zero at 10M events). Rebuilt when the colouring changes.
    static constexpr int kShades = 5;
    static constexpr int kGreys = 8;
    static constexpr int kHues = 360;
    static constexpr int kSaturations = 60;
    bool m_paletteValid = false;
    std::array<QRgb, kCategoryCount * kShades> m_categoryShades{};
    std::array<QRgb, kGreys> m_greys{};
    std::vector<QRgb> m_hsv; // kHues x kSaturations, in Allocation mode only
    double m_lastRenderMs = 0;
};

} // namespace memscope
