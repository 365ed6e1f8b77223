#include "snapshot/snapshot_reader.h"

#include "common/load_error.h"
#include "common/thread_pool.h"
#include "pickle/pickle_reader.h"
#include "snapshot/format_keys.h"
#include "snapshot/json_snapshot_reader.h"
#include "snapshot/mapped_file.h"
#include "snapshot/snapshot_builder.h"
#include "snapshot/snapshot_limits.h"

#include <vector>
#include <zlib.h>

namespace memscope {

namespace {

constexpr uint64_t kMaxInflatedBytes = uint64_t(64) << 30;

std::vector<uint8_t> inflateGzip(std::span<const uint8_t> in, const std::string& name, const LoadOptions& options)
{
    z_stream zs{};
    if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK)
        throw LoadError(name, 0, {}, "cannot start gzip decompression");
    std::vector<uint8_t> out;
    out.resize(std::max<size_t>(in.size() * 4, 1 << 16));
    zs.next_in = const_cast<Bytef*>(in.data());
    zs.avail_in = static_cast<uInt>(std::min<size_t>(in.size(), UINT32_MAX));
    size_t fed = zs.avail_in;
    size_t produced = 0;
    // Real snapshots compress 10-30x; deflate can reach ~1000x. Past 256x (and 256 MiB) the
    // file is a decompression bomb, refused before it can take the memory.
    const uint64_t limit = options.maxFileBytes
                               ? options.maxFileBytes
                               : std::min<uint64_t>(kMaxInflatedBytes,
                                                    std::max<uint64_t>(uint64_t(256) << 20, uint64_t(in.size()) * 256));
    int rc = Z_OK;
    while (rc != Z_STREAM_END) {
        if (produced == out.size()) {
            if (out.size() >= limit) {
                inflateEnd(&zs);
                throw LoadError(name, static_cast<int64_t>(zs.total_in), {},
                                "gzip data inflates past " + std::to_string(limit) + " bytes (" +
                                    std::to_string(limit / std::max<size_t>(in.size(), 1)) +
                                    " times its compressed size): refused as a decompression bomb");
            }
            out.resize(std::min<uint64_t>(out.size() * 2, limit));
        }
        if (zs.avail_in == 0 && fed < in.size()) {
            zs.avail_in = static_cast<uInt>(std::min<size_t>(in.size() - fed, UINT32_MAX));
            fed += zs.avail_in;
        }
        zs.next_out = out.data() + produced;
        zs.avail_out = static_cast<uInt>(std::min<size_t>(out.size() - produced, UINT32_MAX));
        rc = inflate(&zs, Z_NO_FLUSH);
        produced = static_cast<size_t>(zs.total_out);
        if (rc == Z_STREAM_END)
            break;
        if (rc != Z_OK && !(rc == Z_BUF_ERROR && zs.avail_out == 0)) {
            const int64_t at = static_cast<int64_t>(zs.total_in);
            inflateEnd(&zs);
            throw LoadError(name, at, {},
                            rc == Z_BUF_ERROR ? "gzip stream ends early: the file is truncated"
                                              : std::string("corrupt gzip data: ") + (zs.msg ? zs.msg : "inflate failed"));
        }
        if (options.progress && !options.progress(0.3 * static_cast<double>(zs.total_in) / static_cast<double>(in.size()))) {
            inflateEnd(&zs);
            throw LoadCancelled();
        }
    }
    inflateEnd(&zs);
    out.resize(produced);
    return out;
}

bool looksLikeJson(std::span<const uint8_t> b)
{
    for (uint8_t c : b) {
        if (c == ' ' || c == '\n' || c == '\r' || c == '\t')
            continue;
        return c == '{' || c == '[';
    }
    return false;
}

void readPickle(std::span<const uint8_t> bytes, const std::string& name, Snapshot& s, const LoadOptions& options,
                double progressFrom, const std::function<void(size_t)>& consumed = {})
{
    SnapshotBuilder builder(s, name);
    PickleReader reader(bytes, name, s.strings, builder);
    builder.setMemo(&reader.memo());
    builder.setSizeHint(bytes.size());
    builder.setFastPath(options.fastPath);
    builder.setThreads(options.threads ? options.threads : threadCount(), options.parallelChunkBytes);
    if (consumed)
        reader.setConsumed(consumed);
    if (options.progress)
        reader.setProgress([&](double f) { return options.progress(progressFrom + (1.0 - progressFrom) * f); });
    reader.run();
    s.pickleProtocol = reader.protocol();
    if (options.parallelBatches)
        *options.parallelBatches += builder.parallelBatches();
}

std::shared_ptr<const Snapshot> readSnapshot(std::span<const uint8_t> bytes, const std::string& name, const LoadOptions& options,
                                             const std::function<void(size_t)>& consumed)
{
    auto s = std::make_shared<Snapshot>();
    s->path = name;
    s->fileBytes = bytes.size();
    if (bytes.empty())
        throw LoadError(name, 0, {}, "the file is empty, expected a pickled or JSON memory snapshot");
    if (bytes.size() >= format::kLfsPointerPrefix.size() &&
        std::string_view(reinterpret_cast<const char*>(bytes.data()), format::kLfsPointerPrefix.size()) ==
            format::kLfsPointerPrefix)
        throw LoadError(name, -1, {}, "this file is a Git LFS pointer, not the snapshot: run git lfs pull");
    if (bytes.size() >= 2 && bytes[0] == 0x1f && bytes[1] == 0x8b) {
        std::vector<uint8_t> inflated = inflateGzip(bytes, name, options);
        s->format = SnapshotFormat::PickleGzip;
        if (looksLikeJson(inflated)) {
            readJsonSnapshot(inflated, name, *s);
        } else {
            readPickle(inflated, name + " (decompressed)", *s, options, 0.3);
        }
    } else if (looksLikeJson(bytes)) {
        s->format = SnapshotFormat::Json;
        readJsonSnapshot(bytes, name, *s);
    } else {
        s->format = SnapshotFormat::Pickle;
        readPickle(bytes, name, *s, options, 0.0, consumed);
    }
    checkSnapshotLimits(*s, name);
    return s;
}

} // namespace

std::shared_ptr<const Snapshot> readSnapshotBytes(std::span<const uint8_t> bytes, const std::string& name,
                                                  const LoadOptions& options)
{
    return readSnapshot(bytes, name, options, {});
}

std::shared_ptr<const Snapshot> readSnapshotFile(const std::string& path, const LoadOptions& options)
{
    MappedFile file(path);
    if (options.maxFileBytes && file.bytes().size() > options.maxFileBytes)
        throw LoadError(path, -1, {}, "file is larger than the limit of " + std::to_string(options.maxFileBytes) + " bytes");
    // The parse reads the mapping once, front to back: pages behind it can go.
    return readSnapshot(file.bytes(), path, options, [&file](size_t offset) { file.releaseBefore(offset); });
}

} // namespace memscope
