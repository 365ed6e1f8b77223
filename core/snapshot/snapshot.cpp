#include "snapshot/snapshot.h"

#include "snapshot/device_name.h"
#include "snapshot/format_keys.h"

namespace memscope {

std::string deviceName(int ordinal)
{
    return ordinal == format::kHostDevice ? std::string("host") : "device " + std::to_string(ordinal);
}

const DeviceTrace* Snapshot::device(int ordinal) const
{
    for (const DeviceTrace& d : devices)
        if (d.device == ordinal)
            return &d;
    return nullptr;
}

} // namespace memscope
