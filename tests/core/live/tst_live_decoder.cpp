#include "live/live_decoder.h"
#include "live/protocol.h"

#include <QTest>

#include <cstring>
#include <string>

using namespace memscope;

namespace {

// A tiny encoder for hand-made streams (the agent's is in Python).
struct Stream {
    std::string bytes;

    void msg(uint8_t type, const std::string& payload)
    {
        const uint32_t len = static_cast<uint32_t>(payload.size() + 1);
        bytes.append(reinterpret_cast<const char*>(&len), 4);
        bytes.push_back(static_cast<char>(type));
        bytes += payload;
    }
    template <class T>
    static std::string le(T v)
    {
        return std::string(reinterpret_cast<const char*>(&v), sizeof v);
    }
    void hello(uint16_t major = 1, const std::string& json = R"({"pid": 42, "mode": "replay", "argv": ["t.py", "-x"]})")
    {
        msg(1, std::string("MSCP", 4) + le<uint16_t>(major) + le<uint16_t>(0) + json);
    }
    void string(uint32_t id, const std::string& s) { msg(2, le(id) + s); }
    void frame(uint32_t id, uint32_t file, uint32_t name, int32_t line) { msg(3, le(id) + le(file) + le(name) + le(line)); }
    void stack(uint32_t id, std::initializer_list<uint32_t> frames)
    {
        std::string p = le(id) + le<uint32_t>(static_cast<uint32_t>(frames.size()));
        for (uint32_t f : frames)
            p += le(f);
        msg(4, p);
    }
    static std::string event(uint8_t action, uint64_t addr, uint64_t size, uint32_t stack = 0, int64_t t = 100)
    {
        return std::string(1, static_cast<char>(action)) + std::string(1, '\1') + le<uint16_t>(0) + le(stack) + le(addr) +
               le(size) + le<uint64_t>(0) + le(t) + le<uint32_t>(0) + le<uint32_t>(0);
    }
    void events(uint16_t device, const std::string& records, uint32_t count)
    {
        msg(5, le(device) + le<uint16_t>(0) + le(count) + records);
    }
    std::span<const uint8_t> span() const { return {reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}; }
};

Stream validPrefix()
{
    Stream s;
    s.hello();
    s.string(1, "train.py");
    s.string(2, "step");
    s.frame(1, 1, 2, 7);
    s.stack(1, {1});
    s.events(0, Stream::event(0, 0x1000, 512, 1) + Stream::event(2, 0x1000, 512, 0), 2);
    return s;
}

} // namespace

class TestLiveDecoder : public QObject {
    Q_OBJECT
private slots:
    void validStreamInAnyPieces_data()
    {
        QTest::addColumn<int>("piece");
        QTest::newRow("whole") << 1000000;
        for (int p : {1, 3, 7, 64})
            QTest::newRow(qPrintable(QString::number(p))) << p;
    }
    void validStreamInAnyPieces()
    {
        QFETCH(int, piece);
        Stream s = validPrefix();
        s.msg(6, Stream::le<int16_t>(0) + std::string(1, '\1') + std::string(1, '\0') + Stream::le<uint32_t>(2) +
                     Stream::le<int64_t>(150));
        s.msg(7, R"({"expandable_segments": false, "roundup_power2_divisions": {"1": 0}, "x": 0.5})");
        s.msg(10, R"({"reason": "exit", "memory_stats": {"0": {"requested_bytes.all.peak": 512}}})");
        LiveRecording rec;
        LiveDecoder dec(rec);
        const auto all = s.span();
        const size_t step = static_cast<size_t>(piece);
        for (size_t i = 0; i < all.size(); i += step)
            dec.feed(all.subspan(i, std::min(step, all.size() - i)));
        QCOMPARE(dec.pendingBytes(), size_t(0));
        const Snapshot& m = rec.model();
        QCOMPARE(m.devices[0].events.count(), size_t(2));
        QCOMPARE(m.devices[0].events.addr[0], uint64_t(0x1000));
        QVERIFY(m.devices[0].events.hasTime);
        const auto frames = m.stacks.frames(m.devices[0].events.stack[0]);
        QCOMPARE(frames.size(), size_t(1));
        QCOMPARE(m.str(m.frames.frame(frames[0]).filename), std::string_view("train.py"));
        QCOMPARE(m.annotations.size(), size_t(1));
        QCOMPARE(m.annotations[0].stage, AnnotationStage::End);
        QCOMPARE(m.allocatorSettings.at("roundup_power2_divisions.1"), std::string("0"));
        QCOMPARE(m.allocatorSettings.at("expandable_segments"), std::string("False"));
        QCOMPARE(m.allocatorSettings.at("x"), std::string("0.5"));
        QCOMPARE(rec.hello().pid, int64_t(42));
        QCOMPARE(rec.hello().commandLine, std::string("t.py -x"));
        QVERIFY(rec.stats().ended);
        QCOMPARE(rec.stats().torchRequestedPeak, int64_t(512));
        auto copy = rec.snapshot();
        QCOMPARE(copy->devices[0].events.count(), size_t(2));
        QCOMPARE(copy->str(copy->frames.frame(frames[0]).name), std::string_view("step"));
    }

    // Every malformed message: an error naming what is wrong, the data before it kept.
    void malformed_data()
    {
        QTest::addColumn<QByteArray>("tail");
        QTest::addColumn<QString>("expected");
        auto tail = [](auto f) {
            Stream s;
            f(s);
            return QByteArray(s.bytes.data(), static_cast<int>(s.bytes.size()));
        };
        QTest::newRow("oversized length") << tail([](Stream& s) { s.bytes += Stream::le<uint32_t>(0xFFFFFFF0u); })
                                          << "outside 1..";
        QTest::newRow("zero length") << tail([](Stream& s) { s.bytes += Stream::le<uint32_t>(0); }) << "outside 1..";
        QTest::newRow("events count lies") << tail([](Stream& s) { s.events(0, Stream::event(0, 1, 1), 1000); })
                                           << "1000 events need";
        QTest::newRow("undefined stack") << tail([](Stream& s) { s.events(0, Stream::event(0, 1, 1, 99), 1); }) << "stack 99";
        QTest::newRow("undefined frame") << tail([](Stream& s) { s.stack(5, {77}); }) << "frame 77";
        QTest::newRow("string twice") << tail([](Stream& s) { s.string(1, "again"); }) << "defined twice";
        QTest::newRow("huge device") << tail([](Stream& s) { s.events(60000, Stream::event(0, 1, 1), 1); }) << "device 60000";
        QTest::newRow("bad json") << tail([](Stream& s) { s.msg(7, "{not json"); }) << "invalid JSON";
        QTest::newRow("json not object") << tail([](Stream& s) { s.msg(9, "[1,2]"); }) << "JSON object";
        QTest::newRow("segments overflow") << tail([](Stream& s) { s.msg(8, Stream::le<uint32_t>(0x7FFFFFFF)); }) << "announces";
        QTest::newRow("frame too short") << tail([](Stream& s) { s.msg(3, "ab"); }) << "too short";
        QTest::newRow("second hello") << tail([](Stream& s) { s.hello(); }) << "second HELLO";
        QTest::newRow("stack too long") << tail([](Stream& s) {
            s.msg(4, Stream::le<uint32_t>(9) + Stream::le<uint32_t>(1u << 20));
        }) << "at most";
    }
    void malformed()
    {
        QFETCH(QByteArray, tail);
        QFETCH(QString, expected);
        Stream s = validPrefix();
        LiveRecording rec;
        LiveDecoder dec(rec);
        dec.feed(s.span());
        const uint64_t goodOffset = dec.offset();
        try {
            dec.feed({reinterpret_cast<const uint8_t*>(tail.constData()), static_cast<size_t>(tail.size())});
            QFAIL("expected LiveProtocolError");
        } catch (const LiveProtocolError& e) {
            const QString what = QString::fromUtf8(e.what());
            QVERIFY2(what.contains(expected), qPrintable(what));
            QVERIFY2(what.contains(QStringLiteral("offset %1").arg(goodOffset)), qPrintable(what));
        }
        QVERIFY(dec.failed());
        QCOMPARE(rec.model().devices[0].events.count(), size_t(2)); // kept
        QVERIFY_THROWS_EXCEPTION(LiveProtocolError, dec.feed(s.span()));
    }

    void firstMessageMustBeHello()
    {
        LiveRecording rec;
        LiveDecoder dec(rec);
        Stream s;
        s.string(1, "x");
        QVERIFY_THROWS_EXCEPTION(LiveProtocolError, dec.feed(s.span()));
        Stream v;
        v.hello(2);
        LiveRecording rec2;
        LiveDecoder dec2(rec2);
        try {
            dec2.feed(v.span());
            QFAIL("expected a version error");
        } catch (const LiveProtocolError& e) {
            QVERIFY(QString::fromUtf8(e.what()).contains(QLatin1String("protocol version 2")));
        }
        Stream m;
        m.msg(1, "HTTP/1.1 200 OK");
        LiveRecording rec3;
        LiveDecoder dec3(rec3);
        QVERIFY_THROWS_EXCEPTION(LiveProtocolError, dec3.feed(m.span()));
    }

    // Regression (issue 18): an agent that refuses a client (a wrong TCP token) answers with
    // ERROR; that was reported as "first message has type 12, expected HELLO (1)".
    void refusalBeforeHelloSaysWhy()
    {
        Stream s;
        s.msg(static_cast<uint8_t>(live::MessageType::Error), R"({"message": "wrong or missing token"})");
        LiveRecording rec;
        LiveDecoder dec(rec);
        try {
            dec.feed(s.span());
            QFAIL("expected a refusal");
        } catch (const LiveRefused& e) {
            QCOMPARE(QString::fromUtf8(e.what()), QStringLiteral("the agent refused the connection: wrong or missing token"));
        }
        QVERIFY(dec.failed());
        QVERIFY(rec.hello().json.empty()); // no HELLO was taken before the refusal
    }

    void unknownTypesAreSkipped()
    {
        Stream s = validPrefix();
        s.msg(60, "a future message");
        s.events(0, Stream::event(1, 0x1000, 512), 1);
        LiveRecording rec;
        LiveDecoder dec(rec);
        dec.feed(s.span());
        QCOMPARE(rec.model().devices[0].events.count(), size_t(3));
    }

    void oomCarriesDeviceFree()
    {
        Stream s = validPrefix();
        s.events(1, Stream::event(8, 123456, 1 << 20), 1);
        LiveRecording rec;
        LiveDecoder dec(rec);
        dec.feed(s.span());
        const EventTable& t = rec.model().devices.at(1).events;
        QCOMPARE(t.action[0], Action::Oom);
        QCOMPARE(t.addr[0], uint64_t(0));
        QCOMPARE(t.deviceFree.at(0), uint64_t(123456));
        QCOMPARE(rec.model().devices.at(1).device, 1);
    }

    // Regression: every EVENTS message reserved exactly the rows it needed, so each one
    // reallocated (and copied) every column: a long stream cost time quadratic in its length.
    // Thousands of small messages now move the columns a logarithmic number of times.
    void manySmallMessagesGrowGeometrically()
    {
        Stream s = validPrefix();
        LiveRecording rec;
        LiveDecoder dec(rec);
        dec.feed(s.span());
        int moves = 0;
        const Action* before = rec.model().devices.at(0).events.action.data();
        for (int m = 0; m < 4000; ++m) {
            Stream one;
            one.events(
                0, Stream::event(0, 0x100000 + uint64_t(m) * 512, 512) + Stream::event(2, 0x100000 + uint64_t(m) * 512, 512), 2);
            dec.feed(one.span());
            const Action* now = rec.model().devices.at(0).events.action.data();
            moves += now != before;
            before = now;
        }
        QCOMPARE(rec.model().devices.at(0).events.count(), size_t(2 + 8000));
        QVERIFY2(moves <= 20, qPrintable(QString::number(moves)));
    }
};

QTEST_GUILESS_MAIN(TestLiveDecoder)
#include "tst_live_decoder.moc"
