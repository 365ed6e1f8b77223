#pragma once

#include "attribute/attribution.h"

#include <cstdint>
#include <string>
#include <vector>

namespace memscope {

/*
 * One device's allocations as columns, in AllocationId order: what `memscope allocations`
 * writes as CSV rows (io/allocations_csv.h names the columns) and what the Python module
 * hands to pandas as arrays. `topFrame[j]` indexes `frameTexts`, which holds each text once
 * (-1: no frame to name); each distinct stack's text is made once. `allocTimeUs[j]` is 0
 * where `hasTime[j]` is 0 (a block alive before the trace; the CSV leaves the field empty).
 * `op[j]` indexes `opTexts` and `module[j]` `moduleTexts` (index 0: "", none): the operation
 * and the nn.Module path of its stack (snapshot/stack_labels.h).
 */
struct AllocationTable {
    std::vector<int64_t> allocEvent;
    std::vector<int64_t> freeRequestedEvent;
    std::vector<int64_t> freeEvent;
    std::vector<int64_t> allocTimeUs;
    std::vector<uint8_t> hasTime;
    std::vector<uint64_t> addr;
    std::vector<int64_t> size;
    std::vector<uint64_t> stream;
    std::vector<uint8_t> category; // Category
    std::vector<uint8_t> phase; // Phase
    std::vector<int32_t> iteration;
    std::vector<int32_t> topFrame;
    std::vector<std::string> frameTexts;
    std::vector<uint32_t> op;
    std::vector<std::string> opTexts;
    std::vector<uint32_t> module;
    std::vector<std::string> moduleTexts;

    size_t rows() const { return allocEvent.size(); }
};

AllocationTable allocationTable(const Attribution& attribution, size_t deviceIndex);

} // namespace memscope
