// core/allocator/reduction_buffers: the global buffers of ATen's reductions, found in real base
// runs, and their bytes at a larger batch against the same buffers in real runs recorded at that
// batch (tests/data/whatif/changed: the checkpointed runs at 2 to 5 times the base's batch).
#include "allocator/reduction_buffers.h"
#include "analysis/analysis.h"

#include <QTest>

#include <algorithm>
#include <cmath>

using namespace memscope;

namespace {

const QString kDir = QStringLiteral(MEMSCOPE_TESTDATA_DIR "/whatif");

std::shared_ptr<const Analysis> load(const QString& path)
{
    AnalysisOptions o;
    o.until = AnalysisStage::Replayed;
    return analyze(AnalysisSource::file(path.toStdString()), o);
}

// The buffers' bytes, ascending; `factor` applied (1: as recorded).
std::vector<double> buffers(const Analysis& a, double factor)
{
    const DeviceReplay& dr = a.replay->devices.at(0);
    const std::vector<ReductionBuffer> found = reductionBuffers(*a.replay, 0);
    std::vector<double> out;
    for (size_t i = 0; i < found.size(); ++i)
        if (found[i].ctas > 0)
            out.push_back(static_cast<double>(dr.allocations[i].size) * reductionBufferFactor(found[i], factor));
    std::sort(out.begin(), out.end());
    return out;
}

} // namespace

class TstReductionBuffers : public QObject {
    Q_OBJECT

private slots:
    // Swin-T's bias gradients (sum_to over the windows): 384 outputs staged over 512 blocks each
    // at batch 32, of the 704 an output that 2,112 blocks give three output columns.
    void foundInARealRun_data()
    {
        QTest::addColumn<QString>("base");
        QTest::addColumn<int>("count"); // buffers over the recording
        QTest::addColumn<qulonglong>("bytes"); // the largest
        QTest::addColumn<qlonglong>("ctas");
        QTest::addColumn<qlonglong>("cap");
        QTest::newRow("swin") << QStringLiteral("whatif_swin_base") << 135 << qulonglong(100663296) << qlonglong(512)
                              << qlonglong(704);
        QTest::newRow("all: swin") << QStringLiteral("stacks_all/whatif_swin_base") << 135 << qulonglong(100663296)
                                   << qlonglong(512) << qlonglong(704);
        // its q, k and v biases' gradients over 2,048 tokens
        QTest::newRow("llm") << QStringLiteral("whatif_llm_base") << 63 << qulonglong(8388608) << qlonglong(32) << qlonglong(528);
        // its masked-LM bias's gradient: 16,384 outputs at the cap of 17 blocks each
        QTest::newRow("all: roberta") << QStringLiteral("stacks_all/whatif_roberta_base") << 114 << qulonglong(142606336)
                                      << qlonglong(17) << qlonglong(17);
        QTest::newRow("effnet (none)") << QStringLiteral("whatif_effnet_base") << 0 << qulonglong(0) << qlonglong(0)
                                       << qlonglong(0);
    }
    void foundInARealRun()
    {
        QFETCH(QString, base);
        QFETCH(int, count);
        QFETCH(qulonglong, bytes);
        QFETCH(qlonglong, ctas);
        QFETCH(qlonglong, cap);
        const auto a = load(kDir + QLatin1Char('/') + base + QStringLiteral(".pickle.gz"));
        const DeviceReplay& dr = a->replay->devices.at(0);
        const std::vector<ReductionBuffer> found = reductionBuffers(*a->replay, 0);
        int n = 0;
        uint64_t largest = 0;
        ReductionBuffer atLargest;
        for (size_t i = 0; i < found.size(); ++i) {
            if (found[i].ctas <= 0)
                continue;
            ++n;
            QVERIFY(found[i].cap > 0);
            if (dr.allocations[i].size > largest) {
                largest = dr.allocations[i].size;
                atLargest = found[i];
            }
        }
        QCOMPARE(n, count);
        QCOMPARE(qulonglong(largest), bytes);
        QCOMPARE(qlonglong(atLargest.ctas), ctas);
        QCOMPARE(qlonglong(atLargest.cap), cap);
    }

    // Each buffer of the base, grown by the batch's factor, against the same buffer in the run
    // recorded at that batch: within 3% (a thread's values are counted in whole blocks), where
    // growing them in proportion puts Swin's largest at 384 MiB against 132 MiB in the real run.
    void grownLikeARealRunAtThatBatch_data()
    {
        QTest::addColumn<QString>("base");
        QTest::addColumn<QString>("real");
        QTest::addColumn<double>("factor");
        QTest::newRow("swin x4") << QStringLiteral("whatif_swin_base") << QStringLiteral("swin_ckpt_all_batch_x4") << 4.0;
        QTest::newRow("all: swin x4") << QStringLiteral("stacks_all/whatif_swin_base") << QStringLiteral("swin_ckpt_all_batch_x4")
                                      << 4.0;
        QTest::newRow("swin x2 in bf16") << QStringLiteral("whatif_swin_base") << QStringLiteral("swin_bf16_ckpt_all_batch_x2")
                                         << 2.0;
        QTest::newRow("convnext x4") << QStringLiteral("whatif_convnext_base") << QStringLiteral("convnext_ckpt_all_batch_x4")
                                     << 4.0;
        QTest::newRow("vit x5") << QStringLiteral("whatif_vit_base") << QStringLiteral("vit_ckpt_all_batch_x5") << 5.0;
        // at half the batch: RoBERTa's masked-LM bias over 16,384 outputs is capped (17 blocks)
        // at batch 16 and still 16 at batch 8 (its input's 1,024 rows over the block's 4), where
        // halving it put 68 of 128 MiB (regression, session 23: the run -4.1% allocated)
        QTest::newRow("all: roberta x0.5") << QStringLiteral("stacks_all/whatif_roberta_base")
                                           << QStringLiteral("roberta_batch_half") << 0.5;
    }
    void grownLikeARealRunAtThatBatch()
    {
        QFETCH(QString, base);
        QFETCH(QString, real);
        QFETCH(double, factor);
        const auto b = load(kDir + QLatin1Char('/') + base + QStringLiteral(".pickle.gz"));
        const auto r = load(kDir + QStringLiteral("/changed/") + real + QStringLiteral(".pickle.gz"));
        const std::vector<double> predicted = buffers(*b, factor);
        std::vector<double> recorded = buffers(*r, 1.0);
        QVERIFY(!predicted.empty());
        // each predicted buffer has its own recorded one within 3%; the real run may have more
        // (a reduction too short for a global buffer at the base's batch)
        for (auto it = predicted.rbegin(); it != predicted.rend(); ++it) {
            if (*it < 1 << 20)
                continue; // too short a reduction to split at this batch: no buffer
            const auto near = std::min_element(recorded.begin(), recorded.end(),
                                               [&](double x, double y) { return std::fabs(x - *it) < std::fabs(y - *it); });
            QVERIFY2(near != recorded.end() && std::fabs(*near / *it - 1) <= 0.03,
                     qPrintable(QStringLiteral("predicted %1 B, nearest recorded %2 B")
                                    .arg(*it, 0, 'f', 0)
                                    .arg(near != recorded.end() ? *near : 0.0, 0, 'f', 0)));
            recorded.erase(near);
        }
    }

    // The note on a prediction whose buffers reach their cap names the largest recorded one.
    void capNoted_data()
    {
        QTest::addColumn<QString>("base");
        QTest::addColumn<double>("factor");
        QTest::addColumn<QString>("largest"); // "" no note
        QTest::newRow("swin x4") << QStringLiteral("whatif_swin_base") << 4.0 << QStringLiteral("96.00 MiB");
        QTest::newRow("swin x1") << QStringLiteral("whatif_swin_base") << 1.0 << QString();
        QTest::newRow("swin x0.5") << QStringLiteral("whatif_swin_base") << 0.5 << QString();
        QTest::newRow("llm x2") << QStringLiteral("whatif_llm_base") << 2.0 << QString();
        QTest::newRow("llm x32") << QStringLiteral("whatif_llm_base") << 32.0 << QStringLiteral("8.00 MiB");
    }
    void capNoted()
    {
        QFETCH(QString, base);
        QFETCH(double, factor);
        QFETCH(QString, largest);
        const auto a = load(kDir + QLatin1Char('/') + base + QStringLiteral(".pickle.gz"));
        const QString note = QString::fromStdString(
            reductionCapNote(reductionBuffers(*a->replay, 0), a->replay->devices.at(0), factor));
        QCOMPARE(note.isEmpty(), largest.isEmpty());
        if (!largest.isEmpty()) {
            QVERIFY2(note.contains(QStringLiteral("up to ") + largest), qPrintable(note));
            QVERIFY(note.contains(QStringLiteral("132 SMs")));
        }
    }
};

QTEST_GUILESS_MAIN(TstReductionBuffers)
#include "tst_reduction_buffers.moc"
