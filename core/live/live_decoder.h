#pragma once

#include "live/live_recording.h"

#include <cstdint>
#include <span>
#include <vector>

namespace memscope {

/*
 * Splits a byte stream from an agent into messages and applies them to a recording.
 *
 * Bytes arrive in any pieces; a message is applied once all of it is here. A length
 * of 0 or over the limit, or a message the recording rejects, throws LiveProtocolError
 * naming the stream offset; the decoder then refuses further input (the connection is
 * to be closed) and the recording keeps every message applied before.
 */
class LiveDecoder {
public:
    explicit LiveDecoder(LiveRecording& recording, uint32_t maxMessage = 16u << 20);

    void feed(std::span<const uint8_t> bytes);

    uint64_t offset() const { return m_offset; } // stream bytes consumed by whole messages
    size_t pendingBytes() const { return m_buffer.size() - m_start; } // a message still incomplete
    bool failed() const { return m_failed; }

private:
    LiveRecording& m_recording;
    uint32_t m_maxMessage;
    std::vector<uint8_t> m_buffer;
    size_t m_start = 0;
    uint64_t m_offset = 0;
    bool m_failed = false;
};

} // namespace memscope
