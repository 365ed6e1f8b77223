#include "snapshot/snapshot.h"

namespace memscope {

const DeviceTrace* Snapshot::device(int ordinal) const
{
    for (const DeviceTrace& d : devices)
        if (d.device == ordinal)
            return &d;
    return nullptr;
}

} // namespace memscope
