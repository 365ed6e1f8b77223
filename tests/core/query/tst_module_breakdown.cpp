// core/query: the bytes live at the peak by nn.Module path (moduleBreakdown), on real
// recordings: at every depth the rows add up to the peak's requested bytes and its live
// allocations, and the rows are what the stacks show.
#include "analysis/analysis.h"
#include "query/module_breakdown.h"
#include "query/point_report.h"
#include "snapshot/stack_labels.h"
#include "support/data_file.h"

#include <QTest>

#include <set>

using namespace memscope;

namespace {

std::shared_ptr<const Analysis> analysed(const QString& name)
{
    return analyze(AnalysisSource::file(test::dataFile(name).toStdString()), {.load = {}, .until = AnalysisStage::Attributed});
}

} // namespace

class TstModuleBreakdown : public QObject {
    Q_OBJECT

private slots:
    void sumsAtEveryDepth_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<int>("minDepth"); // the deepest path at the peak is at least this deep
        QTest::newRow("qwen, python stacks") << "llm_bs16.pickle" << 5;
        QTest::newRow("qwen, stacks=all") << "llm_bs2_cpp.pickle" << 2;
        QTest::newRow("qwen, checkpointing") << "compare/cmp_qwen_bs8_ckpt.pickle" << 4;
        QTest::newRow("lightning") << "lightning/pl_plain_bf16-mixed.pickle.gz" << 2;
        QTest::newRow("nn.Sequential") << "many_small.pickle" << 0;
        QTest::newRow("user module") << "release.pickle" << 0;
        QTest::newRow("no module at all") << "oom.pickle" << 0;
        QTest::newRow("libtorch") << "libtorch_mlp.pickle" << 0;
    }
    void sumsAtEveryDepth()
    {
        QFETCH(QString, file);
        QFETCH(int, minDepth);
        const auto a = analysed(file);
        const size_t device = a->focusDevice();
        const PointReport peak = buildPointReport(*a->attribution, device, peakEvent(a->replay->devices.at(device)));
        QVERIFY(!peak.live.empty());
        const size_t maxDepth = moduleBreakdown(peak, *a->frames, 1).maxDepth;
        QVERIFY2(maxDepth >= static_cast<size_t>(minDepth), qPrintable(QString::number(maxDepth)));
        for (size_t depth = 1; depth <= maxDepth + 1; ++depth) {
            const ModuleBreakdown b = moduleBreakdown(peak, *a->frames, depth);
            QCOMPARE(b.depth, depth);
            QCOMPARE(b.maxDepth, maxDepth);
            int64_t bytes = 0, count = 0;
            std::array<int64_t, kCategoryCount> byCategory{};
            std::set<std::string> names;
            for (size_t i = 0; i < b.rows.size(); ++i) {
                const ModuleShare& m = b.rows[i];
                bytes += m.bytes;
                count += m.count;
                for (size_t c = 0; c < kCategoryCount; ++c)
                    byCategory[c] += m.byCategory[c];
                QVERIFY(names.insert(m.module).second); // one row per name
                QVERIFY(m.levels <= depth);
                QCOMPARE(m.inModule, !m.module.starts_with("(no module)"));
                QCOMPARE(m.levels > 0, m.inModule);
                if (i > 0)
                    QVERIFY(b.rows[i - 1].bytes >= m.bytes);
            }
            // The rows of every depth add up to the peak's requested bytes, to the byte.
            QCOMPARE(bytes, peak.requested);
            QCOMPARE(b.bytes, peak.requested);
            QCOMPARE(count, static_cast<int64_t>(peak.live.size()));
            QCOMPARE(b.count, count);
            QVERIFY(byCategory == peak.byCategory);
            // A row of depth d holds the allocations whose path starts with it.
            for (const ModuleShare& m : b.rows) {
                int64_t expected = 0;
                for (const ActiveAllocation& l : peak.live) {
                    const ModulePath& p = a->frames->modulePath(l.stack);
                    const bool in = m.inModule ? p.depth() > 0 && p.prefix(depth) == m.module
                                               : p.depth() == 0 && m.module.ends_with(std::string(categoryLabel(l.category)));
                    expected += in ? l.size : 0;
                }
                QCOMPARE(m.bytes, expected);
            }
        }
    }

    // Qwen2 at its peak: the model's body (the decoder layers under modeling_qwen2.py:452) and
    // parameters, gradients and optimizer state outside any module, each by category.
    void qwenTopLevel()
    {
        const auto a = analysed(QStringLiteral("llm_bs16.pickle"));
        const PointReport peak = buildPointReport(*a->attribution, 0, peakEvent(a->replay->devices.at(0)));
        const ModuleBreakdown b = moduleBreakdown(peak, *a->frames, 1);
        std::set<std::string> names;
        int64_t activations = 0;
        for (const ModuleShare& m : b.rows) {
            names.insert(m.module);
            if (m.inModule)
                activations += m.byCategory[static_cast<size_t>(Category::Activation)];
        }
        QVERIFY(names.count("modeling_qwen2.py:452"));
        QVERIFY(names.count("(no module) · Parameters"));
        // every activation live at the peak was made inside a module's forward
        QCOMPARE(activations, peak.byCategory[static_cast<size_t>(Category::Activation)]);
        // deeper, the decoder layers' attention (282) and MLP (296) are rows of their own
        const ModuleBreakdown d3 = moduleBreakdown(peak, *a->frames, 3);
        std::set<std::string> deeper;
        for (const ModuleShare& m : d3.rows)
            deeper.insert(m.module);
        QVERIFY(deeper.count("modeling_qwen2.py:452 > modeling_qwen2.py:388 > modeling_qwen2.py:282"));
        QVERIFY(deeper.count("modeling_qwen2.py:452 > modeling_qwen2.py:388 > modeling_qwen2.py:296"));
    }
};

QTEST_GUILESS_MAIN(TstModuleBreakdown)
#include "tst_module_breakdown.moc"
