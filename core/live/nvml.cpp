#include "live/nvml.h"

#include <cstdlib>
#include <dlfcn.h>
#include <mutex>

namespace memscope {

namespace {
using nvmlReturn_t = int;
using nvmlDevice_t = void*;
constexpr nvmlReturn_t kSuccess = 0;
constexpr nvmlReturn_t kInsufficientSize = 7;

struct ProcessInfoV1 {
    unsigned int pid;
    unsigned long long usedGpuMemory;
};
struct ProcessInfoV2 {
    unsigned int pid;
    unsigned long long usedGpuMemory;
    unsigned int gpuInstanceId;
    unsigned int computeInstanceId;
};
std::mutex g_mutex;

GpuProcess entry(unsigned pid, unsigned gpu, const char* name, unsigned long long used)
{
    GpuProcess p;
    p.pid = pid;
    p.gpu = static_cast<int>(gpu);
    p.gpuName = name;
    p.usedKnown = used != ~0ull;
    p.usedBytes = p.usedKnown ? used : 0;
    return p;
}
} // namespace

struct Nvml::Api {
    nvmlReturn_t (*init)() = nullptr;
    nvmlReturn_t (*shutdown)() = nullptr;
    nvmlReturn_t (*deviceCount)(unsigned int*) = nullptr;
    nvmlReturn_t (*deviceByIndex)(unsigned int, nvmlDevice_t*) = nullptr;
    nvmlReturn_t (*deviceName)(nvmlDevice_t, char*, unsigned int) = nullptr;
    nvmlReturn_t (*processesV2)(nvmlDevice_t, unsigned int*, ProcessInfoV2*) = nullptr; // _v3 or _v2
    nvmlReturn_t (*processesV1)(nvmlDevice_t, unsigned int*, ProcessInfoV1*) = nullptr;
};

Nvml& Nvml::instance()
{
    static Nvml nvml;
    return nvml;
}

Nvml::Nvml()
{
    const char* override = std::getenv("MEMSCOPE_NVML_LIBRARY");
    const char* name = override && *override ? override : "libnvidia-ml.so.1";
    m_handle = ::dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!m_handle) {
        const char* e = ::dlerror();
        m_error = std::string("NVML not loaded: ") + (e ? e : name);
        return;
    }
    m_api = new Api;
    auto sym = [&](const char* n) { return ::dlsym(m_handle, n); };
    m_api->init = reinterpret_cast<decltype(m_api->init)>(sym("nvmlInit_v2"));
    m_api->shutdown = reinterpret_cast<decltype(m_api->shutdown)>(sym("nvmlShutdown"));
    m_api->deviceCount = reinterpret_cast<decltype(m_api->deviceCount)>(sym("nvmlDeviceGetCount_v2"));
    m_api->deviceByIndex = reinterpret_cast<decltype(m_api->deviceByIndex)>(sym("nvmlDeviceGetHandleByIndex_v2"));
    m_api->deviceName = reinterpret_cast<decltype(m_api->deviceName)>(sym("nvmlDeviceGetName"));
    m_api->processesV2 = reinterpret_cast<decltype(m_api->processesV2)>(sym("nvmlDeviceGetComputeRunningProcesses_v3"));
    if (!m_api->processesV2)
        m_api->processesV2 = reinterpret_cast<decltype(m_api->processesV2)>(sym("nvmlDeviceGetComputeRunningProcesses_v2"));
    if (!m_api->processesV2)
        m_api->processesV1 = reinterpret_cast<decltype(m_api->processesV1)>(sym("nvmlDeviceGetComputeRunningProcesses"));
    if (!m_api->init || !m_api->deviceCount || !m_api->deviceByIndex || (!m_api->processesV2 && !m_api->processesV1)) {
        m_error = std::string("NVML library ") + name + " lacks the functions memscope needs";
        return;
    }
    if (const nvmlReturn_t rc = m_api->init(); rc != kSuccess) {
        m_error = "nvmlInit failed (error " + std::to_string(rc) + "): no NVIDIA driver?";
        return;
    }
    m_ok = true;
}

Nvml::~Nvml()
{
    if (m_ok && m_api->shutdown)
        m_api->shutdown();
    delete m_api;
    // The library stays loaded: unloading a driver library at exit gains nothing.
}

std::vector<GpuProcess> Nvml::processes()
{
    std::vector<GpuProcess> out;
    if (!m_ok)
        return out;
    std::lock_guard<std::mutex> lock(g_mutex);
    unsigned int count = 0;
    if (m_api->deviceCount(&count) != kSuccess)
        return out;
    for (unsigned int d = 0; d < count && d < 64; ++d) {
        nvmlDevice_t dev = nullptr;
        if (m_api->deviceByIndex(d, &dev) != kSuccess)
            continue;
        char name[96] = {};
        if (m_api->deviceName)
            m_api->deviceName(dev, name, sizeof name);
        unsigned int n = 64;
        for (int attempt = 0; attempt < 4; ++attempt) {
            nvmlReturn_t rc;
            std::vector<GpuProcess> found;
            if (m_api->processesV2) {
                std::vector<ProcessInfoV2> infos(n);
                unsigned int got = n;
                rc = m_api->processesV2(dev, &got, infos.data());
                if (rc == kSuccess)
                    for (unsigned int i = 0; i < got && i < n; ++i)
                        found.push_back(entry(infos[i].pid, d, name, infos[i].usedGpuMemory));
                n = got;
            } else {
                std::vector<ProcessInfoV1> infos(n);
                unsigned int got = n;
                rc = m_api->processesV1(dev, &got, infos.data());
                if (rc == kSuccess)
                    for (unsigned int i = 0; i < got && i < n; ++i)
                        found.push_back(entry(infos[i].pid, d, name, infos[i].usedGpuMemory));
                n = got;
            }
            if (rc == kInsufficientSize) {
                n = n * 2 + 16;
                continue;
            }
            if (rc == kSuccess)
                out.insert(out.end(), found.begin(), found.end());
            break;
        }
    }
    return out;
}

std::optional<uint64_t> Nvml::processUsedBytes(unsigned pid)
{
    std::optional<uint64_t> total;
    for (const GpuProcess& p : processes())
        if (p.pid == pid && p.usedKnown)
            total = total.value_or(0) + p.usedBytes;
    return total;
}

} // namespace memscope
