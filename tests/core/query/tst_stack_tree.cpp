// core/query's stack tree (the flame graph) and range report on real recordings: the root is the
// breakdown's total at the peak and at other times, every node is its children plus its own,
// a range's weight is the integral of the requested curve over it, and a node's stacks select
// exactly the allocations under it.
#include "attribute/attributor.h"
#include "query/point_report.h"
#include "query/range_report.h"
#include "query/stack_tree.h"
#include "replay/replay.h"
#include "snapshot/frame_classifier.h"
#include "snapshot/snapshot_reader.h"

#include <QTest>

#include <map>
#include <numeric>

using namespace memscope;

namespace {

struct Loaded {
    std::shared_ptr<const Attribution> attribution;
    std::unique_ptr<FrameClassifier> frames;
};

const Loaded& load(const QString& file)
{
    static std::map<QString, Loaded> cache;
    auto it = cache.find(file);
    if (it == cache.end()) {
        auto snapshot = readSnapshotFile(file.toStdString());
        Loaded l;
        l.attribution = attribute(replaySnapshot(snapshot));
        l.frames = std::make_unique<FrameClassifier>(*snapshot);
        it = cache.emplace(file, std::move(l)).first;
    }
    return it->second;
}

// Every node is its children plus its own; depths and parents agree.
void checkSums(const StackTree& t)
{
    for (size_t i = 0; i < t.nodes.size(); ++i) {
        const StackTreeNode& n = t.nodes[i];
        double w = n.selfWeight;
        int64_t bytes = 0, count = 0;
        for (int32_t c : n.children) {
            QCOMPARE(t.node(c).parent, static_cast<int32_t>(i));
            QCOMPARE(t.node(c).depth, n.depth + 1);
            w += t.node(c).weight;
            bytes += t.node(c).bytes;
            count += t.node(c).count;
        }
        QVERIFY2(std::abs(w - n.weight) <= 1e-9 * std::max(1.0, n.weight), qPrintable(QString::number(i)));
        QVERIFY(bytes <= n.bytes && count <= n.count);
        if (n.children.empty())
            QCOMPARE(n.selfWeight, n.weight);
        for (size_t k = 1; k < n.children.size(); ++k)
            QVERIFY(t.node(n.children[k - 1]).weight >= t.node(n.children[k]).weight);
    }
}

QString sample(const char* name) { return QStringLiteral(MEMSCOPE_SAMPLES_DIR "/") + QLatin1String(name); }

} // namespace

class TstStackTree : public QObject {
    Q_OBJECT

private slots:
    void activeBytes_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<double>("at"); // fraction of the trace; < 0: the peak
        for (const char* f : {"llm_bs16.pickle", "llm_bs2_cpp.pickle", "loss_leak.pickle", "linear3.pickle", "oom.pickle",
                              "libtorch_mlp.pickle", "many_small.pickle"}) {
            QTest::addRow("%s peak", f) << sample(f) << -1.0;
            QTest::addRow("%s start", f) << sample(f) << 0.0;
            QTest::addRow("%s 1/3", f) << sample(f) << 1.0 / 3;
            QTest::addRow("%s 0.77", f) << sample(f) << 0.77;
        }
    }
    void activeBytes()
    {
        QFETCH(QString, file);
        QFETCH(double, at);
        const Loaded& l = load(file);
        const Replay& replay = *l.attribution->replay;
        for (size_t dev = 0; dev < replay.devices.size(); ++dev) {
            const DeviceReplay& d = replay.devices[dev];
            const int64_t event = at < 0 ? peakEvent(d) : static_cast<int64_t>(at * static_cast<double>(d.eventCount - 1));
            const PointReport report = buildPointReport(*l.attribution, dev, event);
            const int64_t breakdown = std::accumulate(report.byCategory.begin(), report.byCategory.end(), int64_t{0});
            for (StackTreeFrames mode : {StackTreeFrames::All, StackTreeFrames::UserAndOp}) {
                auto tree = stackTreeAt(replay, dev, *l.frames, event, mode);
                QCOMPARE(tree->root().bytes, report.requested);
                QCOMPARE(tree->root().bytes, breakdown);
                QCOMPARE(static_cast<int64_t>(tree->root().weight), report.requested);
                QCOMPARE(tree->root().count, static_cast<int64_t>(report.live.size()));
                checkSums(*tree);
                if (report.requested > 0)
                    QVERIFY(tree->nodes.size() > 1);
            }
        }
    }

    // The allocations under a node (stacksUnder, the window's filter) are exactly its bytes, on
    // the heaviest path and on a light leaf.
    void stacksUnderNode_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<int>("mode");
        for (const char* f : {"llm_bs16.pickle", "llm_bs2_cpp.pickle", "libtorch_mlp.pickle"})
            for (int mode : {0, 1})
                QTest::addRow("%s %s", f, mode ? "user+op" : "all") << sample(f) << mode;
    }
    void stacksUnderNode()
    {
        QFETCH(QString, file);
        QFETCH(int, mode);
        const Loaded& l = load(file);
        const Replay& replay = *l.attribution->replay;
        const size_t dev = 0;
        const DeviceReplay& d = replay.devices[dev];
        auto tree = stackTreeAt(replay, dev, *l.frames, peakEvent(d), mode ? StackTreeFrames::UserAndOp : StackTreeFrames::All);
        const auto live = d.activeAfter(peakEvent(d));
        std::vector<int32_t> nodes;
        for (int32_t n = 0; !tree->node(n).children.empty() && nodes.size() < 8; n = tree->node(n).children.front())
            nodes.push_back(n);
        for (int32_t n = 0; !tree->node(n).children.empty(); n = tree->node(n).children.back())
            nodes.push_back(tree->node(n).children.back());
        QVERIFY(nodes.size() > 2);
        for (int32_t n : nodes) {
            const std::vector<uint8_t> mask = stacksUnder(*tree, n, *l.frames);
            QCOMPARE(mask.size(), l.frames->snapshot().stacks.size() + 1);
            int64_t bytes = 0;
            for (AllocationId id : live) {
                const Allocation& a = d.allocation(id);
                if (mask[a.stack.valid() ? static_cast<size_t>(a.stack.value) : mask.size() - 1])
                    bytes += static_cast<int64_t>(a.size);
            }
            QCOMPARE(bytes, tree->node(n).bytes);
            QVERIFY(!stackTreeNodeText(*tree, n, *l.frames).empty());
        }
    }

    // Over a range, the root weighs the integral of the requested curve over the range's times
    // (Σ requested after i × (t[i+1] − t[i])), which is Σ size × lifetime clipped to the range;
    // the range report counts the same allocations and weight.
    void byteSeconds_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<double>("from");
        QTest::addColumn<double>("to");
        for (const char* f : {"llm_bs16.pickle", "loss_leak.pickle", "linear3.pickle", "oom.pickle", "many_small.pickle"}) {
            QTest::addRow("%s whole", f) << sample(f) << 0.0 << 1.0;
            QTest::addRow("%s middle", f) << sample(f) << 0.3 << 0.6;
            QTest::addRow("%s end", f) << sample(f) << 0.9 << 1.0;
        }
    }
    void byteSeconds()
    {
        QFETCH(QString, file);
        QFETCH(double, from);
        QFETCH(double, to);
        const Loaded& l = load(file);
        const Replay& replay = *l.attribution->replay;
        const size_t dev = 0;
        const DeviceReplay& d = replay.devices[dev];
        const EventTable& ev = replay.snapshot->devices[dev].events;
        QVERIFY(ev.hasTime);
        const int64_t first = static_cast<int64_t>(from * static_cast<double>(d.eventCount - 1));
        const int64_t last = static_cast<int64_t>(to * static_cast<double>(d.eventCount - 1));
        double integral = 0;
        bool monotone = true;
        for (int64_t i = first; i < last; ++i) {
            const int64_t dt = ev.timeUs[static_cast<size_t>(i + 1)] - ev.timeUs[static_cast<size_t>(i)];
            monotone = monotone && dt >= 0;
            integral += static_cast<double>(d.requestedAfter(i)) * static_cast<double>(dt) * 1e-6;
        }
        auto tree = stackTreeOverRange(replay, dev, *l.frames, first, last);
        QCOMPARE(tree->unit, StackTreeUnit::ByteSeconds);
        checkSums(*tree);
        if (monotone)
            QVERIFY2(std::abs(tree->root().weight - integral) <= 1e-9 * std::max(1.0, integral),
                     qPrintable(QStringLiteral("%1 vs %2").arg(tree->root().weight).arg(integral)));
        else // time_us steps back a few µs: a clipped life is never negative
            QVERIFY(std::abs(tree->root().weight - integral) <= 1e-3 * std::max(1.0, integral));

        const RangeReport r = buildRangeReport(*l.attribution, dev, first, last);
        QCOMPARE(r.active.requested, tree->root().bytes);
        QCOMPARE(static_cast<int64_t>(r.active.live.size()), tree->root().count);
        QVERIFY(std::abs(r.byteSeconds - tree->root().weight) <= 1e-9 * std::max(1.0, r.byteSeconds));
        QCOMPARE(std::accumulate(r.active.byCategory.begin(), r.active.byCategory.end(), int64_t{0}), r.active.requested);
        QCOMPARE(r.summary.peakBytes, d.requestedAfter(r.active.event));
        // Everything active at the range's peak is in the range's set, and only what was active.
        QVERIFY(r.active.requested >= r.summary.peakBytes);
        for (const ActiveAllocation& a : r.active.live) {
            const Allocation& al = d.allocation(a.id);
            bool active = false;
            for (int64_t e : {first, last, al.allocEvent.valid() ? al.allocEvent.value : first})
                active = active || (e >= first && e <= last && al.activeAfter(e));
            QVERIFY(active);
        }
    }

    // A range of one event weighs nothing in time but counts what was active after it.
    void oneEventRange()
    {
        const Loaded& l = load(sample("llm_bs16.pickle"));
        const Replay& replay = *l.attribution->replay;
        const int64_t e = peakEvent(replay.devices[0]);
        auto tree = stackTreeOverRange(replay, 0, *l.frames, e, e);
        QCOMPARE(tree->root().weight, 0.0);
        const RangeReport r = buildRangeReport(*l.attribution, 0, e, e);
        QCOMPARE(r.active.requested, replay.devices[0].requestedAfter(e));
        QCOMPARE(tree->root().bytes, r.active.requested);
    }
};

QTEST_GUILESS_MAIN(TstStackTree)
#include "tst_stack_tree.moc"
