#include "allocator/autocast_ops.h"

#include <array>

namespace memscope {

namespace {

// `op` is `name` or `name` followed by an overload ("_Tensor_Scalar", "_int"), not its
// backward ("convolution_backward", "_softmax_backward_data").
bool named(std::string_view op, std::string_view name)
{
    return op.starts_with(name) && (op.size() == name.size() || op[name.size()] == '_') &&
           op.find("backward", name.size()) == std::string_view::npos;
}

template <size_t N>
bool namedAny(std::string_view op, const std::array<std::string_view, N>& names)
{
    for (std::string_view n : names)
        if (named(op, n))
            return true;
    return false;
}

constexpr std::array<std::string_view, 9> kConvolutions{"conv1d",           "conv2d",           "conv3d",
                                                        "convolution",      "_convolution",     "cudnn_convolution",
                                                        "conv_transpose1d", "conv_transpose2d", "conv_transpose3d"};
constexpr std::array<std::string_view, 7> kAttention{
    "scaled_dot_product_attention",        "_scaled_dot_product_flash_attention", "_scaled_dot_product_efficient_attention",
    "_scaled_dot_product_cudnn_attention", "_scaled_dot_product_attention_math",  "_flash_attention_forward",
    "_efficient_attention_forward"};
constexpr std::array<std::string_view, 23> kLow{"mm",
                                                "bmm",
                                                "addmm",
                                                "baddbmm",
                                                "addbmm",
                                                "addmv",
                                                "addr",
                                                "mv",
                                                "matmul",
                                                "linear",
                                                "_addmm_activation",
                                                "einsum",
                                                "conv_tbc",
                                                "prelu",
                                                "chain_matmul",
                                                "linalg_multi_dot",
                                                "lstm_cell",
                                                "gru_cell",
                                                "_thnn_fused_lstm_cell",
                                                "_thnn_fused_gru_cell",
                                                "rnn_tanh_cell",
                                                "rnn_relu_cell",
                                                "_convolution_mode"};
// cuDNN's recurrent layers: autocast casts their input and a reflattened copy of their weights
// (AutocastRNN.cpp), so their outputs and reserve space are low precision
constexpr std::array<std::string_view, 6> kRecurrent{"lstm", "gru", "rnn_tanh", "rnn_relu", "_cudnn_rnn", "miopen_rnn"};
constexpr std::array<std::string_view, 62> kFull{
    "pow", "exp", "expm1", "log", "log10", "log2", "log1p", "reciprocal", "rsqrt", "acos", "asin", "cosh", "sinh", "tan",
    "erfinv", "softplus", "softmax", "_softmax", "log_softmax", "_log_softmax", "softmin", "layer_norm", "native_layer_norm",
    "group_norm", "native_group_norm", "norm", "linalg_vector_norm", "frobenius_norm", "nuclear_norm", "sum", "prod", "cumsum",
    "cumprod", "logsumexp", "cosine_similarity", "cdist", "_cdist_forward", "pdist", "dist", "renorm", "cross_entropy_loss",
    "nll_loss", "nll_loss2d", "nll_loss_nd", "mse_loss", "l1_loss", "smooth_l1_loss", "binary_cross_entropy_with_logits",
    "kl_div",
    // a composite of pow (`x.pow(2)` inside): autocast's pow makes it fp32 (Nemotron's squared
    // ReLU, `torch.square(relu(x))`: 64 MiB of fp32 in its real run under autocast)
    "square",
    // interpolation (F.interpolate): autocast's fp32 list too
    "upsample_nearest1d", "_upsample_nearest_exact1d", "upsample_nearest2d", "_upsample_nearest_exact2d", "upsample_nearest3d",
    "_upsample_nearest_exact3d", "upsample_linear1d", "upsample_bilinear2d", "_upsample_bilinear2d_aa", "upsample_trilinear3d",
    "upsample_bicubic2d", "_upsample_bicubic2d_aa"};

} // namespace

AutocastDtype autocastDtypeOf(std::string_view op)
{
    if (op.empty())
        return AutocastDtype::Follow;
    if (namedAny(op, kLow) || isConvolutionOp(op) || isAttentionOp(op) || isRecurrentOp(op))
        return AutocastDtype::Low;
    if (namedAny(op, kFull) || op.ends_with("_loss"))
        return AutocastDtype::Full;
    return AutocastDtype::Follow;
}

bool isConvolutionOp(std::string_view op) { return namedAny(op, kConvolutions); }

bool isAttentionOp(std::string_view op) { return namedAny(op, kAttention); }

bool isRecurrentOp(std::string_view op) { return namedAny(op, kRecurrent); }

} // namespace memscope
