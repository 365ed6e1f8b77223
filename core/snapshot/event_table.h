#pragma once

#include "common/strong_id.h"
#include "snapshot/action.h"
#include "snapshot/dict_column.h"

#include <cstdint>
#include <unordered_map>
#include <vector>

namespace memscope {

// A private memory pool (CUDA graph or MemPool): torch's MempoolId_t; (0, 0) is the default pool.
struct PoolId {
    int64_t first = 0;
    int64_t second = 0;
    bool isDefault() const { return first == 0 && second == 0; }
    bool operator==(const PoolId&) const = default;
};

// One device's trace, stored by column: row i is the i-th entry of
// device_traces[device], in file order (the order is the truth; time_us can tie).
struct EventTable {
    std::vector<Action> action;
    std::vector<uint64_t> addr;
    std::vector<uint64_t> size;
    DictColumn<uint64_t> stream; // raw cudaStream_t; a byte per row while few distinct
    std::vector<int64_t> timeUs; // 0 where the file has no time_us (PyTorch < 2.2)
    std::vector<StackId> stack; // invalid where no frames were recorded
    DictColumn<StringId> userMetadata;
    DictColumn<StringId> compileContext;
    std::unordered_map<int64_t, uint64_t> deviceFree; // row -> device_free, for `oom` rows
    // Sparse columns, in row order: only rows that carry the key (newer recordings).
    std::vector<std::pair<uint32_t, PoolId>> pool; // rows in a private pool (pool_id)
    std::vector<std::pair<uint32_t, StackId>> forwardFrames; // backward rows: their forward's frames
    bool hasTime = false;

    size_t count() const { return action.size(); }
    PoolId poolOf(size_t row) const;
    StackId forwardFramesOf(size_t row) const; // invalid where none
    void reserve(size_t n);
    void push(Action a, uint64_t address, uint64_t bytes, uint64_t streamId, int64_t time, StackId stackId, StringId metadata,
              StringId context);
};

} // namespace memscope
