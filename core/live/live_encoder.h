#pragma once

#include "snapshot/snapshot.h"

#include <cstdint>
#include <string>
#include <vector>

namespace memscope {

/*
 * A Snapshot as the live protocol's messages (docs/PROTOCOL.md), for the native replay
 * sender (`memscope replay-serve`, core/live/replay_server.h): the agent's wire format
 * produced from a file already loaded, at memory speed.
 *
 * Wire ids are the snapshot's pool ids plus one (0 is the predefined empty string / no
 * stack), so the definitions go out once, in id order, before any event. Each append*
 * call adds whole messages to `out`.
 */
class LiveStreamEncoder {
public:
    explicit LiveStreamEncoder(const Snapshot& snapshot);

    void appendHello(std::vector<uint8_t>& out, const std::string& infoJson) const;
    // Every string, frame and stack of the snapshot.
    void appendDefinitions(std::vector<uint8_t>& out) const;
    // EVENTS for rows [first, last) of device index d (one message per 8,192 rows).
    void appendEvents(std::vector<uint8_t>& out, size_t deviceIndex, size_t first, size_t last) const;
    // ANNOTATION messages for annotations [first, last).
    void appendAnnotations(std::vector<uint8_t>& out, size_t first, size_t last) const;
    void appendSettings(std::vector<uint8_t>& out) const;
    void appendSegments(std::vector<uint8_t>& out) const;
    static void appendJson(std::vector<uint8_t>& out, uint8_t type, const std::string& json);

private:
    const Snapshot& m_snapshot;
};

} // namespace memscope
