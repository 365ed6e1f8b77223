#pragma once

#include "pickle/pickle_sink.h"
#include "snapshot/snapshot.h"

#include <string>
#include <vector>

namespace memscope {

/*
 * Builds a Snapshot straight from the pickle VM's stream of containers.
 *
 * Containers arrive bottom-up: a trace entry dict is complete before it is appended to
 * its device's list, and that list is complete before the top-level dict names it. So
 * entries are recognised by shape, not by position:
 *
 *   dict with "action"                 -> one row of an EventTable, the dict recycled
 *   dict with filename/name/line       -> FrameId (cached on the node, shared via memo)
 *   list of frame dicts under "frames" -> StackId (cached on the node)
 *   everything else (segments, blocks, annotations, settings) stays a small generic
 *   node until finish() walks the top-level dict.
 *
 * The memory held per trace entry while loading is its columns and nothing else.
 */
class SnapshotBuilder : public PickleSink {
public:
    SnapshotBuilder(Snapshot& snapshot, std::string fileName);

    PickleValue newContainer(ContainerKind kind, int64_t offset) override;
    PickleValue newTuple(std::span<const PickleValue> items, int64_t offset) override;
    void append(PickleValue container, std::span<const PickleValue> items, int64_t offset) override;
    void setItems(PickleValue dict, std::span<const PickleValue> keyValues, int64_t offset) override;
    void checkReference(PickleValue value, int64_t offset) override;
    void finish(PickleValue root, int64_t offset) override;

private:
    struct Node {
        ContainerKind kind = ContainerKind::List;
        uint32_t generation = 0;
        int32_t cache = -1; // FrameId / StackId once converted
        int32_t table = -1; // index into m_tables for a list of trace entries
        std::vector<PickleValue> items; // dict: key, value, key, value, ...
    };

    Node& node(PickleValue v, int64_t offset);
    const PickleValue* lookup(const Node& dict, StringId key) const;
    bool isEventDict(const Node& n) const;
    void appendEvent(Node& list, PickleValue eventValue, int64_t offset);
    void recycle(uint32_t index);

    StackId toStack(PickleValue v, int64_t offset, const std::string& path);
    FrameId toFrame(PickleValue v, int64_t offset, const std::string& path);
    [[noreturn]] void typeError(int64_t offset, const std::string& path, const char* expected, PickleValue got) const;
    uint64_t toU64(PickleValue v, int64_t offset, const std::string& path);
    int64_t toI64(PickleValue v, int64_t offset, const std::string& path);
    StringId toStr(PickleValue v, int64_t offset, const std::string& path);
    std::string toText(PickleValue v);

    void readSegments(PickleValue list, int64_t offset);
    void readBlockHistory(const Node& block, Segment& seg, int64_t offset, const std::string& path);
    void readTraces(PickleValue list, int64_t offset);
    void readAnnotations(PickleValue list, int64_t offset);
    void readSettings(PickleValue dict, int64_t offset, const std::string& prefix);

    Snapshot& m_snapshot;
    std::string m_fileName;
    std::vector<Node> m_nodes;
    std::vector<uint32_t> m_free;
    std::vector<EventTable> m_tables;
    std::vector<FrameId> m_frameScratch;
    // Per table, its first bad trace entry, reported by readTraces once the table's device
    // is known: a list of entries is complete before device_traces names it.
    struct TableError {
        std::string suffix; // "[row].key"
        std::string message;
        int64_t offset = -1;
        bool set = false;
    };
    std::vector<TableError> m_tableErrors;

    struct Keys {
        StringId action, addr, size, stream, timeUs, frames, compileContext, userMetadata, deviceFree;
        StringId filename, name, line;
        StringId segments, deviceTraces, allocatorSettings, externalAnnotations;
        StringId device, address, totalSize, allocatedSize, activeSize, requestedSize, segmentType, segmentPoolId,
            isExpandable, blocks, state, history, realSize, stage;
    } m_k;
};

} // namespace memscope
