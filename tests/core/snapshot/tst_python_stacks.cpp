// core/snapshot: the Python frames of a stack and the ATen operator its innermost Python frame
// called (PythonStacks), on real recordings made with stacks="all" (torch's default: native
// frames below and between the Python ones), with stacks="python", and by a libtorch program
// (native frames only).
#include "snapshot/python_stacks.h"
#include "snapshot/snapshot_reader.h"

#include "support/data_file.h"

#include <QTest>

#include <map>
#include <memory>
#include <set>

using namespace memscope;

namespace {

using test::dataFile;

std::shared_ptr<const Snapshot> load(const QString& name)
{
    static std::map<QString, std::shared_ptr<const Snapshot>> cache;
    auto& s = cache[name];
    if (!s)
        s = readSnapshotFile(dataFile(name).toStdString());
    return s;
}

QString q(std::string_view s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }

} // namespace

class TstPythonStacks : public QObject {
    Q_OBJECT

private slots:
    // Each row: a recording, whether it has native frames, the innermost Python frame of some
    // of its stacks ("" for none: the backward, a libtorch program) and the op one of those
    // stacks must give.
    void knownOps_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<bool>("native");
        QTest::addColumn<QString>("innermost");
        QTest::addColumn<QString>("op");
        // nn.Linear's F.linear: the operator Python called, not the addmm/mm inside it
        QTest::newRow("all: a projection") << "llm_bs2_cpp.pickle" << true << "linear.py:134"
                                           << "linear";
        // Qwen2RMSNorm's `hidden_states.pow(2)`, which autocast runs in fp32
        QTest::newRow("all: RMSNorm's pow") << "llm_bs2_cpp.pickle" << true << "modeling_qwen2.py:250"
                                            << "pow_Tensor_Scalar";
        QTest::newRow("all: sdpa") << "llm_bs2_cpp.pickle" << true << "sdpa_attention.py:158"
                                   << "scaled_dot_product_attention";
        QTest::newRow("all: Adam's state") << "llm_bs2_cpp.pickle" << true << "adam.py:178"
                                           << "zeros_like";
        QTest::newRow("all: the backward") << "llm_bs2_cpp.pickle" << true << ""
                                           << "mm";
        QTest::newRow("all: GPT-2's tanh GELU") << "whatif/stacks_all/whatif_gpt2_base.pickle.gz" << true << "activations.py:66"
                                                << "pow_Tensor_Scalar";
        QTest::newRow("all: a convolution") << "whatif/stacks_all/whatif_cnn_base.pickle.gz" << true << "conv.py"
                                            << "conv2d";
        QTest::newRow("python: a projection") << "llm_bs16.pickle" << false << "linear.py:134"
                                              << "";
        // regression: a TorchScript function (DeBERTa's make_log_bucket_position) is a "??"
        // frame of its bare name in a stacks="python" recording; it was taken for a native frame,
        // and the recording for one with operators (the what-if then read no op's dtype)
        QTest::newRow("python: a TorchScript function")
            << "whatif/whatif_deberta_base.pickle.gz" << false << "modeling_deberta_v2.py:97"
            << "";
        QTest::newRow("libtorch") << "libtorch_mlp.pickle" << true << ""
                                  << "addmm";
    }
    void knownOps()
    {
        QFETCH(QString, file);
        QFETCH(bool, native);
        QFETCH(QString, innermost);
        QFETCH(QString, op);
        const auto snap = load(file);
        QVERIFY(snap);
        const PythonStacks stacks(*snap);
        QCOMPARE(stacks.hasNativeFrames(), native);
        std::set<QString> ops;
        for (size_t s = 0; s < snap->stacks.size(); ++s) {
            const StackId id{static_cast<int32_t>(s)};
            const auto py = stacks.frames(id);
            QString where;
            if (!py.empty()) {
                const Frame& f = snap->frames.frame(py.front());
                const QString path = q(snap->str(f.filename));
                where = path.mid(path.lastIndexOf(QLatin1Char('/')) + 1) + QLatin1Char(':') + QString::number(f.line);
            }
            // "conv.py" names the file at any line, "linear.py:134" the line
            const bool match = innermost.isEmpty() ? py.empty()
                                                   : where == innermost || where.startsWith(innermost + QLatin1Char(':'));
            if (match)
                ops.insert(q(stacks.op(id)));
        }
        QVERIFY2(!ops.empty(), qPrintable(QStringLiteral("no stack whose innermost Python frame is ") + innermost));
        QString all;
        for (const QString& o : ops)
            all += o + QLatin1Char(' ');
        QVERIFY2(ops.count(op) == 1, qPrintable(QStringLiteral("ops there: ") + all));
        if (!native)
            QCOMPARE(ops, std::set<QString>{QString()});
    }

    // Every stack's Python frames are its `.py` frames, innermost first, and nothing else;
    // an invalid stack has none.
    void framesAreThePythonOnes_data()
    {
        QTest::addColumn<QString>("file");
        for (const char* f :
             {"llm_bs2_cpp.pickle", "llm_bs16.pickle", "libtorch_mlp.pickle", "whatif/stacks_all/whatif_vit_base.pickle.gz"})
            QTest::newRow(f) << QString::fromLatin1(f);
    }
    void framesAreThePythonOnes()
    {
        QFETCH(QString, file);
        const auto snap = load(file);
        QVERIFY(snap);
        const PythonStacks stacks(*snap);
        size_t withNative = 0;
        for (size_t s = 0; s < snap->stacks.size(); ++s) {
            const StackId id{static_cast<int32_t>(s)};
            std::vector<FrameId> want;
            const auto all = snap->stacks.frames(id);
            for (const FrameId f : all)
                if (snap->str(snap->frames.frame(f).filename).ends_with(".py"))
                    want.push_back(f);
            withNative += want.size() < all.size() ? 1 : 0;
            const auto got = stacks.frames(id);
            QCOMPARE(std::vector<FrameId>(got.begin(), got.end()), want);
        }
        QCOMPARE(withNative > 0, stacks.hasNativeFrames());
        QVERIFY(stacks.frames(StackId{}).empty());
        QVERIFY(stacks.op(StackId{}).empty());
    }
};

QTEST_APPLESS_MAIN(TstPythonStacks)
#include "tst_python_stacks.moc"
