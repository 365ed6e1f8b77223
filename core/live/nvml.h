#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace memscope {

// A process NVML sees on a GPU, with the device memory it holds there.
struct GpuProcess {
    unsigned pid = 0;
    int gpu = 0;
    std::string gpuName;
    uint64_t usedBytes = 0; // the driver's count: CUDA context, allocator, NCCL, other libraries
    bool usedKnown = true; // false where the driver will not say (containers, permissions)
};

/*
 * NVML, loaded at run time with dlopen (libnvidia-ml.so.1, or MEMSCOPE_NVML_LIBRARY).
 * Without the library or a driver, available() is false, error() says why and every
 * query answers empty: the app then simply shows no GPU process list.
 */
class Nvml {
public:
    static Nvml& instance();

    bool available() const { return m_ok; }
    const std::string& error() const { return m_error; }

    std::vector<GpuProcess> processes();
    // Device memory the process holds on all GPUs, when NVML can see it.
    std::optional<uint64_t> processUsedBytes(unsigned pid);

    Nvml(const Nvml&) = delete;
    Nvml& operator=(const Nvml&) = delete;
    ~Nvml();

private:
    Nvml();
    struct Api;
    Api* m_api = nullptr;
    void* m_handle = nullptr;
    bool m_ok = false;
    std::string m_error;
};

} // namespace memscope
