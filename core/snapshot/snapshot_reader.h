#pragma once

#include "snapshot/snapshot.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>

namespace memscope {

struct LoadOptions {
    // Called with a fraction in [0, 1]; returning false cancels the load (LoadCancelled).
    std::function<bool(double)> progress;
    // Refuse files larger than this (bytes); 0 = no limit.
    uint64_t maxFileBytes = 0;
    // Decode Python protocol-4 trace entries through the builder's fast path (the VM runs
    // whatever it does not take). false: the VM runs everything, for tests that compare.
    bool fastPath = true;
    // Threads for the parse (parallel_parse.h); 0: threadCount() (common/thread_pool.h).
    // Any count gives the same Snapshot.
    unsigned threads = 0;
    // For tests and benchmarks: the parallel parse's chunk size in bytes (0: its own choice,
    // which also leaves files under 1 MiB to one thread), and where to count the batches of
    // entries it committed.
    size_t parallelChunkBytes = 0;
    uint64_t* parallelBatches = nullptr;
};

// Reads a snapshot from a file: a pickle (protocol 0-5, Python's or torch's C++
// pickler), the same gzip-compressed, or its JSON form. The file is memory-mapped.
// Throws LoadError (file, byte offset or key path, what was expected) or LoadCancelled.
std::shared_ptr<const Snapshot> readSnapshotFile(const std::string& path, const LoadOptions& options = {});

// The same from bytes already in memory; `name` is used in error messages.
std::shared_ptr<const Snapshot> readSnapshotBytes(std::span<const uint8_t> bytes, const std::string& name,
                                                  const LoadOptions& options = {});

} // namespace memscope
