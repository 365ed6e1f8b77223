#include "attribute/attribution.h"

namespace memscope {

const DeviceAttribution* Attribution::device(int ordinal) const
{
    for (const DeviceAttribution& d : devices)
        if (d.device == ordinal)
            return &d;
    return nullptr;
}

} // namespace memscope
