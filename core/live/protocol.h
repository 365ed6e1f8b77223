#pragma once

#include <cstddef>
#include <cstdint>

// The memscope live protocol, version 1: the constants docs/PROTOCOL.md defines.
// Every message is `u32 length` (little-endian; the bytes that follow: type + payload),
// `u8 type`, payload. agent/memscope_agent/protocol.py is the agent's side.
namespace memscope::live {

inline constexpr char kMagic[4] = {'M', 'S', 'C', 'P'};
inline constexpr uint16_t kVersionMajor = 1;
inline constexpr uint16_t kVersionMinor = 1; // 1.1: HELLO may name a job and a rank
inline constexpr uint32_t kMaxMessage = 16u << 20; // bytes after the length field

enum class MessageType : uint8_t {
    Hello = 1,
    String = 2,
    Frame = 3,
    Stack = 4,
    Events = 5,
    Annotation = 6,
    Settings = 7,
    Segments = 8,
    Status = 9,
    End = 10,
    Truncated = 11,
    Error = 12,
    ClientHello = 0x81,
};

inline constexpr size_t kEventRecordSize = 48;
inline constexpr size_t kEventsHeadSize = 8;
inline constexpr size_t kAnnotationSize = 16;
inline constexpr size_t kSegmentRecordSize = 80;
inline constexpr size_t kBlockRecordSize = 32;
inline constexpr uint8_t kEventHasTime = 1;
inline constexpr uint8_t kSegmentLarge = 1;
inline constexpr uint8_t kSegmentExpandable = 2;
inline constexpr uint8_t kActionUnknown = 255;
inline constexpr uint32_t kMaxStackFrames = 1u << 16;
inline constexpr uint32_t kMaxDevices = 1024;

} // namespace memscope::live
