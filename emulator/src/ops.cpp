// The eager op API: each function packs its attributes (ONNX attribute names, so the ONNX importer
// passes them straight through) and calls the dispatcher.
#include "npuscope/emulator/ops.h"

namespace npuscope::emulator::ops {

Tensor matmul(const Tensor& a, const Tensor& b, const CO& o) { return call_op1("MatMul", {a, b}, {}, o); }

Tensor batch_matmul(const Tensor& a, const Tensor& b, bool adj_x, bool adj_y, const CO& o) {
  return call_op1("BatchMatMul", {a, b}, {{"adj_x", std::int64_t{adj_x}}, {"adj_y", std::int64_t{adj_y}}}, o);
}

Tensor gemm(const Tensor& a, const Tensor& b, const Tensor& c, float alpha, float beta, bool trans_a, bool trans_b,
            const CO& o) {
  return call_op1("Gemm", {a, b, c},
                  {{"alpha", double{alpha}},
                   {"beta", double{beta}},
                   {"transA", std::int64_t{trans_a}},
                   {"transB", std::int64_t{trans_b}}},
                  o);
}

Tensor conv2d(const Tensor& x, const Tensor& w, const Tensor& bias, Ints strides, Ints pads, Ints dilations,
              std::int64_t groups, const CO& o) {
  return call_op1("Conv2d", {x, w, bias},
                  {{"strides", std::move(strides)},
                   {"pads", std::move(pads)},
                   {"dilations", std::move(dilations)},
                   {"group", groups}},
                  o);
}

Tensor add(const Tensor& a, const Tensor& b, const CO& o) { return call_op1("Add", {a, b}, {}, o); }
Tensor sub(const Tensor& a, const Tensor& b, const CO& o) { return call_op1("Sub", {a, b}, {}, o); }
Tensor mul(const Tensor& a, const Tensor& b, const CO& o) { return call_op1("Mul", {a, b}, {}, o); }
Tensor div(const Tensor& a, const Tensor& b, const CO& o) { return call_op1("Div", {a, b}, {}, o); }
Tensor pow(const Tensor& a, const Tensor& b, const CO& o) { return call_op1("Pow", {a, b}, {}, o); }
Tensor relu(const Tensor& x, const CO& o) { return call_op1("Relu", {x}, {}, o); }
Tensor gelu(const Tensor& x, const CO& o) { return call_op1("Gelu", {x}, {}, o); }
Tensor fast_gelu(const Tensor& x, const CO& o) { return call_op1("FastGelu", {x}, {}, o); }
Tensor silu(const Tensor& x, const CO& o) { return call_op1("Silu", {x}, {}, o); }
Tensor sigmoid(const Tensor& x, const CO& o) { return call_op1("Sigmoid", {x}, {}, o); }
Tensor tanh(const Tensor& x, const CO& o) { return call_op1("Tanh", {x}, {}, o); }
Tensor exp(const Tensor& x, const CO& o) { return call_op1("Exp", {x}, {}, o); }
Tensor log(const Tensor& x, const CO& o) { return call_op1("Log", {x}, {}, o); }
Tensor sqrt(const Tensor& x, const CO& o) { return call_op1("Sqrt", {x}, {}, o); }
Tensor rsqrt(const Tensor& x, const CO& o) { return call_op1("Rsqrt", {x}, {}, o); }
Tensor neg(const Tensor& x, const CO& o) { return call_op1("Neg", {x}, {}, o); }
Tensor abs(const Tensor& x, const CO& o) { return call_op1("Abs", {x}, {}, o); }

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b, const CO& o) {
  return call_op1("Where", {cond, a, b}, {}, o);
}

Tensor cast(const Tensor& x, DType dtype, const CO& o) {
  return call_op1("Cast", {x}, {{"to", static_cast<std::int64_t>(dtype)}}, o);
}

Tensor softmax(const Tensor& x, std::int64_t axis, const CO& o) {
  return call_op1("Softmax", {x}, {{"axis", axis}}, o);
}
Tensor log_softmax(const Tensor& x, std::int64_t axis, const CO& o) {
  return call_op1("LogSoftmax", {x}, {{"axis", axis}}, o);
}

Tensor layer_norm(const Tensor& x, const Tensor& scale, const Tensor& bias, std::int64_t axis, float epsilon,
                  const CO& o) {
  return call_op1("LayerNorm", {x, scale, bias}, {{"axis", axis}, {"epsilon", double{epsilon}}}, o);
}

Tensor rms_norm(const Tensor& x, const Tensor& scale, float epsilon, const CO& o) {
  return call_op1("RMSNorm", {x, scale}, {{"epsilon", double{epsilon}}}, o);
}

Tensor batch_norm(const Tensor& x, const Tensor& scale, const Tensor& bias, const Tensor& mean, const Tensor& var,
                  float epsilon, const CO& o) {
  return call_op1("BatchNorm", {x, scale, bias, mean, var}, {{"epsilon", double{epsilon}}}, o);
}

Tensor max_pool2d(const Tensor& x, Ints kernel, Ints strides, Ints pads, Ints dilations, bool ceil_mode, const CO& o) {
  return call_op1("MaxPool", {x},
                  {{"kernel_shape", std::move(kernel)},
                   {"strides", std::move(strides)},
                   {"pads", std::move(pads)},
                   {"dilations", std::move(dilations)},
                   {"ceil_mode", std::int64_t{ceil_mode}}},
                  o);
}

Tensor avg_pool2d(const Tensor& x, Ints kernel, Ints strides, Ints pads, bool count_include_pad, bool ceil_mode,
                  const CO& o) {
  return call_op1("AvgPool", {x},
                  {{"kernel_shape", std::move(kernel)},
                   {"strides", std::move(strides)},
                   {"pads", std::move(pads)},
                   {"count_include_pad", std::int64_t{count_include_pad}},
                   {"ceil_mode", std::int64_t{ceil_mode}}},
                  o);
}

Tensor global_avg_pool(const Tensor& x, const CO& o) { return call_op1("GlobalAvgPool", {x}, {}, o); }

Tensor reshape(const Tensor& x, Ints shape, const CO& o) {
  return call_op1("Reshape", {x}, {{"shape", std::move(shape)}}, o);
}

Tensor transpose(const Tensor& x, Ints perm, const CO& o) {
  return call_op1("Transpose", {x}, {{"perm", std::move(perm)}}, o);
}

Tensor concat(const std::vector<Tensor>& xs, std::int64_t axis, const CO& o) {
  return call_op1("Concat", xs, {{"axis", axis}}, o);
}

std::vector<Tensor> split(const Tensor& x, Ints sizes, std::int64_t axis, const CO& o) {
  return call_op("Split", {x}, {{"split", std::move(sizes)}, {"axis", axis}}, o);
}

Tensor slice(const Tensor& x, Ints starts, Ints ends, Ints axes, Ints steps, const CO& o) {
  Attrs attrs{{"starts", std::move(starts)}, {"ends", std::move(ends)}};
  if (!axes.empty()) attrs.set("axes", std::move(axes));
  if (!steps.empty()) attrs.set("steps", std::move(steps));
  return call_op1("Slice", {x}, attrs, o);
}

Tensor gather(const Tensor& x, const Tensor& indices, std::int64_t axis, const CO& o) {
  return call_op1("Gather", {x, indices}, {{"axis", axis}}, o);
}

static Attrs reduce_attrs(Ints axes, bool keepdims) {
  return Attrs{{"axes", std::move(axes)}, {"keepdims", std::int64_t{keepdims}}};
}
Tensor reduce_sum(const Tensor& x, Ints axes, bool keepdims, const CO& o) {
  return call_op1("ReduceSum", {x}, reduce_attrs(std::move(axes), keepdims), o);
}
Tensor reduce_mean(const Tensor& x, Ints axes, bool keepdims, const CO& o) {
  return call_op1("ReduceMean", {x}, reduce_attrs(std::move(axes), keepdims), o);
}
Tensor reduce_max(const Tensor& x, Ints axes, bool keepdims, const CO& o) {
  return call_op1("ReduceMax", {x}, reduce_attrs(std::move(axes), keepdims), o);
}

Tensor rotary_embedding(const Tensor& x, const Tensor& cos, const Tensor& sin, bool interleaved, const CO& o) {
  return call_op1("RotaryEmbedding", {x, cos, sin}, {{"interleaved", std::int64_t{interleaved}}}, o);
}

}  // namespace npuscope::emulator::ops
