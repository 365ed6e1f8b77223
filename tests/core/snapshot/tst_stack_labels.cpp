// core/snapshot: the op and the nn.Module path behind a stack (StackLabels), on known stacks
// of real recordings: transformers' Qwen2 (Python stacks and stacks="all"), activation
// checkpointing's forward and recomputation, Lightning, a user's own module, nn.Sequential, and
// stacks outside any module (parameters moved to the GPU, the optimizer, a frameless backward).
#include "snapshot/frame_classifier.h"
#include "snapshot/snapshot_reader.h"
#include "snapshot/stack_labels.h"

#include "support/data_file.h"

#include <QTest>

#include <map>
#include <memory>
#include <set>

using namespace memscope;

Q_DECLARE_METATYPE(memscope::ModuleOrigin)

namespace {

using test::dataFile;

struct Loaded {
    std::shared_ptr<const Snapshot> snapshot;
    std::unique_ptr<FrameClassifier> frames;
};

const Loaded& load(const QString& name)
{
    static std::map<QString, Loaded> cache;
    Loaded& l = cache[name];
    if (!l.snapshot) {
        l.snapshot = readSnapshotFile(dataFile(name).toStdString());
        l.frames = std::make_unique<FrameClassifier>(*l.snapshot);
    }
    return l;
}

QString q(std::string_view s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }

} // namespace

class TstStackLabels : public QObject {
    Q_OBJECT

private slots:
    // Each row: an alloc event of a real recording, the op and the module path its stack gives.
    void knownStacks_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<int>("event");
        QTest::addColumn<QString>("op");
        QTest::addColumn<QString>("module");
        QTest::addColumn<ModuleOrigin>("origin");
        // The embedding: Qwen2ForCausalLM (452) calls the model, whose line 356 calls embed_tokens.
        QTest::newRow("qwen embedding") << "llm_bs16.pickle" << 133 << "functional.py:2567 embedding"
                                        << "modeling_qwen2.py:452 > modeling_qwen2.py:356 > sparse.py:189"
                                        << ModuleOrigin::Forward;
        // Attention: the decoder layer (388 loops over them, through GradientCheckpointingLayer's
        // __call__) calls self_attn at 282; the attention calls sdpa at 220.
        QTest::newRow("qwen sdpa") << "llm_bs16.pickle" << 216 << "sdpa_attention.py:158 sdpa_attention_forward"
                                   << "modeling_qwen2.py:452 > modeling_qwen2.py:388 > modeling_qwen2.py:282 > "
                                      "modeling_qwen2.py:220"
                                   << ModuleOrigin::Forward;
        // The MLP's activation: layer 296 → Qwen2MLP 47 → the activation module.
        QTest::newRow("qwen mlp silu") << "llm_bs16.pickle" << 283 << "functional.py:2397 silu"
                                       << "modeling_qwen2.py:452 > modeling_qwen2.py:388 > modeling_qwen2.py:296 > "
                                          "modeling_qwen2.py:47 > activations.py:103"
                                       << ModuleOrigin::Forward;
        // model.to("cuda"): nn.Module machinery but no forward.
        QTest::newRow("parameters moved") << "llm_bs16.pickle" << 1 << "modeling_utils.py:3706 to"
                                          << "" << ModuleOrigin::None;
        QTest::newRow("optimizer state") << "llm_bs16.pickle" << 3441 << "adam.py:178 _init_group"
                                         << "" << ModuleOrigin::None;
        // stacks="python" records no frame on the autograd engine's thread.
        QTest::newRow("backward, no frames") << "llm_bs16.pickle" << 1283 << ""
                                             << "" << ModuleOrigin::None;
        // stacks="all": the backward's native frames name the autograd node.
        QTest::newRow("backward node") << "llm_bs2_cpp.pickle" << 629 << "MmBackward0 > aten::mm"
                                       << "(backward) > MmBackward0" << ModuleOrigin::AutogradNode;
        // Activation checkpointing: the forward runs the layer through checkpoint(), the
        // backward runs it again from the saved-tensor hook.
        QTest::newRow("checkpointed forward")
            << "compare/cmp_qwen_bs8_ckpt.pickle" << 181 << "modeling_qwen2.py:250 forward"
            << "modeling_qwen2.py:452 > modeling_qwen2.py:388 > modeling_qwen2.py:280 > modeling_qwen2.py:250"
            << ModuleOrigin::Forward;
        QTest::newRow("recomputation") << "compare/cmp_qwen_bs8_ckpt.pickle" << 1456 << "modeling_qwen2.py:250 forward"
                                       << "(recompute) > modeling_qwen2.py:280 > modeling_qwen2.py:250"
                                       << ModuleOrigin::Recompute;
        // Lightning: training_step calls self(x), the LightningModule's own forward (r.py:31).
        QTest::newRow("lightning") << "lightning/pl_plain_32-true.pickle.gz" << 78 << "functional.py:2567 embedding"
                                   << "r.py:31 > sparse.py:189" << ModuleOrigin::Forward;
        // The user's own module (train.py:102) around an nn.Linear.
        QTest::newRow("user module") << "release.pickle" << 6 << "linear.py:134 forward"
                                     << "train.py:102 > linear.py:134" << ModuleOrigin::Forward;
        // nn.Sequential's forward loops over its children from one line.
        QTest::newRow("sequential") << "many_small.pickle" << 218 << "linear.py:134 forward"
                                    << "container.py:253 > linear.py:134" << ModuleOrigin::Forward;
    }
    void knownStacks()
    {
        QFETCH(QString, file);
        QFETCH(int, event);
        QFETCH(QString, op);
        QFETCH(QString, module);
        QFETCH(ModuleOrigin, origin);
        const Loaded& l = load(file);
        const EventTable& ev = l.snapshot->devices.at(0).events;
        QVERIFY(static_cast<size_t>(event) < ev.count());
        QCOMPARE(ev.action[static_cast<size_t>(event)], Action::Alloc);
        const StackId stack = ev.stack[static_cast<size_t>(event)];
        QCOMPARE(q(l.frames->opText(stack)), op);
        QCOMPARE(q(l.frames->moduleText(stack)), module);
        const ModulePath& path = l.frames->modulePath(stack);
        QCOMPARE(path.origin, origin);
        // The levels, joined, are the text; each prefix ends at a level.
        QStringList levels;
        for (size_t i = 0; i < path.depth(); ++i)
            levels << q(path.level(i));
        QCOMPARE(levels.join(QStringLiteral(" > ")), module);
        for (size_t i = 1; i <= path.depth(); ++i)
            QCOMPARE(q(path.prefix(i)), QStringList(levels.mid(0, static_cast<qsizetype>(i))).join(QStringLiteral(" > ")));
        QCOMPARE(q(path.prefix(path.depth() + 3)), module);
        QCOMPARE(q(path.prefix(0)), QString());
    }

    // Computed once per distinct stack: equal stacks share one text, and every stack of the
    // pool has its entry (an id past the pool, or none, reads as empty).
    void oncePerStack()
    {
        const Loaded& l = load(QStringLiteral("llm_bs16.pickle"));
        const StackLabels& labels = l.frames->labels();
        QCOMPARE(labels.stackCount(), l.snapshot->stacks.size());
        std::set<std::string> distinct(labels.ops().begin(), labels.ops().end());
        QCOMPARE(distinct.size(), labels.ops().size()); // each op text held once
        std::set<std::string> paths;
        for (const ModulePath& p : labels.paths())
            paths.insert(p.text);
        QCOMPARE(paths.size(), labels.paths().size());
        QVERIFY(labels.paths().size() > 20); // Qwen2's modules, not one path
        QCOMPARE(q(l.frames->moduleText(StackId{})), QString());
        QCOMPARE(q(l.frames->opText(StackId{static_cast<int32_t>(labels.stackCount())})), QString());
        // the same reference for the same stack: looked up, not recomputed
        const StackId s = l.snapshot->devices.at(0).events.stack[216];
        QCOMPARE(&l.frames->moduleText(s), &l.frames->moduleText(s));
    }

    // Every activation of the Qwen2 run comes from one user line; the module paths tell them
    // apart by block (attention, MLP, norms, embedding, the LM head).
    void modulesTellOneUserLineApart()
    {
        const Loaded& l = load(QStringLiteral("llm_bs16.pickle"));
        const EventTable& ev = l.snapshot->devices.at(0).events;
        std::set<std::string> userFrames, modules, topLevel;
        for (size_t i = 0; i < ev.count(); ++i) {
            if (ev.action[i] != Action::Alloc || !ev.stack[i].valid())
                continue;
            const ModulePath& p = l.frames->modulePath(ev.stack[i]);
            if (p.origin != ModuleOrigin::Forward)
                continue;
            userFrames.insert(l.frames->frameText(l.frames->topUserFrame(ev.stack[i])));
            modules.insert(p.text);
            topLevel.insert(std::string(p.prefix(1)));
        }
        QCOMPARE(userFrames.size(), size_t{1}); // train.py:61 llm_train
        QVERIFY(modules.size() >= 20);
        // the model's body (452) and the LM head (465)
        QVERIFY(topLevel.count("modeling_qwen2.py:452"));
        QVERIFY(topLevel.count("modeling_qwen2.py:465"));
    }
};

QTEST_GUILESS_MAIN(TstStackLabels)
#include "tst_stack_labels.moc"
