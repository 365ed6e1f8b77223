#include "live/live_decoder.h"

#include <cstring>

namespace memscope {

LiveDecoder::LiveDecoder(LiveRecording& recording, uint32_t maxMessage) : m_recording(recording), m_maxMessage(maxMessage) { }

void LiveDecoder::feed(std::span<const uint8_t> bytes)
{
    if (m_failed)
        throw LiveProtocolError("the stream already failed at offset " + std::to_string(m_offset));
    m_buffer.insert(m_buffer.end(), bytes.begin(), bytes.end());
    try {
        while (m_buffer.size() - m_start >= 4) {
            uint32_t length;
            std::memcpy(&length, m_buffer.data() + m_start, 4);
            if (length == 0 || length > m_maxMessage)
                throw LiveProtocolError("message length " + std::to_string(length) + " is outside 1.." +
                                        std::to_string(m_maxMessage));
            if (m_buffer.size() - m_start - 4 < length)
                break;
            const uint8_t type = m_buffer[m_start + 4];
            m_recording.apply(type, std::span<const uint8_t>(m_buffer.data() + m_start + 5, length - 1));
            m_start += 4 + size_t(length);
            m_offset += 4 + uint64_t(length);
        }
    } catch (const LiveRefused&) {
        m_failed = true;
        throw; // nothing was streamed: the offset says nothing
    } catch (const LiveProtocolError& e) {
        m_failed = true;
        throw LiveProtocolError("stream offset " + std::to_string(m_offset) + ": " + e.what());
    }
    if (m_start > (1u << 20) || m_start == m_buffer.size()) {
        m_buffer.erase(m_buffer.begin(), m_buffer.begin() + static_cast<std::ptrdiff_t>(m_start));
        m_start = 0;
    }
}

} // namespace memscope
