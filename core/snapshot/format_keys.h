#pragma once

#include "snapshot/segment.h"

#include <array>
#include <cstdint>
#include <string_view>
#include <utility>

namespace memscope::format {

/*
 * torch's snapshot format, named once: the keys of the top-level dict, of a trace entry,
 * of a frame, of a segment, of a block and of a PyTorch 2.0 block history entry, and the
 * values with a meaning (block states, pool type, annotation stage). The pickle VM's sink
 * (SnapshotBuilder), its protocol-4 fast path and the JSON reader all decode through the
 * field enums here, so a key torch adds or renames is taught in one place.
 * Action names live with Action (snapshot/action.h).
 * See /work/shared/docs/snapshot-format.md for what each key means and since when.
 */

// Top level.
enum class TopField : uint8_t { None, Segments, DeviceTraces, AllocatorSettings, ExternalAnnotations, HostSegments, HostTraces };
inline constexpr std::array<std::pair<std::string_view, TopField>, 6> kTopFields{{
    {"segments", TopField::Segments},
    {"device_traces", TopField::DeviceTraces},
    {"allocator_settings", TopField::AllocatorSettings},
    {"external_annotations", TopField::ExternalAnnotations},
    {"host_segments", TopField::HostSegments},
    {"host_traces", TopField::HostTraces},
}};

// A trace entry (one element of device_traces[d]).
enum class EntryField : uint8_t {
    None,
    Action,
    Addr,
    Size,
    Stream,
    TimeUs,
    Frames,
    UserMetadata,
    CompileContext,
    DeviceFree,
    ForwardFrames,
    PoolId,
};
inline constexpr std::array<std::pair<std::string_view, EntryField>, 11> kEntryFields{{
    {"action", EntryField::Action},
    {"addr", EntryField::Addr},
    {"size", EntryField::Size},
    {"stream", EntryField::Stream},
    {"time_us", EntryField::TimeUs},
    {"frames", EntryField::Frames},
    {"user_metadata", EntryField::UserMetadata},
    {"compile_context", EntryField::CompileContext},
    {"device_free", EntryField::DeviceFree},
    {"forward_frames", EntryField::ForwardFrames},
    {"pool_id", EntryField::PoolId},
}};

// A stack frame: {filename, line, name}, plus the FX node fields of torch.compile frames.
enum class FrameField : uint8_t { None, Filename, Name, Line, FxNodeOp, FxNodeName, FxNodeTarget, FxOriginalTrace };
inline constexpr std::array<std::pair<std::string_view, FrameField>, 7> kFrameFields{{
    {"filename", FrameField::Filename},
    {"name", FrameField::Name},
    {"line", FrameField::Line},
    {"fx_node_op", FrameField::FxNodeOp},
    {"fx_node_name", FrameField::FxNodeName},
    {"fx_node_target", FrameField::FxNodeTarget},
    {"fx_original_trace", FrameField::FxOriginalTrace},
}};

// A segment (one cudaMalloc or expandable segment) in `segments` / `host_segments`.
enum class SegmentField : uint8_t {
    None,
    Device,
    Address,
    TotalSize,
    AllocatedSize,
    ActiveSize,
    RequestedSize,
    Stream,
    SegmentType,
    SegmentPoolId,
    IsExpandable,
    Frames,
    Blocks,
};
inline constexpr std::array<std::pair<std::string_view, SegmentField>, 12> kSegmentFields{{
    {"device", SegmentField::Device},
    {"address", SegmentField::Address},
    {"total_size", SegmentField::TotalSize},
    {"allocated_size", SegmentField::AllocatedSize},
    {"active_size", SegmentField::ActiveSize},
    {"requested_size", SegmentField::RequestedSize},
    {"stream", SegmentField::Stream},
    {"segment_type", SegmentField::SegmentType},
    {"segment_pool_id", SegmentField::SegmentPoolId},
    {"is_expandable", SegmentField::IsExpandable},
    {"frames", SegmentField::Frames},
    {"blocks", SegmentField::Blocks},
}};

// A block of a segment. PyTorch 2.0 blocks have no address (they tile the segment in
// order) and carry `history` instead of frames.
enum class BlockField : uint8_t { None, Address, Size, RequestedSize, State, Frames, History };
inline constexpr std::array<std::pair<std::string_view, BlockField>, 6> kBlockFields{{
    {"address", BlockField::Address},
    {"size", BlockField::Size},
    {"requested_size", BlockField::RequestedSize},
    {"state", BlockField::State},
    {"frames", BlockField::Frames},
    {"history", BlockField::History},
}};

// One entry of a PyTorch 2.0 block's `history`: {addr, real_size, frames}; the newest is last.
enum class HistoryField : uint8_t { None, Addr, RealSize, Frames };
inline constexpr std::array<std::pair<std::string_view, HistoryField>, 3> kHistoryFields{{
    {"addr", HistoryField::Addr},
    {"real_size", HistoryField::RealSize},
    {"frames", HistoryField::Frames},
}};

// One entry of `external_annotations`.
enum class AnnotationField : uint8_t { None, Name, Stage, Device, TimeUs };
inline constexpr std::array<std::pair<std::string_view, AnnotationField>, 4> kAnnotationFields{{
    {"name", AnnotationField::Name},
    {"stage", AnnotationField::Stage},
    {"device", AnnotationField::Device},
    {"time_us", AnnotationField::TimeUs},
}};

// The field a key names, or None: unknown keys are skipped, never refused.
template <class Field, size_t N>
constexpr Field fieldOf(const std::array<std::pair<std::string_view, Field>, N>& table, std::string_view key)
{
    for (const auto& [name, field] : table)
        if (name == key)
            return field;
    return Field::None;
}

// The name of a field (for error paths).
template <class Field, size_t N>
constexpr std::string_view nameOf(const std::array<std::pair<std::string_view, Field>, N>& table, Field f)
{
    for (const auto& [name, field] : table)
        if (field == f)
            return name;
    return {};
}

// Values with a meaning.
inline constexpr std::string_view kSmallPool = "small"; // segment_type of the small-block pool
inline constexpr std::string_view kStageEnd = "END"; // annotation stage; anything else is a start
inline constexpr std::string_view kTraceOverflowed = "trace_alloc_overflowed";
inline constexpr std::string_view kTraceMaxEntries = "trace_alloc_max_entries";

constexpr BlockState blockStateFromName(std::string_view s)
{
    return s == "active_allocated"      ? BlockState::ActiveAllocated
           : s == "active_pending_free" ? BlockState::ActivePendingFree
           : s == "inactive"            ? BlockState::Inactive
                                        : BlockState::Unknown;
}

// The device ordinal that `host_segments`/`host_traces` (pinned host memory) are kept under.
inline constexpr int kHostDevice = -1;

// A Git LFS pointer file begins with this line, not with a pickle.
inline constexpr std::string_view kLfsPointerPrefix = "version https://git-lfs";

// A frame's line number that is no line: torch.compile/Inductor frames carry 2^64 - 1 (-1 as
// an unsigned 64-bit value). Lines outside 1..INT32_MAX are kept as 0: unknown.
constexpr bool isKnownLine(int64_t line) { return line >= 0 && line <= INT32_MAX; }

} // namespace memscope::format
