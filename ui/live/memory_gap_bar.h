#pragma once

#include <QWidget>

#include <cstdint>
#include <optional>

namespace memscope {

/*
 * Two bars side by side: what PyTorch's caching allocator has reserved, and what the
 * driver (NVML) says the process holds on the GPU. The part of the second bar above the
 * first is hatched and labelled: memory the allocator cannot see (the CUDA context,
 * NCCL buffers, cuBLAS/cuDNN workspaces, other libraries).
 */
class MemoryGapBar : public QWidget {
    Q_OBJECT
public:
    explicit MemoryGapBar(QWidget* parent = nullptr);

    void setValues(int64_t reservedBytes, std::optional<uint64_t> deviceInUseBytes, const QString& note);
    QString gapText() const; // what the label says (empty without NVML)
    QSize sizeHint() const override { return {230, 300}; }
    QSize minimumSizeHint() const override { return {180, 200}; }

protected:
    void paintEvent(QPaintEvent* event) override;

private:
    int64_t m_reserved = 0;
    std::optional<uint64_t> m_inUse;
    QString m_note;
};

} // namespace memscope
