// libFuzzer harness for the live protocol: the bytes an agent sends over the socket,
// fed to LiveDecoder in pieces (the socket delivers any split), then what the app does
// with a live recording: its snapshot copy, the replay and the summary. A
// LiveProtocolError is the expected way to say no; after one, the decoder must refuse
// further input and keep everything applied before.
#include "io/summary_writer.h"
#include "live/live_decoder.h"
#include "live/live_recording.h"
#include "replay/replay.h"

#include <cstdint>
#include <cstdlib>
#include <span>

using namespace memscope;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    LiveRecording recording;
    LiveDecoder decoder(recording, 1u << 20);
    // Odd lengths arrive in uneven pieces, even ones in one read.
    const bool pieces = size % 2 == 1;
    size_t pos = 0;
    uint64_t messagesBefore = 0;
    try {
        while (pos < size) {
            const size_t chunk = pieces ? std::min<size_t>(size - pos, 1 + (pos * 7919 + size) % 61) : size - pos;
            messagesBefore = recording.stats().messages;
            decoder.feed(std::span<const uint8_t>(data + pos, chunk));
            pos += chunk;
        }
    } catch (const LiveProtocolError&) {
        if (!decoder.failed())
            std::abort(); // an error must close the stream
        if (recording.stats().messages < messagesBefore)
            std::abort(); // and keep what came before
    }
    auto snapshot = recording.snapshot();
    auto replay = replaySnapshot(snapshot);
    for (const DeviceReplay& d : replay->devices)
        (void)d.activeAfter(d.eventCount - 1);
    (void)summaryText(*replay, std::nullopt);
    return 0;
}
