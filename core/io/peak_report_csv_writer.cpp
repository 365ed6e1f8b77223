#include "io/peak_report_csv_writer.h"
#include "common/format_number.h"

#include "io/csv_field.h"

#include <cstdio>
#include <string>

namespace memscope {

namespace {

std::string share(int64_t bytes, int64_t total)
{
    return formatFixed(total > 0 ? static_cast<double>(bytes) / static_cast<double>(total) : 0.0, 6);
}

std::string hex(uint64_t v)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
    return buf;
}

std::string optionalInt(int64_t v, bool present) { return present ? std::to_string(v) : std::string(); }

} // namespace

void writePeakReportCsv(std::ostream& out, const PointReport& r, const FrameClassifier& frames)
{
    out << "row_type,category,bytes,share,count,allocation_id,address,alloc_event,alloc_time_us,free_event,"
           "free_time_us,alloc_phase,top_user_frame,stack,op,module\n";
    out << "total,," << r.requested << ',' << share(r.requested, r.requested) << ',' << r.live.size() << ",,," << r.event << ','
        << r.timeUs << ",,," << phaseName(r.phase) << ",,,,\n";
    for (Category c : kAllCategories) {
        const size_t k = static_cast<size_t>(c);
        out << "category," << categoryName(c) << ',' << r.byCategory[k] << ',' << share(r.byCategory[k], r.requested) << ','
            << r.countByCategory[k] << ",,,,,,,,,,,\n";
    }
    for (const ActiveAllocation& l : r.live) {
        out << "allocation," << categoryName(l.category) << ',' << l.size << ',' << share(l.size, r.requested) << ",1,"
            << l.id.value << ',' << hex(l.addr) << ',' << optionalInt(l.allocEvent, l.allocEvent >= 0) << ','
            << optionalInt(l.allocTimeUs, l.allocEvent >= 0) << ',' << optionalInt(l.freeEvent, l.freeEvent >= 0) << ','
            << optionalInt(l.freeTimeUs, l.freeEvent >= 0) << ',' << phaseName(l.phase) << ','
            << csvField(frames.frameText(frames.topUserFrame(l.stack))) << ',' << csvField(frames.stackSummary(l.stack, 8)) << ','
            << csvField(frames.opText(l.stack)) << ',' << csvField(frames.moduleText(l.stack)) << '\n';
    }
}

} // namespace memscope
