// The eager op API: each function runs one op on the device its inputs live on (see dispatch.h).
// Op types in quotes are the names in traces and in the registry. Every function takes an optional
// CallOptions last (instance name, stream).
#pragma once

#include <cstdint>
#include <vector>

#include "npuscope/emulator/dispatch.h"
#include "npuscope/emulator/tensor.h"

namespace npuscope::emulator::ops {

using Ints = std::vector<std::int64_t>;
using CO = CallOptions;

// ---- cube ---------------------------------------------------------------------------------------
// "MatMul": numpy matmul semantics (1-D promotion, batch dims broadcast).
Tensor matmul(const Tensor& a, const Tensor& b, const CO& o = {});
// "BatchMatMul": [B, M, K] x [B, K, N] (adj_x / adj_y transpose the last two dims).
Tensor batch_matmul(const Tensor& a, const Tensor& b, bool adj_x = false, bool adj_y = false, const CO& o = {});
// "Gemm": alpha * op(A) op(B) + beta * C, C broadcast to [M, N]; `c` may be undefined.
Tensor gemm(const Tensor& a, const Tensor& b, const Tensor& c, float alpha = 1.0f, float beta = 1.0f,
            bool trans_a = false, bool trans_b = false, const CO& o = {});
// "Conv2d": NCHW input, [Cout, Cin/groups, kH, kW] weight, optional bias [Cout].
// pads = {top, left, bottom, right}.
Tensor conv2d(const Tensor& x, const Tensor& w, const Tensor& bias, Ints strides = {1, 1}, Ints pads = {0, 0, 0, 0},
              Ints dilations = {1, 1}, std::int64_t groups = 1, const CO& o = {});

// ---- element-wise (numpy broadcasting) ---------------------------------------------------------
Tensor add(const Tensor& a, const Tensor& b, const CO& o = {});  // "Add"
Tensor sub(const Tensor& a, const Tensor& b, const CO& o = {});  // "Sub"
Tensor mul(const Tensor& a, const Tensor& b, const CO& o = {});  // "Mul"
Tensor div(const Tensor& a, const Tensor& b, const CO& o = {});  // "Div"
Tensor pow(const Tensor& a, const Tensor& b, const CO& o = {});  // "Pow"
Tensor relu(const Tensor& x, const CO& o = {});                  // "Relu"
Tensor gelu(const Tensor& x, const CO& o = {});       // "Gelu": erf form on cpu, tanh form + Padé tanh on npu
Tensor fast_gelu(const Tensor& x, const CO& o = {});  // "FastGelu": x / (1 + e^(-1.702x))
Tensor silu(const Tensor& x, const CO& o = {});       // "Silu"
Tensor sigmoid(const Tensor& x, const CO& o = {});    // "Sigmoid"
Tensor tanh(const Tensor& x, const CO& o = {});       // "Tanh"
Tensor exp(const Tensor& x, const CO& o = {});        // "Exp"
Tensor log(const Tensor& x, const CO& o = {});        // "Log"
Tensor sqrt(const Tensor& x, const CO& o = {});       // "Sqrt"
Tensor rsqrt(const Tensor& x, const CO& o = {});      // "Rsqrt"
Tensor neg(const Tensor& x, const CO& o = {});        // "Neg"
Tensor abs(const Tensor& x, const CO& o = {});        // "Abs"
// "Where": cond (bool) ? a : b, broadcast.
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b, const CO& o = {});
// "Cast"
Tensor cast(const Tensor& x, DType dtype, const CO& o = {});

// ---- normalisation and softmax ----------------------------------------------------------------
Tensor softmax(const Tensor& x, std::int64_t axis = -1, const CO& o = {});      // "Softmax"
Tensor log_softmax(const Tensor& x, std::int64_t axis = -1, const CO& o = {});  // "LogSoftmax"
// "LayerNorm": normalises over dims [axis, ndim); scale/bias of that trailing shape (bias optional).
Tensor layer_norm(const Tensor& x, const Tensor& scale, const Tensor& bias, std::int64_t axis = -1,
                  float epsilon = 1e-5f, const CO& o = {});
// "RMSNorm": x / sqrt(mean(x², last dim) + eps) * scale.
Tensor rms_norm(const Tensor& x, const Tensor& scale, float epsilon = 1e-6f, const CO& o = {});
// "BatchNorm" (inference): NC..., per-channel scale, bias, mean, var.
Tensor batch_norm(const Tensor& x, const Tensor& scale, const Tensor& bias, const Tensor& mean, const Tensor& var,
                  float epsilon = 1e-5f, const CO& o = {});

// ---- pooling (NCHW) ----------------------------------------------------------------------------
// pads = {top, left, bottom, right}.
Tensor max_pool2d(const Tensor& x, Ints kernel, Ints strides, Ints pads = {0, 0, 0, 0}, Ints dilations = {1, 1},
                  bool ceil_mode = false, const CO& o = {});  // "MaxPool"
Tensor avg_pool2d(const Tensor& x, Ints kernel, Ints strides, Ints pads = {0, 0, 0, 0}, bool count_include_pad = false,
                  bool ceil_mode = false, const CO& o = {});  // "AvgPool"
Tensor global_avg_pool(const Tensor& x, const CO& o = {});    // "GlobalAvgPool": [N, C, 1, 1]

// ---- shape and data movement -------------------------------------------------------------------
Tensor reshape(const Tensor& x, Ints shape, const CO& o = {});                      // "Reshape": one -1 allowed
Tensor transpose(const Tensor& x, Ints perm, const CO& o = {});                     // "Transpose"
Tensor concat(const std::vector<Tensor>& xs, std::int64_t axis, const CO& o = {});  // "Concat"
// "Split": sizes along axis (sum must equal the dim).
std::vector<Tensor> split(const Tensor& x, Ints sizes, std::int64_t axis, const CO& o = {});
// "Slice": ONNX semantics (negative indices, clamping, negative steps); axes default 0..n-1.
Tensor slice(const Tensor& x, Ints starts, Ints ends, Ints axes = {}, Ints steps = {}, const CO& o = {});
// "Gather": ONNX Gather (indices i32/i64, negative indices allowed).
Tensor gather(const Tensor& x, const Tensor& indices, std::int64_t axis = 0, const CO& o = {});

// ---- reductions (axes empty: all) -------------------------------------------------------------
Tensor reduce_sum(const Tensor& x, Ints axes, bool keepdims = true, const CO& o = {});   // "ReduceSum"
Tensor reduce_mean(const Tensor& x, Ints axes, bool keepdims = true, const CO& o = {});  // "ReduceMean"
Tensor reduce_max(const Tensor& x, Ints axes, bool keepdims = true, const CO& o = {});   // "ReduceMax"

// ---- transformer helpers -----------------------------------------------------------------------
// "RotaryEmbedding": x [..., S, D]; cos, sin [S, D/2]. rotate-half pairing (x[i], x[i + D/2]) by
// default, adjacent pairs (x[2i], x[2i+1]) when interleaved.
Tensor rotary_embedding(const Tensor& x, const Tensor& cos, const Tensor& sin, bool interleaved = false,
                        const CO& o = {});

}  // namespace npuscope::emulator::ops
