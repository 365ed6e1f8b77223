#pragma once

#include <string_view>

namespace memscope {

/*
 * What autocast on CUDA does to an ATen operator's output, from torch's op lists (the
 * "Autocast Op Reference" of torch.amp): matrix products, convolutions, linear layers,
 * attention and cuDNN's recurrent layers run in the low precision; pow, exp, log, rsqrt,
 * softmax, norms, reductions (sum, prod, cumsum) and losses run in fp32; any other op
 * follows its inputs (type promotion). An operator is named as torch's dispatcher names it,
 * with or without its overload ("pow_Tensor_Scalar", "softmax_int", "native_layer_norm").
 */
enum class AutocastDtype { Follow, Low, Full };

AutocastDtype autocastDtypeOf(std::string_view atenOp);

// A convolution's forward operator ("conv2d", "convolution", "cudnn_convolution").
bool isConvolutionOp(std::string_view atenOp);
// Scaled dot-product attention, any of its kernels.
bool isAttentionOp(std::string_view atenOp);
// A recurrent layer's forward ("lstm_input", "gru_data", "_cudnn_rnn"), not a cell's.
bool isRecurrentOp(std::string_view atenOp);

} // namespace memscope
