#pragma once

#include "snapshot/frame_classifier.h"
#include "query/point_report.h"

#include <ostream>

namespace memscope {

/*
 * peak_report.csv: what is live at one point (the peak unless asked otherwise).
 * One header, then a `total` row, one `category` row per category, then one `allocation`
 * row per live allocation, largest first. Columns (empty where they do not apply):
 *
 *   row_type        total | category | allocation
 *   category        category name (PARAMETER, …); empty on the total row
 *   bytes           requested bytes (of the total, the category, or the allocation)
 *   share           bytes / total requested at that point, 0..1
 *   count           live allocations counted in the row
 *   allocation_id   the replay's allocation id
 *   address         block address, hex
 *   alloc_event     event index of its alloc; empty when it existed before the trace
 *   alloc_time_us   time_us of its alloc
 *   free_event      event index of its free_completed; empty when alive at the end
 *   free_time_us    time_us of that free
 *   alloc_phase     phase in which it was allocated
 *   top_user_frame  innermost frame of the user's own code, "train.py:42 forward"
 *   stack           the user frames, innermost first, joined by " < "
 *   op              the operation behind it (FrameClassifier::opText): the innermost library
 *                   Python frame, "sdpa_attention.py:158 sdpa_attention_forward", else the
 *                   autograd node and ATen operator, "AddmmBackward0 > aten::mm"
 *   module          the nn.Module path (FrameClassifier::moduleText), outside in:
 *                   "modeling_qwen2.py:452 > modeling_qwen2.py:388 > …", "(backward) >
 *                   MmBackward0" (the autograd node where the stack has no Python frame);
 *                   empty outside any module
 *
 * The total row also names the point: event in alloc_event, time in alloc_time_us.
 */
void writePeakReportCsv(std::ostream& out, const PointReport& report, const FrameClassifier& frames);

} // namespace memscope
