// core/allocator/autocast_ops: the dtype autocast gives an ATen operator's output, as the
// dispatcher names operators in a stacks="all" recording (with their overloads).
#include "allocator/autocast_ops.h"

#include <QTest>

using namespace memscope;

Q_DECLARE_METATYPE(memscope::AutocastDtype)

class TstAutocastOps : public QObject {
    Q_OBJECT

private slots:
    void dtypeOf_data()
    {
        QTest::addColumn<QString>("op");
        QTest::addColumn<AutocastDtype>("dtype");
        // the low-precision list
        for (const char* op : {"linear", "addmm", "mm", "bmm", "baddbmm", "matmul", "conv2d", "convolution", "cudnn_convolution",
                               "_convolution", "einsum", "scaled_dot_product_attention",
                               "_scaled_dot_product_efficient_attention", "_scaled_dot_product_flash_attention"})
            QTest::newRow(op) << QString::fromLatin1(op) << AutocastDtype::Low;
        // the fp32 list, with the dispatcher's overload names
        for (const char* op : {"pow_Tensor_Scalar", "pow_Tensor_Tensor", "exp", "rsqrt", "log_softmax_int", "softmax_int",
                               "_softmax", "native_layer_norm", "layer_norm", "group_norm", "sum_dim_IntList", "sum", "cumsum",
                               "prod_dim_int", "cross_entropy_loss", "nll_loss_nd", "mse_loss",
                               "binary_cross_entropy_with_logits", "linalg_vector_norm", "softplus", "log1p",
                               // F.interpolate (SegFormer's decoder, DeepLabV3's logits), as recorded
                               "upsample_bilinear2d_vec", "upsample_bilinear2d", "upsample_nearest2d_vec",
                               "_upsample_bilinear2d_aa", "upsample_trilinear3d",
                               // a composite of pow: Nemotron's squared ReLU, fp32 in its real run
                               // under autocast (truth_heldout24.json)
                               "square"})
            QTest::newRow(op) << QString::fromLatin1(op) << AutocastDtype::Full;
        // everything else follows its inputs; names that only start like a listed one do too
        for (const char* op :
             {"mul_Tensor",      "add_Tensor", "tanh",     "gelu",   "silu",     "relu",        "dropout", "native_dropout",
              "embedding",       "batch_norm", "mean_dim", "expand", "mvlgamma", "logical_and", "normal_", "cat",
              "to_dtype_layout", "zeros_like", "sqrt",     ""})
            QTest::newRow(*op ? op : "(none)") << QString::fromLatin1(op) << AutocastDtype::Follow;
    }
    void dtypeOf()
    {
        QFETCH(QString, op);
        QFETCH(AutocastDtype, dtype);
        const std::string s = op.toStdString();
        QCOMPARE(autocastDtypeOf(s), dtype);
    }

    void convolutionsAndAttention()
    {
        QVERIFY(isConvolutionOp("conv2d"));
        QVERIFY(isConvolutionOp("cudnn_convolution"));
        QVERIFY(!isConvolutionOp("convolution_backward"));
        QVERIFY(!isConvolutionOp("linear"));
        QVERIFY(isAttentionOp("scaled_dot_product_attention"));
        QVERIFY(isAttentionOp("_scaled_dot_product_cudnn_attention"));
        QVERIFY(!isAttentionOp("_scaled_dot_product_efficient_attention_backward"));
        QVERIFY(!isAttentionOp("softmax_int"));
    }
};

QTEST_APPLESS_MAIN(TstAutocastOps)
#include "tst_autocast_ops.moc"
