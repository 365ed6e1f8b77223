// Hostile, broken and odd inputs (issue 7): every case loads or is refused with a one-line
// error that says where, in bounded memory and time, and nothing in a file ever runs.
#include "attribute/attributor.h"
#include "common/load_error.h"
#include "diagnose/diagnoser.h"
#include "io/diagnostics_json.h"
#include "snapshot/frame_classifier.h"
#include "query/point_report.h"
#include "io/report_json_writer.h"
#include "io/summary_writer.h"
#include "live/live_decoder.h"
#include "live/live_recording.h"
#include "pickle/pickle_opcodes.h"
#include "pickle/py_value.h"
#include "replay/replay.h"
#include "snapshot/snapshot_limits.h"
#include "snapshot/snapshot_reader.h"

#include "support/cli_run.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <functional>

using namespace memscope;
using namespace std::string_literals;
using tools::Py;

namespace {

std::string sample(const char* name) { return std::string(MEMSCOPE_SAMPLES_DIR) + "/" + name; }
std::string testdata(const std::string& name) { return std::string(MEMSCOPE_TESTDATA_DIR) + "/" + name; }
std::string robustdata(const std::string& name) { return std::string(MEMSCOPE_ROBUSTNESS_DIR) + "/" + name; }

std::span<const uint8_t> span(const std::string& s) { return {reinterpret_cast<const uint8_t*>(s.data()), s.size()}; }
std::span<const uint8_t> span(const QByteArray& s)
{
    return {reinterpret_cast<const uint8_t*>(s.constData()), static_cast<size_t>(s.size())};
}

QByteArray readAll(const QString& path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    return f.readAll();
}

bool writeFile(const QString& path, const std::string& bytes)
{
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate))
        return false;
    return f.write(bytes.data(), static_cast<qint64>(bytes.size())) == static_cast<qint64>(bytes.size());
}

// The error of loading `bytes`, or "" when it loads (and replays).
std::string loadError(const std::string& bytes, const std::string& name = "input")
{
    try {
        auto s = readSnapshotBytes(span(bytes), name);
        replaySnapshot(s);
        return {};
    } catch (const LoadError& e) {
        return e.what();
    }
}

// A live stream fed to the decoder the way fuzz_live_decoder feeds it (odd lengths in
// uneven pieces), then replayed and summarised: the decoder's error, or "".
std::string liveError(const std::string& bytes)
{
    LiveRecording recording;
    LiveDecoder decoder(recording, 1u << 20);
    std::string error;
    const size_t size = bytes.size();
    try {
        for (size_t pos = 0; pos < size;) {
            const size_t chunk = size % 2 ? std::min<size_t>(size - pos, 1 + (pos * 7919 + size) % 61) : size - pos;
            decoder.feed(span(bytes).subspan(pos, chunk));
            pos += chunk;
        }
    } catch (const LiveProtocolError& e) {
        error = e.what();
    }
    auto replay = replaySnapshot(recording.snapshot());
    (void)summaryText(*replay, std::nullopt);
    (void)summaryJson(*replay, std::nullopt);
    return error;
}

// Loads, then runs what the app runs on a snapshot: the JSON report at each device's peak
// and the diagnostics. Returns the report of device 0 ("" when the file is refused).
std::string analysisReport(const std::string& bytes)
{
    std::shared_ptr<const Snapshot> snapshot;
    try {
        snapshot = readSnapshotBytes(span(bytes), "analysis");
    } catch (const LoadError&) {
        return {};
    }
    auto replay = replaySnapshot(snapshot);
    auto attribution = attribute(replay);
    const FrameClassifier frames(*snapshot);
    std::string first;
    for (size_t d = 0; d < replay->devices.size(); ++d) {
        std::string json = reportJson(*attribution, buildPointReport(*attribution, d, peakEvent(replay->devices[d])), frames);
        if (d == 0)
            first = std::move(json);
    }
    auto diagnosis = diagnose(*attribution, frames);
    (void)diagnosticsText(*diagnosis, frames);
    (void)diagnosticsToJson(*diagnosis, *replay, frames);
    return first;
}

std::string le(uint64_t v, int bytes)
{
    std::string s;
    for (int k = 0; k < bytes; ++k)
        s += static_cast<char>((v >> (8 * k)) & 0xff);
    return s;
}

std::string repeat(const std::string& unit, size_t n)
{
    std::string s;
    s.reserve(unit.size() * n);
    for (size_t i = 0; i < n; ++i)
        s += unit;
    return s;
}

// "X<len>text": a BINUNICODE string.
std::string ustr(std::string_view s) { return static_cast<char>(pickle_op::kBinUnicode) + le(s.size(), 4) + std::string(s); }

// An empty snapshot's opening: PROTO 2, {"segments": [], "device_traces": [...
std::string emptySegmentsPrefix() { return "\x80\x02}" + ustr("segments") + "]s"; }

using test::CliRun;

bool haveCli() { return !std::string_view(MEMSCOPE_APP).empty(); }

CliRun runCli(const QStringList& args)
{
    test::CliRunOptions options;
    options.timeoutMs = 300000;
    return test::runCli(QStringLiteral(MEMSCOPE_APP), args, options);
}

// ---- hostile pickles -------------------------------------------------------------------

std::string memoBomb()
{
    std::string s = "\x80\x04N";
    for (uint64_t i = 0; i < 4000; ++i)
        s += "r" + le((i + 1) * (uint64_t(1) << 20) - 1, 4);
    return s + "0}.";
}

std::string deepMarks() { return repeat("(", 100000) + "."; }
std::string deepLists() { return "\x80\x02" + repeat("]", 1000000) + repeat("a", 999999) + "."; }
std::string deepTuples() { return "\x80\x02N" + repeat("\x85", 1000000) + "."; }

std::string selfReferencingSettings()
{
    return emptySegmentsPrefix() + ustr("device_traces") + "]s" + ustr("allocator_settings") + "}q\x01" + ustr("x") + "h\x01ss.";
}

// Five levels of one dict shared under ten keys: 10^5 settings from a few hundred bytes.
std::string settingsLaughs()
{
    std::string s = "\x80\x02";
    for (int level = 0; level < 5; ++level) {
        s += "}q" + std::string(1, static_cast<char>(level));
        for (int k = 0; k < 10; ++k)
            s += ustr("k" + std::to_string(k)) +
                 (level == 0 ? std::string("K\x01") : "h" + std::string(1, static_cast<char>(level - 1))) + "s";
        s += "0";
    }
    return s + "}" + ustr("segments") + "]s" + ustr("device_traces") + "]s" + ustr("allocator_settings") + "h\x04s.";
}

// segments = [S] * 3000, S["blocks"] = [B] * 3000: nine million blocks from 24 KB.
std::string blockLaughs(int segments, int blocks)
{
    std::string s = "\x80\x02}" + ustr("segments") + "]q\x00}q\x01"s + ustr("blocks") + "]q\x02}q\x03"s + ustr("size") +
                    "K\x01s" + ustr("state") + ustr("active_allocated") + "sa";
    s += repeat("h\x03"
                "a",
                static_cast<size_t>(blocks - 1));
    s += "sa";
    s += repeat("h\x01"
                "a",
                static_cast<size_t>(segments - 1));
    return s + "s" + ustr("device_traces") + "]s.";
}

// 20000 blocks that all share one history list of 20000 entries (PyTorch 2.0 layout).
std::string sharedHistory()
{
    const int n = 20000;
    std::string s = "\x80\x02}" + ustr("segments") + "]}" + ustr("address") + "K\x00s"s + ustr("blocks") + "]";
    // The shared history list H (memo 0), made once.
    std::string h = "]q\x00}q\x01"s + ustr("addr") + "K\x00s"s + ustr("real_size") + "K\x01sa" +
                    repeat("h\x01"
                           "a",
                           n - 1) +
                    "0";
    s += h;
    for (int i = 0; i < n; ++i)
        s += "}" + ustr("size") + "K\x01s" + ustr("state") + ustr("active_allocated") + "s" + ustr("history") + "h\x00sa"s;
    return s + "sa" + "s" + ustr("device_traces") + "]s.";
}

std::string manyDevices()
{
    return emptySegmentsPrefix() + ustr("device_traces") + "]]q\x00"s + "a" + repeat("h\x00"s + "a", 4999) + "s.";
}

std::string validAfter(std::string prefix) { return prefix + "}" + ustr("segments") + "]s" + ustr("device_traces") + "]]as."; }

std::string events(std::vector<Py> evs, std::vector<Py> segs = {})
{
    return tools::pickled(tools::snapshotOf(std::move(evs), std::move(segs)));
}

Py alloc(uint64_t addr, uint64_t size)
{
    return Py::dict({{"action", Py::str("alloc")}, {"addr", Py::uinteger(addr)}, {"size", Py::uinteger(size)}});
}

Py withKey(Py d, const std::string& key, Py v)
{
    d.keyed.emplace_back(key, std::move(v));
    return d;
}

std::string gzipOfZeros(size_t bytes)
{
    z_stream zs{};
    deflateInit2(&zs, 9, Z_DEFLATED, 16 + MAX_WBITS, 9, Z_DEFAULT_STRATEGY);
    std::vector<uint8_t> zeros(1 << 20, 0);
    std::string out;
    std::vector<uint8_t> buf(1 << 16);
    size_t fed = 0;
    int flush = Z_NO_FLUSH;
    do {
        const size_t chunk = std::min(zeros.size(), bytes - fed);
        zs.next_in = zeros.data();
        zs.avail_in = static_cast<uInt>(chunk);
        fed += chunk;
        flush = fed == bytes ? Z_FINISH : Z_NO_FLUSH;
        do {
            zs.next_out = buf.data();
            zs.avail_out = static_cast<uInt>(buf.size());
            deflate(&zs, flush);
            out.append(reinterpret_cast<const char*>(buf.data()), buf.size() - zs.avail_out);
        } while (zs.avail_out == 0);
    } while (flush != Z_FINISH);
    deflateEnd(&zs);
    return out;
}

std::string deepJson()
{
    return "{\"segments\":[],\"allocator_settings\":{\"a\":" + repeat("[", 100000) + repeat("]", 100000) + "}}";
}

} // namespace

class TestRobustness : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;

    QString tempFile(const QString& name) const { return m_dir.filePath(name); }
    QString pwnedPath() const { return m_dir.filePath(QStringLiteral("pwned")); }

    // Payloads that would run `touch <pwned>` if anything executed them.
    std::string touchCommand() const { return "touch " + pwnedPath().toStdString(); }

private slots:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    // ---- 2. malicious pickles: refused with the opcode's name and offset, nothing runs ----
    void refusedOpcodes_data() { opcodeRows(false); }
    // onlyFileCreating: the rows whose payload creates a file when Python loads it.
    void opcodeRows(bool onlyFileCreating)
    {
        QTest::addColumn<QByteArray>("bytes");
        QTest::addColumn<QString>("opcode");
        QTest::addColumn<int>("offset");
        QTest::addColumn<bool>("createsFile"); // what Python's pickle.load would do

        const std::string cmd = touchCommand();
        auto row = [onlyFileCreating](const char* name, const std::string& b, const char* op, size_t at, bool creates) {
            if (onlyFileCreating && !creates)
                return;
            QTest::newRow(name) << QByteArray(b.data(), static_cast<qsizetype>(b.size())) << QString::fromLatin1(op)
                                << static_cast<int>(at) << creates;
        };
        row("GLOBAL os.system, protocol 0", "cos\nsystem\n(S'" + cmd + "'\ntR.", "GLOBAL", 0, true);
        {
            std::string b = emptySegmentsPrefix() + ustr("device_traces");
            const size_t at = b.size();
            b += "cposix\nsystem\n" + ustr(cmd) + "\x85R]s.";
            row("GLOBAL inside a snapshot", b, "GLOBAL", at, true);
        }
        {
            std::string b = "\x80\x04\x8c\x05posix\x8c\x06system";
            const size_t at = b.size();
            b += "\x93" + ustr(cmd) + "\x85R.";
            row("STACK_GLOBAL posix.system, protocol 4", b, "STACK_GLOBAL", at, true);
        }
        row("INST os.system, protocol 0", "(S'" + cmd + "'\nios\nsystem\n.", "INST", 3 + cmd.size() + 2, true);
        row("REDUCE", std::string("\x80\x02N)R.", 5), "REDUCE", 4, false);
        row("BUILD", "\x80\x02}}b.", "BUILD", 4, false);
        row("OBJ", std::string("\x80\x02(N)o.", 6), "OBJ", 5, false);
        row("NEWOBJ", "\x80\x02N)\x81.", "NEWOBJ", 4, false);
        row("NEWOBJ_EX", "\x80\x04N)}\x92.", "NEWOBJ_EX", 5, false);
        row("PERSID", "Pfoo\n.", "PERSID", 0, false);
        row("BINPERSID", "\x80\x02NQ.", "BINPERSID", 3, false);
        row("EXT1", "\x80\x02\x82\x01.", "EXT1", 2, false);
        row("EXT2", std::string("\x80\x02\x83\x01\x00.", 6), "EXT2", 2, false);
        row("EXT4", std::string("\x80\x02\x84\x01\x00\x00\x00.", 8), "EXT4", 2, false);
        row("NEXT_BUFFER", "\x80\x05\x97.", "NEXT_BUFFER", 2, false);
        row("READONLY_BUFFER", "\x80\x05N\x98.", "READONLY_BUFFER", 3, false);
    }
    void refusedOpcodes()
    {
        QFETCH(QByteArray, bytes);
        QFETCH(QString, opcode);
        QFETCH(int, offset);
        const QString file = tempFile(QStringLiteral("evil.pickle"));
        QVERIFY(writeFile(file, bytes.toStdString()));
        QFile::remove(pwnedPath());
        try {
            readSnapshotFile(file.toStdString());
            QFAIL("a pickle that imports or calls code was loaded");
        } catch (const LoadError& e) {
            const QString msg = QString::fromStdString(e.what());
            QVERIFY2(msg.startsWith(file + QStringLiteral(": byte ") + QString::number(offset) +
                                    QStringLiteral(": refused pickle opcode ") + opcode + QStringLiteral(" (")),
                     qPrintable(msg));
            QCOMPARE(e.offset(), int64_t(offset));
            QVERIFY(!msg.contains(QLatin1Char('\n')));
        }
        QVERIFY2(!QFile::exists(pwnedPath()), "the payload ran");

        QVERIFY(haveCli());
        const CliRun r = runCli({QStringLiteral("summary"), file});
        QCOMPARE(r.exitCode, 1);
        QVERIFY(r.out.isEmpty());
        QVERIFY2(r.err.count('\n') == 1 && r.err.endsWith('\n'), r.err.constData());
        QVERIFY2(r.err.startsWith(("memscope summary: " + file).toUtf8()), r.err.constData());
        QVERIFY2(r.err.contains(("refused pickle opcode " + opcode).toUtf8()), r.err.constData());
        QVERIFY2(!QFile::exists(pwnedPath()), "the payload ran");
    }

    // The control: the payloads above are real. Python's own pickle.load runs them.
    void payloadsArePotent_data() { opcodeRows(true); }
    void payloadsArePotent()
    {
        QFETCH(QByteArray, bytes);
        QFETCH(bool, createsFile);
        QVERIFY(createsFile);
        const QString python = QStandardPaths::findExecutable(QStringLiteral("python3"));
        QVERIFY2(!python.isEmpty(), "python3 shows that the payload works (scripts/install-deps.sh installs it)");
        const QString file = tempFile(QStringLiteral("potent.pickle"));
        QVERIFY(writeFile(file, bytes.toStdString()));
        QFile::remove(pwnedPath());
        QProcess p;
        p.start(python,
                {QStringLiteral("-c"),
                 QStringLiteral("import pickle,sys\ntry:\n pickle.load(open(sys.argv[1],'rb'))\nexcept Exception:\n pass"),
                 file});
        QVERIFY(p.waitForFinished(60000));
        QVERIFY2(QFile::exists(pwnedPath()), "python's pickle.load did not run the payload: the refusal test proves nothing");
        QFile::remove(pwnedPath());
    }

    // ---- 2. bombs, huge lengths and counts, integer overflow: bounded, with a clear error ----
    void bounded_data()
    {
        QTest::addColumn<QByteArray>("bytes");
        QTest::addColumn<QString>("expected"); // substring of the error; empty: it loads
        auto row = [](const char* name, const std::string& b, const char* expected) {
            QTest::newRow(name) << QByteArray(b.data(), static_cast<qsizetype>(b.size())) << QString::fromUtf8(expected);
        };
        // memo
        row("memo bomb (LONG_BINPUT far ahead, 4000 times)", memoBomb(),
            "byte 3: memo index 1048575 at byte 3: more memo entries than bytes before it");
        row("text PUT of a huge index", "\x80\x02Np99999999999\n.", "memo index 99999999999 is far beyond the memo's size 0");
        row("LONG_BINGET of an index never stored", "\x80\x02j\xff\xff\xff\xff.",
            "byte 2: memo index 4294967295 was never stored");
        // nesting
        row("100000 nested MARKs", deepMarks(), "MARKs nested deeper than 65536");
        row("lists nested a million deep", deepLists(), "at segments[0]: expected a segment dict");
        row("tuples nested a million deep", deepTuples(), "the top level is a tuple");
        row("settings dict that contains itself", selfReferencingSettings(),
            "at allocator_settings.x.x.x.x.x.x.x.x.x: settings nested deeper than 8 levels");
        row("settings: one dict shared ten times, five deep", settingsLaughs(), "at allocator_settings: more than 4096 settings");
        row("segments: one block shared 3000 times in one segment shared 3000 times", blockLaughs(3000, 3000),
            "at segments[0].blocks[1]: the same block dict appears twice");
        row("segments: one segment shared twice", blockLaughs(2, 1), "at segments[1]: the same segment dict appears twice");
        row("20000 blocks sharing one 20000-entry history", sharedHistory(), "");
        row("5000 device traces", manyDevices(), "at device_traces: holds 5000 per-device traces; at most 1024");
        // declared lengths past the end of the file
        row("BINUNICODE of 4 GiB",
            "\x80\x02X\xff\xff\xff\xff"
            "abc",
            "byte 2: file ends inside BINUNICODE (needs 4294967295 bytes, 3 left)");
        row("BINUNICODE8 of 2^63", "\x80\x04\x8d" + le(uint64_t(1) << 63, 8) + "abc", "byte 2: file ends inside BINUNICODE8");
        row("BINBYTES8 of 2^64-1", "\x80\x04\x8e" + le(UINT64_MAX, 8) + "abc", "byte 2: file ends inside BINBYTES8");
        row("BINBYTES of 4 GiB",
            "\x80\x03"
            "B\xff\xff\xff\xff"
            "abc",
            "byte 2: file ends inside BINBYTES (needs 4294967295 bytes");
        row("SHORT_BINUNICODE past the end",
            "\x80\x04\x8c\xff"
            "ab",
            "byte 2: file ends inside SHORT_BINUNICODE (needs 255 bytes, 2 left)");
        row("LONG4 of 2 GiB",
            "\x80\x02\x8b\xff\xff\xff\x7f"
            "abc",
            "byte 2: file ends inside LONG (needs 2147483647 bytes, 3 left)");
        row("LONG4 of negative length",
            "\x80\x02\x8b\xff\xff\xff\xff"
            "abc",
            "byte 2: LONG4 with negative length");
        row("BINSTRING of negative length",
            "\x80\x02T\xfe\xff\xff\xff"
            "abc",
            "byte 2: BINSTRING with negative length");
        row("FRAME declaring 2^64-1 bytes (a hint only)", validAfter("\x80\x04\x95" + le(UINT64_MAX, 8)), "");
        // integers that do not fit, and sizes/addresses/times that would overflow later
        row("LONG1 of 9 bytes past 2^64", "\x80\x02\x8a\x09\xff\xff\xff\xff\xff\xff\xff\xff\x01.",
            "byte 2: integer of 9 bytes does not fit in 64 bits");
        row("text LONG past 2^64", "L99999999999999999999999L\n.",
            "byte 0: LONG holds '99999999999999999999999', expected a decimal integer that fits in 64 bits");
        row("text INT below -2^63", "I-99999999999999999999\n.", "INT holds '-99999999999999999999'");
        row("three allocs of 2^59 bytes",
            events({alloc(0, uint64_t(1) << 59), alloc(1 << 20, uint64_t(1) << 59), alloc(2 << 20, uint64_t(1) << 59)}),
            "at device_traces[0][2].size: the sizes of this device's trace entries add up past 2^60 bytes");
        row("alloc of 2^64-1 bytes", events({alloc(4096, UINT64_MAX)}),
            "at device_traces[0][0].addr: address 0x1000 + size 18446744073709551615 runs past the end");
        row("alloc whose end wraps past 2^64", events({alloc(UINT64_MAX - 15, 32)}),
            "at device_traces[0][0].addr: address 0xfffffffffffffff0 + size 32 runs past the end");
        row("time_us of 2^63-1", events({withKey(alloc(0, 512), "time_us", Py::integer(INT64_MAX))}),
            "at device_traces[0][0].time_us: 9223372036854775807 is not a time in microseconds");
        row("time_us of -2^63", events({withKey(alloc(0, 512), "time_us", Py::integer(INT64_MIN))}),
            "at device_traces[0][0].time_us");
        row("segment whose end wraps",
            events({}, {Py::dict({{"address", Py::integer(4096)}, {"total_size", Py::uinteger(UINT64_MAX)}})}),
            "at segments[0].address: address 0x1000 + size 18446744073709551615 runs past the end");
        row("block whose end wraps",
            events({}, {Py::dict({{"address", Py::integer(0)},
                                  {"blocks", Py::list({Py::dict({{"address", Py::uinteger(uint64_t(1) << 63)},
                                                                 {"size", Py::uinteger(uint64_t(1) << 63)}})})}})}),
            "at segments[0].blocks[0].address: address 0x8000000000000000");
        row("annotation time_us of 2^62",
            tools::pickled(
                Py::dict({{"segments", Py::list({})},
                          {"device_traces", Py::list({})},
                          {"external_annotations",
                           Py::list({Py::dict({{"name", Py::str("x")}, {"time_us", Py::integer(int64_t(1) << 62)}})})}})),
            "at external_annotations[0].time_us: 4611686018427387904 is not a time");
        // an odd value inside a frame makes that detail unknown, never the file unreadable (issue 14)
        const Py okAlloc = alloc(4096, 512);
        auto withFrame = [&](Py frame) {
            return events(
                {okAlloc,
                 withKey(okAlloc, "frames",
                         Py::list({Py::dict({{"filename", Py::str("a.py")}, {"line", Py::integer(1)}, {"name", Py::str("f")}}),
                                   std::move(frame)}))});
        };
        row("a frame's line of 2^64-1 (torch.compile)",
            withFrame(Py::dict({{"filename", Py::str("b.py")}, {"line", Py::uinteger(UINT64_MAX)}, {"name", Py::str("g")}})), "");
        row("a frame's line is a string",
            withFrame(Py::dict({{"filename", Py::str("b.py")}, {"line", Py::str("forty-two")}, {"name", Py::str("g")}})), "");
        row("a frame's filename is an int", withFrame(Py::dict({{"filename", Py::integer(7)}})), "");
        row("a pool_id that is a string", events({withKey(okAlloc, "pool_id", Py::str("(1, 0)"))}), "");
        // other formats
        row("gzip bomb: 512 MiB of zeros", gzipOfZeros(size_t(512) << 20), "refused as a decompression bomb");
        row("JSON nested 100000 deep", deepJson(), "JSON nested deeper than 64 levels");
        row("JSON with 5000 device traces", "{\"device_traces\":[" + repeat("[],", 4999) + "[]]}",
            "at device_traces: holds 5000 per-device traces");
    }
    void bounded()
    {
        QFETCH(QByteArray, bytes);
        QFETCH(QString, expected);
        const std::string error = loadError(bytes.toStdString());
        if (expected.isEmpty()) {
            QVERIFY2(error.empty(), error.c_str());
        } else {
            QVERIFY2(QString::fromStdString(error).contains(expected), error.c_str());
            QVERIFY(error.find('\n') == std::string::npos);
        }
        // The same file through the CLI: a one-line error, exit status 1, bounded memory.
        QVERIFY(haveCli());
        const QString file = tempFile(QStringLiteral("bounded.bin"));
        QVERIFY(writeFile(file, bytes.toStdString()));
        const CliRun r = runCli({QStringLiteral("summary"), file});
        QCOMPARE(r.exitCode, expected.isEmpty() ? 0 : 1);
        if (!expected.isEmpty()) {
            QVERIFY2(r.err.count('\n') == 1, r.err.constData());
            QVERIFY2(QString::fromUtf8(r.err).contains(expected), r.err.constData());
        }
        // Sanitizer builds carry their own shadow memory: the bound is loose enough for both.
        QVERIFY2(r.maxRssKb < 1200 * 1024,
                 qPrintable(QStringLiteral("memscope summary peaked at %1 MiB").arg(r.maxRssKb / 1024)));
    }

    // A trace that keeps every allocation alive: the live-set index stays linear.
    void manyLiveAllocations()
    {
        const int n = 200000;
        std::string s = emptySegmentsPrefix() + ustr("device_traces") + "]]";
        const char* keys[] = {"action", "alloc", "addr", "size"};
        for (int k = 0; k < 4; ++k) // memoized once, then two bytes a use
            s += ustr(keys[k]) + "q" + std::string(1, static_cast<char>(k)) + "0";
        for (int i = 0; i < n; ++i)
            s += "}h\x00h\x01sh\x02J"s + le(static_cast<uint64_t>(i) * 512, 4) + "sh\x03J" + le(512, 4) + "sa";
        s += "as.";
        auto snap = readSnapshotBytes(span(s), "many_live");
        QCOMPARE(snap->devices.size(), size_t(1));
        QCOMPARE(snap->devices[0].events.count(), size_t(n));
        auto replay = replaySnapshot(snap);
        const DeviceReplay& d = replay->devices[0];
        QCOMPARE(d.peakRequested.bytes, int64_t(n) * 512);
        QCOMPARE(d.activeAfter(n - 1).size(), size_t(n));
        QCOMPARE(d.activeAfter(n / 2).size(), size_t(n / 2 + 1));
        size_t held = 0;
        for (const auto& c : d.checkpoints)
            held += c.size();
        QVERIFY2(held <= size_t(16) * (size_t(n) + d.allocations.size()) + (size_t(1) << 20),
                 qPrintable(QStringLiteral("checkpoints hold %1 ids for %2 events").arg(held).arg(n)));
    }

    // ---- 3. broken inputs ----
    void truncatedAtEveryOffset_data()
    {
        QTest::addColumn<QString>("file");
        QTest::newRow("PyTorch 2.0 layout, protocol 2") << QString::fromStdString(robustdata("torch20_history.pickle"));
        QTest::newRow("two devices, protocol 4") << QString::fromStdString(robustdata("two_devices.pickle"));
        QTest::newRow("gzip") << QString::fromStdString(testdata("release.pickle.gz"));
        QTest::newRow("JSON") << QString::fromStdString(robustdata("linear3.json"));
    }
    void truncatedAtEveryOffset()
    {
        QFETCH(QString, file);
        const QByteArray all = readAll(file);
        QVERIFY(all.size() > 1000);
        QVERIFY(loadError(all.toStdString()).empty());
#ifdef MEMSCOPE_SANITIZED
        // Every seventh offset past the first KiB and before the last 64 bytes of a file over 8 KiB:
        // each offset is a whole parse, and the JSON's 20,785 took Qt Test's 300 s under ASan
        // (7.5 s in release).
        const qsizetype stride = all.size() > 8192 ? 7 : 1;
#else
        const qsizetype stride = 1;
#endif
        for (qsizetype n = 0; n < all.size(); n += (n < 1024 || n >= all.size() - 64) ? 1 : stride) {
            const std::string cut(all.constData(), static_cast<size_t>(n));
            const std::string error = loadError(cut, "cut");
            const bool gzipMagicCut = n == 1 && all.startsWith("\x1f\x8b"); // one byte is no gzip header
            if (n == 0)
                QVERIFY2(error.find("the file is empty") != std::string::npos, error.c_str());
            else if (!gzipMagicCut)
                QVERIFY2(error.find("truncated") != std::string::npos && error.rfind("cut: byte ", 0) == 0,
                         (std::to_string(n) + ": " + error).c_str());
            else
                QVERIFY2(!error.empty(), "a one-byte file loaded");
        }
    }

    void wrongTypes_data()
    {
        QTest::addColumn<QByteArray>("bytes");
        QTest::addColumn<QString>("keyPath");
        QTest::addColumn<QString>("message");
        auto row = [](const char* name, const Py& root, const char* path, const char* message) {
            const std::string b = tools::pickled(root);
            QTest::newRow(name) << QByteArray(b.data(), static_cast<qsizetype>(b.size())) << QString::fromUtf8(path)
                                << QString::fromUtf8(message);
        };
        const Py ok = alloc(4096, 512);
        const Py frameA = Py::dict({{"filename", Py::str("a.py")}, {"line", Py::integer(1)}, {"name", Py::str("f")}});
        auto ev = [](std::vector<std::pair<std::string, Py>> kv) { return Py::dict(std::move(kv)); };
        row("addr is a string",
            tools::snapshotOf({ev({{"action", Py::str("alloc")}, {"addr", Py::str("0x10")}, {"size", Py::integer(5)}})}),
            "device_traces[0][0].addr", "expected a non-negative integer, found str '0x10'");
        row("size is negative",
            tools::snapshotOf({ev({{"action", Py::str("alloc")}, {"addr", Py::integer(16)}, {"size", Py::integer(-5)}})}),
            "device_traces[0][0].size", "expected a non-negative integer, found int -5");
        row("time_us is a float", tools::snapshotOf({withKey(ok, "time_us", Py::real(1.5))}), "device_traces[0][0].time_us",
            "expected an integer, found float 1.5");
        row("action is an int", tools::snapshotOf({ev({{"action", Py::integer(3)}, {"addr", Py::integer(16)}})}),
            "device_traces[0][0].action", "expected a string, found int 3");
        row("frames is a dict", tools::snapshotOf({withKey(ok, "frames", frameA)}), "device_traces[0][0].frames",
            "expected a list of frames, found a dict");
        row("the second device's entry",
            Py::dict({{"segments", Py::list({})},
                      {"device_traces",
                       Py::list({Py::list({ok}), Py::list({ev({{"action", Py::str("alloc")}, {"size", Py::str("big")}})})})}}),
            "device_traces[1][0].size", "found str 'big'");
        row("the second device's entry after an empty first device",
            Py::dict({{"segments", Py::list({})},
                      {"device_traces",
                       Py::list({Py::list({}), Py::list({ev({{"action", Py::str("alloc")}, {"size", Py::str("big")}})})})}}),
            "device_traces[1][0].size", "found str 'big'");
        row("a trace entry that is not a dict",
            Py::dict({{"segments", Py::list({})}, {"device_traces", Py::list({Py::list({Py::integer(5)})})}}), "device_traces[0]",
            "expected trace entries (dicts with 'action'), found int 5");
        row("a device trace that is an int",
            Py::dict({{"segments", Py::list({})}, {"device_traces", Py::list({Py::integer(5)})}}), "device_traces[0]",
            "expected a list of trace entries, found int 5");
        row("device_traces is a string", Py::dict({{"segments", Py::list({})}, {"device_traces", Py::str("none")}}),
            "device_traces", "expected a list of per-device lists, found str 'none'");
        row("segments is a dict", Py::dict({{"segments", Py::dict({})}, {"device_traces", Py::list({})}}), "segments",
            "expected a list of segments");
        row("a segment's total_size is a string",
            tools::snapshotOf({}, {Py::dict({{"address", Py::integer(0)}, {"total_size", Py::str("2MB")}})}),
            "segments[0].total_size", "expected a non-negative integer, found str '2MB'");
        row("a block's size is a string",
            tools::snapshotOf(
                {},
                {Py::dict({{"blocks", Py::list({Py::dict({{"size", Py::integer(512)}}), Py::dict({{"size", Py::str("x")}})})}})}),
            "segments[0].blocks[1].size", "found str 'x'");
        row("a block's frames is an int",
            tools::snapshotOf({}, {Py::dict({{"blocks", Py::list({Py::dict({{"frames", Py::integer(1)}})})}})}),
            "segments[0].blocks[0].frames", "expected a list of frames, found int 1");
        row("a 2.0 history's real_size is a string",
            tools::snapshotOf(
                {}, {Py::dict(
                        {{"blocks", Py::list({Py::dict({{"size", Py::integer(512)},
                                                        {"history", Py::list({Py::dict({{"real_size", Py::str("?")}})})}})})}})}),
            "segments[0].blocks[0].history[-1].real_size", "found str '?'");
        row("an annotation's time_us is a string",
            Py::dict({{"segments", Py::list({})},
                      {"device_traces", Py::list({})},
                      {"external_annotations", Py::list({Py::dict({{"time_us", Py::str("now")}})})}}),
            "external_annotations[0].time_us", "expected an integer, found str 'now'");
    }
    void wrongTypes()
    {
        QFETCH(QByteArray, bytes);
        QFETCH(QString, keyPath);
        QFETCH(QString, message);
        try {
            readSnapshotBytes(span(bytes), "typed.pickle");
            QFAIL("a snapshot with a wrongly typed value was loaded");
        } catch (const LoadError& e) {
            QCOMPARE(QString::fromStdString(e.keyPath()), keyPath);
            QVERIFY2(QString::fromStdString(e.message()).contains(message), e.what());
            QVERIFY2(QString::fromStdString(e.what()).contains(QStringLiteral("at ") + keyPath + QStringLiteral(": ")), e.what());
        }
        QVERIFY(haveCli());
        const QString file = tempFile(QStringLiteral("typed.pickle"));
        QVERIFY(writeFile(file, bytes.toStdString()));
        const CliRun r = runCli({QStringLiteral("summary"), file});
        QCOMPARE(r.exitCode, 1);
        QVERIFY(r.out.isEmpty());
        QVERIFY2(r.err.count('\n') == 1, r.err.constData());
        QVERIFY2(r.err.contains(("at " + keyPath + ": ").toUtf8()) && r.err.contains(message.toUtf8()), r.err.constData());
    }

    void notASnapshot_data()
    {
        QTest::addColumn<QByteArray>("bytes");
        QTest::addColumn<QString>("expected");
        auto row = [](const char* name, const std::string& b, const char* expected) {
            QTest::newRow(name) << QByteArray(b.data(), static_cast<qsizetype>(b.size())) << QString::fromUtf8(expected);
        };
        const QByteArray hello = readAll(QString::fromStdString(testdata("not_a_snapshot.pickle")));
        row("a dict of other keys", hello.toStdString(),
            "not a CUDA memory snapshot: top-level keys are 'hello', 'world'; expected 'segments' and 'device_traces'");
        row("a pickled int", tools::pickled(Py::integer(42)), "not a CUDA memory snapshot: the pickle holds a single int");
        row("a pickled string", tools::pickled(Py::str("hi")), "not a CUDA memory snapshot: the pickle holds a single str");
        row("a pickled tuple", tools::pickled(Py::tuple({Py::integer(1)})),
            "not a CUDA memory snapshot: the top level is a tuple");
        row("an empty dict", tools::pickled(Py::dict({})), "not a CUDA memory snapshot: top-level keys are (none)");
        // Regression (fuzz_snapshot_loader, fuzz/corpus/.../regression_newline_in_top_level_key):
        // a key quoted into the message kept its newline, and the message was two lines.
        row("a top-level key with a newline", tools::pickled(Py::dict({{"se\nments", Py::list({})}})),
            "not a CUDA memory snapshot: top-level keys are 'se\\x0aments'; expected");
        row("a JSON object of other keys", "{\"a\": 1, \"b\": [2]}", "not a CUDA memory snapshot: top-level keys are 'a', 'b'");
        row("a JSON number", " 42", "unknown pickle opcode 0x20");
        row("a JSON string at the top", "[\"x\"]", "at segments[0]: expected a segment object, found string");
        row("an empty file", "", "the file is empty");
        row("a text file", "# notes\n", "byte 0: unknown pickle opcode 0x23: not a pickle, or a corrupt one");
        row("a PDF", "%PDF-1.7\n", "byte 0: unknown pickle opcode 0x25");
        row("a zip (a torch.save checkpoint)", std::string("PK\x03\x04\x14\x00", 6), "byte 0: refused pickle opcode PERSID");
        row("gzip of garbage", std::string("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03garbage", 17), "corrupt gzip data");
        row("STOP with two values", "\x80\x02NN.", "byte 4: STOP with 2 values on the stack, expected exactly one");
        row("a protocol from the future", "\x80\x09N.", "pickle protocol 9 is newer than 5");
    }
    void notASnapshot()
    {
        QFETCH(QByteArray, bytes);
        QFETCH(QString, expected);
        const std::string error = loadError(bytes.toStdString(), "other.bin");
        QVERIFY2(QString::fromStdString(error).contains(expected), error.c_str());
        QVERIFY2(error.rfind("other.bin: ", 0) == 0 && error.find('\n') == std::string::npos, error.c_str());
        QVERIFY(haveCli());
        const QString file = tempFile(QStringLiteral("other.bin"));
        QVERIFY(writeFile(file, bytes.toStdString()));
        const CliRun r = runCli({QStringLiteral("summary"), file});
        QCOMPARE(r.exitCode, 1);
        QVERIFY(r.out.isEmpty());
        QVERIFY2(r.err.count('\n') == 1 && r.err.contains(expected.toUtf8()), r.err.constData());
    }

    // ---- 3. unusual real inputs ----
    void unusualRealInputs_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<int>("device");
        QTest::addColumn<QString>("stats"); // NAME.stats.json with torch's own peaks; empty: none
        QTest::addColumn<int>("events");
        QTest::addColumn<QString>("feature");
        const auto r = [](const std::string& p) { return QString::fromStdString(p); };
        QTest::newRow("two devices: device 0 is release")
            << r(robustdata("two_devices.pickle")) << 0 << r(sample("release.stats.json")) << 39 << "two devices";
        QTest::newRow("two devices: device 1 is linear3")
            << r(robustdata("two_devices.pickle")) << 1 << r(sample("linear3.stats.json")) << 25 << "two devices";
        QTest::newRow("empty trace, segments kept")
            << r(robustdata("empty_trace.pickle")) << 0 << QString() << 0 << "empty trace";
        QTest::newRow("nothing at all") << r(robustdata("empty_snapshot.pickle")) << 0 << QString() << 0 << "empty";
        QTest::newRow("expandable segments") << r(testdata("real/expandable_qwen_bs4.pickle")) << 0
                                             << r(testdata("real/expandable_qwen_bs4.stats.json")) << 11312 << "expandable";
        QTest::newRow("ring buffer overflowed") << r(testdata("real/overflow_qwen_bs4.pickle")) << 0
                                                << r(testdata("real/overflow_qwen_bs4.stats.json")) << 3000 << "overflow";
        QTest::newRow("recording started late") << r(testdata("oracle/oracle_qwen_bs4_late.pickle")) << 0
                                                << r(testdata("oracle/oracle_qwen_bs4_late.stats.json")) << 11211 << "late";
        QTest::newRow("PyTorch 2.0 history, no time_us")
            << r(robustdata("torch20_history.pickle")) << 0 << r(sample("linear3.stats.json")) << 25 << "history";
        QTest::newRow("libtorch C++ pickler, protocol 2")
            << r(sample("libtorch_mlp.pickle")) << 0 << r(sample("libtorch_mlp.stats.json")) << -1 << "";
    }
    void unusualRealInputs()
    {
        QFETCH(QString, file);
        QFETCH(int, device);
        QFETCH(QString, stats);
        QFETCH(int, events);
        QFETCH(QString, feature);
        auto snap = readSnapshotFile(file.toStdString());
        auto replay = replaySnapshot(snap);
        const DeviceReplay* d = replay->device(device);
        QVERIFY(d);
        if (events >= 0)
            QCOMPARE(d->eventCount, int64_t(events));
        if (!stats.isEmpty() && QFile::exists(stats)) {
            const QJsonObject o = QJsonDocument::fromJson(readAll(stats)).object();
            const QJsonObject m = o.value(QStringLiteral("memory_stats")).toObject();
            QCOMPARE(d->peakRequested.bytes,
                     static_cast<int64_t>(m.value(QStringLiteral("requested_bytes.all.peak")).toDouble()));
            QCOMPARE(d->peakReserved.bytes, static_cast<int64_t>(o.value(QStringLiteral("max_reserved")).toDouble()));
        }
        const EventTable& ev = snap->device(device)->events;
        if (feature == QLatin1String("two devices")) {
            QCOMPARE(snap->devices.size(), size_t(2));
            QCOMPARE(replay->devices.size(), size_t(2));
            for (const Segment& s : snap->segments)
                QVERIFY(s.device == 0 || s.device == 1);
        } else if (feature == QLatin1String("empty trace")) {
            // Everything allocated in `segments` existed before the (empty) trace.
            int64_t active = 0, reserved = 0;
            for (const Segment& s : snap->segments) {
                reserved += static_cast<int64_t>(s.totalSize);
                for (const Block& b : s.blocks)
                    if (b.state == BlockState::ActiveAllocated)
                        active += static_cast<int64_t>(b.requestedSize);
            }
            QVERIFY(active > 0);
            QCOMPARE(d->preexistingBytes, active);
            QCOMPARE(d->peakRequested.bytes, active);
            QCOMPARE(d->peakReserved.bytes, reserved);
            QVERIFY(!d->peakRequested.event.valid());
            QCOMPARE(d->activeAfter(-1).size(), size_t(d->preexistingCount));
        } else if (feature == QLatin1String("empty")) {
            QCOMPARE(snap->devices.size(), size_t(1));
            QCOMPARE(d->peakRequested.bytes, int64_t(0));
            QCOMPARE(d->peakReserved.bytes, int64_t(0));
            QVERIFY(d->activeAfter(0).empty());
        } else if (feature == QLatin1String("expandable")) {
            int64_t maps = 0, segAllocs = 0;
            for (Action a : ev.action) {
                maps += a == Action::SegmentMap;
                segAllocs += a == Action::SegmentAlloc;
            }
            QCOMPARE(maps, int64_t(106));
            QCOMPARE(segAllocs, int64_t(0));
            bool anyExpandable = false;
            for (const Segment& s : snap->segments)
                anyExpandable |= s.expandable;
            QVERIFY(anyExpandable);
        } else if (feature == QLatin1String("overflow")) {
            QVERIFY(d->truncated);
            QVERIFY(d->preexistingBytes > 0);
        } else if (feature == QLatin1String("late")) {
            QVERIFY(d->preexistingBytes > 0);
            QVERIFY(d->preexistingCount > 0);
        } else if (feature == QLatin1String("history")) {
            QVERIFY(snap->blockHistoryFormat);
            QVERIFY(!ev.hasTime);
            for (int64_t t : ev.timeUs)
                QCOMPARE(t, int64_t(0));
            // The 2.0 layout gives the same blocks as the 2.11 file it was made from.
            auto original = readSnapshotFile(sample("linear3.pickle"));
            QCOMPARE(snap->segments.size(), original->segments.size());
            for (size_t i = 0; i < snap->segments.size(); ++i) {
                QCOMPARE(snap->segments[i].blocks.size(), original->segments[i].blocks.size());
                for (size_t j = 0; j < snap->segments[i].blocks.size(); ++j) {
                    const Block& a = snap->segments[i].blocks[j];
                    const Block& b = original->segments[i].blocks[j];
                    QCOMPARE(a.address, b.address);
                    QCOMPARE(a.size, b.size);
                    if (b.state != BlockState::Inactive) {
                        QCOMPARE(a.requestedSize, b.requestedSize);
                        QCOMPARE(snap->stacks.frames(a.stack).size(), original->stacks.frames(b.stack).size());
                    }
                }
            }
        }
        // And the CLI agrees, for that device alone.
        QVERIFY(haveCli());
        const CliRun r = runCli(
            {QStringLiteral("summary"), file, QStringLiteral("--device"), QString::number(device), QStringLiteral("--json")});
        QCOMPARE(r.exitCode, 0);
        QVERIFY(r.err.isEmpty());
        const QJsonObject j = QJsonDocument::fromJson(r.out).object();
        const QJsonArray devices = j.value(QStringLiteral("devices")).toArray();
        QCOMPARE(devices.size(), 1);
        QCOMPARE(devices[0].toObject().value(QStringLiteral("device")).toInt(), device);
        QCOMPARE(static_cast<int64_t>(devices[0].toObject().value(QStringLiteral("peak_requested_bytes")).toDouble()),
                 d->peakRequested.bytes);
    }

    void missingDevice()
    {
        QVERIFY(haveCli());
        const QString file = QString::fromStdString(robustdata("two_devices.pickle"));
        const CliRun r = runCli({QStringLiteral("summary"), file, QStringLiteral("--device"), QStringLiteral("2")});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err == ("memscope summary: " + file + ": has no device 2 (it has 0, 1)\n").toUtf8(), r.err.constData());
    }

    // Every headless command parses its arguments the same way (app/command_line.h): both
    // "--opt value" and "--opt=value", a clear error for a missing value, an unknown option,
    // a second file or a bad number, and the command's own exit status.
    void cliArguments_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<int>("exitCode");
        QTest::addColumn<QString>("err"); // stderr contains it ("" = stderr empty)
        QTest::addColumn<QString>("out"); // stdout contains it
        const QString f = QString::fromStdString(sample("llm_bs16.pickle"));
        const QString tmp = QDir::tempPath() + QStringLiteral("/memscope_cli_args.pickle");
        auto row = [](const char* name, QStringList args, int code, const QString& err, const QString& out) {
            QTest::newRow(name) << args << code << err << out;
        };
        row("summary --device=0 --json", {"summary", f, "--device=0", "--json"}, 0, "", "\"peak_requested_bytes\"");
        row("summary --device 0", {"summary", "--device", "0", f}, 0, "", "peak requested");
        row("summary --device without value", {"summary", f, "--device"}, 1, "memscope summary: --device needs a value", "");
        row("summary bad device", {"summary", f, "--device=x"}, 1, "--device takes a device ordinal (0, 1, …), got 'x'", "");
        row("summary unknown option", {"summary", f, "--bogus"}, 1, "memscope summary: unknown option '--bogus'", "");
        row("summary two files: a job", {"summary", f, f, "--json"}, 0, "", "\"ranks_count\": 1");
        row("summary job --device", {"summary", f, f, "--device=0"}, 1, "--device is for one file", "");
        row("summarize no -o", {"summarize", f}, 1, "usage: memscope summarize FILE", "");
        row("summarize two files", {"summarize", f, f, "-o", "-"}, 1, "summarize takes one file, got '" + f + "' and '" + f + "'",
            "");
        row("summarize --rank x", {"summarize", f, "--rank", "x", "-o", "-"}, 1, "--rank takes a rank number (0, 1, …), got 'x'",
            "");
        row("summarize -o -", {"summarize", f, "-o", "-"}, 0, "", "\"memscope_rank_summary\":1");
        row("summary no file", {"summary"}, 1, "usage: memscope summary FILE", "");
        row("allocations --csv=-", {"allocations", f, "--csv=-"}, 0, "", "alloc_event,");
        row("allocations no --csv", {"allocations", f}, 1, "usage: memscope allocations", "");
        row("diagnose --device=1", {"diagnose", f, "--device=1"}, 1, ": has no device 1 (it has 0)", "");
        row("diagnose --json", {"diagnose", "--json", f}, 0, "", "\"kind\": \"activation_bound_peak\"");
        row("estimate --batch=-1", {"estimate", f, "--batch=-1"}, 1, "--recorded-batch takes a positive number, got '-1'", "");
        row("estimate --what-if-states 0", {"estimate", f, "--what-if-states", "0", "--batch=16"}, 0, "", "model: N =");
        row("estimate --what-if-states=-2", {"estimate", f, "--what-if-states=-2"}, 1,
            "--what-if-states takes a number >= 0, got '-2'", "");
        row("estimate --recorded-batch 16", {"estimate", f, "--recorded-batch", "16"}, 0, "", "model: N =");
        row("whatif --set expandable", {"whatif", f, "--set", "expandable_segments:True", "--json"}, 0, "",
            "\"settings\": \"expandable_segments:True\"");
        row("whatif --set unknown", {"whatif", f, "--set=bogus:1"}, 1, "--set: unknown allocator setting 'bogus'", "");
        row("whatif --set max_split_size_mb:5", {"whatif", f, "--set", "max_split_size_mb=5"}, 1,
            "--set: max_split_size_mb: must be >= 20 (MiB), got 5", "");
        row("whatif --capacity=lots", {"whatif", f, "--capacity=lots"}, 1, "--capacity takes a size such as 80GiB", "");
        row("whatif --max-batch without capacity", {"whatif", f, "--max-batch"}, 1, "--max-batch needs --capacity", "");
        row("whatif --batch and --max-batch", {"whatif", f, "--batch=2", "--max-batch", "--capacity=80GiB"}, 1,
            "--batch and --max-batch exclude each other", "");
        row("whatif --capacity 3GiB", {"whatif", f, "--capacity", "3GiB"}, 0, "", "out of memory       yes, at event");
        row("report --help", {"report", "--help"}, 0, "", "usage: memscope report FILE");
        row("report no --out", {"report", f}, 2, "memscope report: usage: memscope report FILE", "");
        row("report --out without value", {"report", f, "--out"}, 2, "memscope report: --out needs a value", "");
        row("record no -o", {"record", "--attach", "1"}, 1, "memscope record: -o OUT.pickle is required", "");
        row("record two modes", {"record", "-o", tmp, "--attach", "1", "--recover", "x"}, 1, "give exactly one of", "");
        row("record stray operand", {"record", "--output=" + tmp, "stray"}, 1, "record takes no operand, got 'stray'", "");
        row("record --duration 0", {"record", "-o", tmp, "--duration", "0", "--attach", "1"}, 1,
            "--duration takes a positive number, got '0'", "");
        // Issue 18: HOST:PORT attach, --version, --help for every command.
        row("record --token without --attach", {"record", "-o", tmp, "--token", "t", "--", "true"}, 1,
            "--token goes with --attach HOST:PORT", "");
        row("record --light with --attach", {"record", "-o", tmp, "--light", "--attach", "1"}, 1, "--light goes with -- COMMAND",
            "");
        row("record --markers with --attach", {"record", "-o", tmp, "--markers", "--attach", "1"}, 1,
            "--markers goes with -- COMMAND", "");
        row("record --light and --markers", {"record", "-o", tmp, "--light", "--markers", "--", "true"}, 1,
            "give one of --light and --markers", "");
        row("record HOST:PORT without --token", {"record", "-o", tmp, "--attach", "127.0.0.1:9"}, 1,
            "127.0.0.1:9: a TCP agent needs its token (--token T", "");
        row("record bad port", {"record", "-o", tmp, "--attach", "127.0.0.1:70000", "--token", "t"}, 1,
            "127.0.0.1:70000: expected HOST:PORT with a port from 1 to 65535", "");
        row("record nothing listens", {"record", "-o", tmp, "--attach=127.0.0.1:9", "--token=t"}, 1,
            "memscope record: 127.0.0.1:9: cannot connect", "");
        row("--version", {"--version"}, 0, "", QStringLiteral("memscope " MEMSCOPE_VERSION "\n"));
        row("--help", {"--help"}, 0, "", "  record        record a program, or attach to a running agent\n");
        row("record --help", {"record", "--help"}, 0, "",
            "memscope record --attach PID|SOCKET|HOST:PORT [--token T] -o OUT.pickle");
        row("diff -h", {"diff", "-h"}, 0, "", "usage: memscope diff A B");
        for (const char* command : {"summary", "allocations", "diagnose", "estimate", "report", "whatif", "check"})
            row(qPrintable(QStringLiteral("%1 -h").arg(QLatin1String(command))), {command, "-h"}, 0, "",
                QStringLiteral("usage: memscope %1 FILE").arg(QLatin1String(command)));
    }
    void cliArguments()
    {
        QVERIFY(haveCli());
        QFETCH(QStringList, args);
        QFETCH(int, exitCode);
        QFETCH(QString, err);
        QFETCH(QString, out);
        const CliRun r = runCli(args);
        QVERIFY2(r.exitCode == exitCode,
                 qPrintable(QStringLiteral("exit %1, stderr: %2").arg(r.exitCode).arg(QString::fromUtf8(r.err))));
        if (err.isEmpty())
            QVERIFY2(r.err.isEmpty(), r.err.constData());
        else
            QVERIFY2(QString::fromUtf8(r.err).contains(err), r.err.constData());
        QVERIFY2(QString::fromUtf8(r.out).contains(out), r.out.left(300).constData());
    }

    // ---- 3. files over 4 GiB: 64-bit sizes and offsets, on sparse files (no 4 GiB written) ----
    void overFourGiB_data()
    {
        QTest::addColumn<QByteArray>("head");
        QTest::addColumn<QString>("expected");
        const QByteArray release = readAll(QString::fromStdString(sample("release.pickle")));
        QTest::newRow("a real snapshot, then 4 GiB of zeros after STOP") << release << QString();
        const std::string head = "\x80\x04\x8d" + le(uint64_t(5) << 30, 8);
        // 4 GiB + 64 KiB in all: 11 bytes of header, the rest is the string, too short.
        const uint64_t left = (uint64_t(4) << 30) + 65536 - 11;
        QTest::newRow("BINUNICODE8 declaring 5 GiB in a 4 GiB file")
            << QByteArray(head.data(), static_cast<qsizetype>(head.size()))
            << QStringLiteral("byte 2: file ends inside BINUNICODE8 (needs %1 bytes, %2 left)").arg(left + 1).arg(left);
    }
    void overFourGiB()
    {
        QFETCH(QByteArray, head);
        QFETCH(QString, expected);
        const QString file = tempFile(QStringLiteral("big.pickle"));
        QVERIFY(writeFile(file, head.toStdString()));
        const off_t size = (off_t(4) << 30) + 65536;
        const int fd = ::open(QFile::encodeName(file).constData(), O_WRONLY);
        QVERIFY(fd >= 0);
        const bool grown = ::ftruncate(fd, size) == 0;
        ::close(fd);
        if (!grown)
            QSKIP("this file system cannot make a sparse 4 GiB file");
        try {
            auto snap = readSnapshotFile(file.toStdString());
            QVERIFY2(expected.isEmpty(), "loaded a file that must be refused");
            QCOMPARE(snap->fileBytes, uint64_t(size));
            QVERIFY(snap->fileBytes > UINT32_MAX);
            QCOMPARE(snap->devices[0].events.count(), size_t(39));
        } catch (const LoadError& e) {
            QVERIFY2(!expected.isEmpty() && QString::fromStdString(e.what()).contains(expected), e.what());
        }
        QFile::remove(file);
    }

    // ---- fuzzing finds: each input that once crashed, hung or blew up loads or is refused ----
    void regressions_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("expected"); // substring of the error; "" loads; "*" either way
        const QDir dir(QStringLiteral(MEMSCOPE_ROBUSTNESS_DIR "/../regressions"));
        QFile index(dir.filePath(QStringLiteral("EXPECTED")));
        QVERIFY(index.open(QIODevice::ReadOnly | QIODevice::Text));
        int rows = 0;
        while (!index.atEnd()) {
            const QString line = QString::fromUtf8(index.readLine()).trimmed();
            if (line.isEmpty() || line.startsWith(QLatin1Char('#')))
                continue;
            const qsizetype tab = line.indexOf(QLatin1Char('\t'));
            const QString name = tab < 0 ? line : line.left(tab);
            const QString expected = tab < 0 ? QString() : line.mid(tab + 1).trimmed();
            QTest::newRow(qPrintable(name)) << dir.filePath(name) << expected;
            ++rows;
        }
        QVERIFY(rows > 0);
        // Every file in the folder has a row.
        for (const QString& f : dir.entryList(QDir::Files))
            if (f != QLatin1String("EXPECTED") && f != QLatin1String("README.md"))
                QVERIFY2(QString::fromUtf8(readAll(dir.filePath(QStringLiteral("EXPECTED")))).contains(f + QLatin1Char('\t')) ||
                             QString::fromUtf8(readAll(dir.filePath(QStringLiteral("EXPECTED")))).contains(f + QLatin1Char('\n')),
                         qPrintable(f + QStringLiteral(" has no row in EXPECTED")));
    }
    void regressions()
    {
        QFETCH(QString, file);
        QFETCH(QString, expected);
        QVERIFY2(QFile::exists(file), qPrintable(file));
        const std::string bytes = readAll(file).toStdString();
        const QString name = QFileInfo(file).fileName();
        if (name.startsWith(QLatin1String("fuzz-analysis-"))) {
            // Names with bytes that are not UTF-8 once made the JSON writer throw.
            const std::string report = analysisReport(bytes);
            QVERIFY2(!report.empty(), "the input no longer loads: the regression tests nothing");
            QJsonParseError parsed{};
            QJsonDocument::fromJson(QByteArray::fromStdString(report), &parsed);
            QCOMPARE(parsed.error, QJsonParseError::NoError);
            QVERIFY2(QString::fromStdString(report).contains(QString::fromStdString(expected.toStdString())),
                     report.substr(0, 400).c_str());
            return;
        }
        const std::string error = name.startsWith(QLatin1String("fuzz-live-")) ? liveError(bytes)
                                                                               : loadError(bytes, "regression");
        if (expected == QLatin1String("*"))
            return;
        if (expected.isEmpty())
            QVERIFY2(error.empty(), error.c_str());
        else
            QVERIFY2(QString::fromStdString(error).contains(expected), error.c_str());
    }
};

QTEST_GUILESS_MAIN(TestRobustness)
#include "tst_robustness.moc"
