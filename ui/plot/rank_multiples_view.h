#pragma once

#include "job/rank_set.h"

#include <QWidget>

#include <memory>
#include <vector>

class QCustomPlot;

namespace memscope {

/*
 * Each rank's requested bytes as small multiples, one small plot a rank in a grid sharing one
 * x range and one y range, aligned by wall clock (seconds from the job's first event) or by
 * iteration (iterationPosition(): step k starts at x = k on every rank). A rank's summary
 * timeline (≤ 256 columns of min/max) is reduced again to one min/max column per pixel of
 * its plot and drawn as a band between the two. At most kMaxPlots are drawn: the rank shown
 * first, then the highest peaks. A click on a plot emits rankActivated(its index in ranks()).
 */
class RankMultiplesView : public QWidget {
    Q_OBJECT
public:
    enum class Alignment { WallClock, Iteration };
    static constexpr int kMaxPlots = 16;

    explicit RankMultiplesView(QWidget* parent = nullptr);
    void setRankSet(std::shared_ptr<const RankSet> set);
    void setAlignment(Alignment alignment);
    Alignment alignment() const { return m_alignment; }

    // The ranks drawn, as indexes into ranks(), in grid order.
    const std::vector<size_t>& shownRanks() const { return m_shown; }
    QCustomPlot* plot() const { return m_plot; }
    // Points drawn for plot k (upper line): at most one per pixel of its width.
    int pointCount(size_t k) const;

signals:
    void rankActivated(int index);

protected:
    void resizeEvent(QResizeEvent* event) override;

private:
    void rebuild();
    double xOf(const RankSummary& s, int64_t timeUs) const;

    QCustomPlot* m_plot;
    std::shared_ptr<const RankSet> m_set;
    Alignment m_alignment = Alignment::WallClock;
    std::vector<size_t> m_shown;
    int64_t m_jobStartUs = 0;
    int m_builtWidth = -1;
};

} // namespace memscope
