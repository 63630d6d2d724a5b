// Adapters for the NN ops whose emulator op differs from the ONNX node: Conv (-> Conv2d, 1-D via a
// height-1 reshape, 3-D -> Conv3d, auto_pad computed into pads), AveragePool / MaxPool (-> AvgPool /
// MaxPool, or MaxPoolWithIndices when Indices is asked for; 1-D the same way), GlobalAveragePool
// (-> GlobalAvgPool), BatchNormalization (-> BatchNorm; in training_mode -> BatchNormTraining),
// LayerNormalization (-> LayerNorm, plus Mean / InvStdDev from reduce ops when asked), Softmax /
// LogSoftmax (opset < 13: the 2-D coercion), Resize (inputs -> attributes) and Upsample (-> Resize).
// Gemm, MatMul, ConvTranspose, InstanceNormalization, LRN... run by the default rule.
// See Note [ONNX adapters].
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "kernels/kernel_util.h"
#include "onnx_adapter.h"

namespace npuscope::emulator::onnx_import {
namespace {

using Ints = std::vector<std::int64_t>;

Tensor reshape(const Tensor& x, Shape shape, const NodeContext& ctx) {
  return call_op1("Reshape", {x}, Attrs{{"shape", std::move(shape)}}, ctx.call());
}

// Input i, which the node must give.
const Tensor& required(const NodeContext& ctx, std::size_t i, const char* name) {
  if (!ctx.has_input(i)) ctx.fail(std::string("needs input ") + std::to_string(i) + " (" + name + ")");
  return ctx.input(i);
}

bool output_requested(const NodeContext& ctx, int i) {
  return i < ctx.num_outputs && ctx.node != nullptr && !ctx.node->output(i).empty();
}

// Fails if the node asks for any output from `first` on.
void only_outputs_below(const NodeContext& ctx, int first, const std::string& why) {
  for (int i = first; i < ctx.num_outputs; ++i) {
    if (output_requested(ctx, i)) ctx.fail("output " + std::to_string(i) + " ('" + ctx.node->output(i) + "') " + why);
  }
}

// A per-spatial-dim attribute: `n` values (absent or empty: `fallback` each), each in [fallback,
// kMaxTensorBytes] (pads >= 0, strides, dilations and kernel sizes >= 1; none longer than a tensor
// can be, which keeps the SAME-pad arithmetic below in range: Note [Sizes from user input]).
Ints spatial_ints(const NodeContext& ctx, const char* name, std::size_t n, std::int64_t fallback) {
  Ints v = ctx.attrs.get_ints(name, {});
  if (v.empty()) return Ints(n, fallback);
  if (v.size() != n) ctx.fail(std::string(name) + " must have " + std::to_string(n) + " values, got " + shape_str(v));
  const auto max_value = static_cast<std::int64_t>(kMaxTensorBytes);
  for (auto e : v) {
    if (e < fallback || e > max_value) {
      ctx.fail(std::string(name) + " " + shape_str(v) + " has " + std::to_string(e) + ", outside [" +
               std::to_string(fallback) + ", " + std::to_string(max_value) + "]");
    }
  }
  return v;
}

// ---- Conv ---------------------------------------------------------------------------------------

// Explicit pads {begins..., ends...} from auto_pad (ONNX Conv: SAME keeps ceil(in / stride) outputs,
// the odd pad at the end for SAME_UPPER, at the beginning for SAME_LOWER).
Ints conv_pads(const NodeContext& ctx, const Shape& in, const Ints& k, const Ints& s, const Ints& d) {
  const std::size_t r = k.size();
  const std::string auto_pad = ctx.attrs.get_string("auto_pad", "NOTSET");
  if (auto_pad == "NOTSET" || auto_pad.empty()) return spatial_ints(ctx, "pads", 2 * r, 0);
  Ints pads(2 * r, 0);
  if (auto_pad == "VALID") return pads;
  if (auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER") ctx.fail("unknown auto_pad '" + auto_pad + "'");
  for (std::size_t i = 0; i < r; ++i) {
    const std::int64_t out = (in[i] + s[i] - 1) / s[i];
    // (out - 1)·s <= in; (k - 1)·d may reach 2^80: checked.
    const std::int64_t dilated = kernels::checked_mul(k[i] - 1, d[i], "Conv", "(kernel size - 1) * dilation");
    const std::int64_t total = std::max<std::int64_t>(0, (out - 1) * s[i] + dilated + 1 - in[i]);
    pads[i] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
    pads[i + r] = total - pads[i];
  }
  return pads;
}

}  // namespace

Tensor convolve(const NodeContext& ctx, const Tensor& x, const Tensor& w, const Tensor& b) {
  if (x.ndim() < 3 || x.ndim() > 5 || w.ndim() != x.ndim()) {
    ctx.fail("only 1-D, 2-D and 3-D convolutions are supported, with X and W of the same rank (X " +
             shape_str(x.shape()) + ", W " + shape_str(w.shape()) + ")");
  }
  const auto r = static_cast<std::size_t>(x.ndim() - 2);
  const Ints k(w.shape().begin() + 2, w.shape().end());
  if (ctx.attrs.has("kernel_shape") && ctx.attrs.get_ints("kernel_shape") != k) {
    ctx.fail("kernel_shape " + shape_str(ctx.attrs.get_ints("kernel_shape")) + " does not match W " +
             shape_str(w.shape()));
  }
  Ints s = spatial_ints(ctx, "strides", r, 1), d = spatial_ints(ctx, "dilations", r, 1);
  Ints pads = conv_pads(ctx, Shape(x.shape().begin() + 2, x.shape().end()), k, s, d);
  if (r >= 2) {
    Attrs attrs{{"strides", s}, {"pads", pads}, {"dilations", d}, {"group", ctx.attrs.get_int("group", 1)}};
    return call_op1(r == 2 ? "Conv2d" : "Conv3d", {x, w, b}, attrs, ctx.call());
  }
  // 1-D: [N, C, W] as [N, C, 1, W].
  Attrs attrs{{"strides", Ints{1, s[0]}},
              {"pads", Ints{0, pads[0], 0, pads[1]}},
              {"dilations", Ints{1, d[0]}},
              {"group", ctx.attrs.get_int("group", 1)}};
  const Shape& xs = x.shape();
  const Shape& ws = w.shape();
  Tensor y =
      call_op1("Conv2d", {reshape(x, {xs[0], xs[1], 1, xs[2]}, ctx), reshape(w, {ws[0], ws[1], 1, ws[2]}, ctx), b},
               attrs, ctx.call());
  return reshape(y, {y.shape()[0], y.shape()[1], y.shape()[3]}, ctx);
}

namespace {

std::vector<Tensor> conv(NodeContext& ctx) {
  return {convolve(ctx, required(ctx, 0, "X"), required(ctx, 1, "W"), ctx.has_input(2) ? ctx.input(2) : Tensor())};
}

// ---- pooling ------------------------------------------------------------------------------------

// AveragePool / MaxPool: 1-D as [N, C, 1, W] with height-1 windows (Indices number the same
// elements either way: Note [MaxPool Indices]); other ranks as they are (the pool ops take 2-D and
// 3-D and say so for anything else).
std::vector<Tensor> pool(NodeContext& ctx, const char* type) {
  const Tensor& x = required(ctx, 0, "X");
  if (x.ndim() != 3) return call_op(type, {x}, ctx.attrs, ctx.call());
  Attrs attrs = ctx.attrs;
  if (!ctx.attrs.has("kernel_shape")) ctx.fail("kernel_shape is required");
  attrs.set("kernel_shape", Ints{1, spatial_ints(ctx, "kernel_shape", 1, 1)[0]});
  if (ctx.attrs.has("strides")) attrs.set("strides", Ints{1, spatial_ints(ctx, "strides", 1, 1)[0]});
  if (ctx.attrs.has("dilations")) attrs.set("dilations", Ints{1, spatial_ints(ctx, "dilations", 1, 1)[0]});
  if (ctx.attrs.has("pads")) {
    const Ints p = spatial_ints(ctx, "pads", 2, 0);
    attrs.set("pads", Ints{0, p[0], 0, p[1]});
  }
  const Shape& xs = x.shape();
  std::vector<Tensor> ys = call_op(type, {reshape(x, {xs[0], xs[1], 1, xs[2]}, ctx)}, attrs, ctx.call());
  for (Tensor& y : ys) y = reshape(y, {y.shape()[0], y.shape()[1], y.shape()[3]}, ctx);
  return ys;
}

std::vector<Tensor> average_pool(NodeContext& ctx) { return pool(ctx, "AvgPool"); }

// Indices (output 1), when asked for, come from MaxPoolWithIndices (Note [MaxPool Indices]).
std::vector<Tensor> max_pool(NodeContext& ctx) {
  return pool(ctx, output_requested(ctx, 1) ? "MaxPoolWithIndices" : "MaxPool");
}

std::vector<Tensor> global_average_pool(NodeContext& ctx) { return run_default(ctx, "GlobalAvgPool"); }

// ---- normalisation ------------------------------------------------------------------------------

// training_mode = 1 (opset 14 on): Y from the batch's own mean and (biased) variance, and the
// running statistics input · momentum + batch · (1 − momentum): BatchNormTraining, whose momentum
// weighs the batch (aten's), with the biased variance.
std::vector<Tensor> batch_normalization_training(NodeContext& ctx) {
  if (ctx.inputs.size() != 5) ctx.fail("needs X, scale, B, input_mean and input_var");
  only_outputs_below(ctx, 3, "is not an output of BatchNormalization in training_mode");
  const Attrs attrs{{"momentum", 1.0 - ctx.attrs.get_float("momentum", 0.9)},
                    {"epsilon", ctx.attrs.get_float("epsilon", 1e-5)},
                    {"unbiased", std::int64_t{0}}};
  std::vector<Tensor> outs = call_op("BatchNormTraining", ctx.device_inputs(), attrs, ctx.call());
  return {outs[0], outs[3], outs[4]};
}

std::vector<Tensor> batch_normalization(NodeContext& ctx) {
  if (ctx.attrs.get_int("training_mode", 0) != 0) return batch_normalization_training(ctx);
  if (ctx.attrs.get_int("spatial", 1) == 0) ctx.fail("spatial=0 (per-element statistics) is not supported");
  only_outputs_below(ctx, 1, "is a training statistic: only inference (output Y) is supported");
  if (ctx.inputs.size() != 5) ctx.fail("needs X, scale, B, input_mean and input_var");
  const Attrs attrs{{"epsilon", ctx.attrs.get_float("epsilon", 1e-5)}};
  return {call_op1("BatchNorm", ctx.device_inputs(), attrs, ctx.call())};
}

// Mean and InvStdDev of LayerNormalization over dims [axis, rank), kept as size-1 dims, computed in
// the stash type (f32 unless stash_type says otherwise) as the ONNX function body does.
std::pair<Tensor, Tensor> layer_norm_stats(const NodeContext& ctx, const Tensor& x, std::int64_t axis, double eps) {
  Tensor xs = x;
  if (ctx.attrs.get_int("stash_type", 1) == 1 && x.dtype() != DType::kF32) {
    xs = call_op1("Cast", {x}, Attrs{{"to", static_cast<std::int64_t>(DType::kF32)}}, ctx.call());
  }
  Ints axes;
  for (std::int64_t a = axis; a < x.ndim(); ++a) axes.push_back(a);
  const Attrs reduce{{"axes", axes}, {"keepdims", std::int64_t{1}}};
  Tensor mean = call_op1("ReduceMean", {xs}, reduce, ctx.call());
  Tensor centred = call_op1("Sub", {xs, mean}, {}, ctx.call());
  Tensor var = call_op1("ReduceMean", {call_op1("Mul", {centred, centred}, {}, ctx.call())}, reduce, ctx.call());
  const Tensor e = Tensor::from_floats(std::vector<float>{static_cast<float>(eps)}, {}, xs.dtype(), ctx.device);
  Tensor inv = call_op1("Rsqrt", {call_op1("Add", {var, e}, {}, ctx.call())}, {}, ctx.call());
  return {mean, inv};
}

std::vector<Tensor> layer_normalization(NodeContext& ctx) {
  const Tensor& x = required(ctx, 0, "X");
  required(ctx, 1, "Scale");
  std::int64_t axis = ctx.attrs.get_int("axis", -1);
  if (axis < -x.ndim() || axis >= x.ndim()) {
    ctx.fail("axis " + std::to_string(axis) + " is out of range for X " + shape_str(x.shape()));
  }
  if (axis < 0) axis += x.ndim();
  const double eps = ctx.attrs.get_float("epsilon", 1e-5);
  const Attrs attrs{{"axis", axis}, {"epsilon", eps}};
  std::vector<Tensor> outs{call_op1("LayerNorm", {x, ctx.input(1), ctx.input(2)}, attrs, ctx.call())};
  if (output_requested(ctx, 1) || output_requested(ctx, 2)) {
    auto [mean, inv] = layer_norm_stats(ctx, x, axis, eps);
    outs.push_back(mean);
    outs.push_back(inv);
  }
  return outs;
}

// ---- softmax ------------------------------------------------------------------------------------

// Opset < 13: axis defaults to 1 and the input is seen as 2-D [prod(dims < axis), prod(dims >= axis)].
std::vector<Tensor> softmax_like(NodeContext& ctx, const char* type) {
  if (ctx.opset >= 13) return run_default(ctx, type);
  const Tensor& x = required(ctx, 0, "X");
  const std::int64_t rank = x.ndim();
  std::int64_t axis = ctx.attrs.get_int("axis", 1);
  if (axis < -rank || axis >= std::max<std::int64_t>(rank, 1)) {
    ctx.fail("axis " + std::to_string(axis) + " is out of range for input " + shape_str(x.shape()));
  }
  if (axis < 0) axis += rank;
  if (axis >= rank - 1) return {call_op1(type, {x}, Attrs{{"axis", std::int64_t{-1}}}, ctx.call())};
  std::int64_t rows = 1;
  for (std::int64_t d = 0; d < axis; ++d) rows *= x.shape()[static_cast<std::size_t>(d)];
  const std::int64_t cols = rows == 0 ? 0 : x.numel() / rows;
  Tensor y = call_op1(type, {reshape(x, {rows, cols}, ctx)}, Attrs{{"axis", std::int64_t{1}}}, ctx.call());
  return {reshape(y, x.shape(), ctx)};
}

std::vector<Tensor> softmax(NodeContext& ctx) { return softmax_like(ctx, "Softmax"); }
std::vector<Tensor> log_softmax(NodeContext& ctx) { return softmax_like(ctx, "LogSoftmax"); }

// ---- Resize, Upsample ---------------------------------------------------------------------------

std::vector<double> optional_floats(const NodeContext& ctx, std::size_t i) {
  return ctx.has_input(i) ? ctx.input_floats(i) : std::vector<double>{};
}

// Opset 18's axes (default: all), normalised.
Ints resize_axes(const NodeContext& ctx, std::int64_t rank) {
  Ints axes = ctx.attrs.get_ints("axes", {});
  if (axes.empty()) {
    for (std::int64_t a = 0; a < rank; ++a) axes.push_back(a);
  }
  for (auto& a : axes) {
    if (a < -rank || a >= rank)
      ctx.fail("axes " + shape_str(axes) + " are out of range for rank " + std::to_string(rank));
    if (a < 0) a += rank;
  }
  return axes;
}

// Values given for `axes` spread over all dims (`fallback` elsewhere).
template <class V>
std::vector<V> spread(const NodeContext& ctx, const std::vector<V>& given, const Ints& axes, std::vector<V> fallback,
                      const char* name) {
  if (given.size() != axes.size()) {
    ctx.fail(std::string(name) + " has " + std::to_string(given.size()) + " values for " + std::to_string(axes.size()) +
             " axes");
  }
  for (std::size_t i = 0; i < axes.size(); ++i) fallback[static_cast<std::size_t>(axes[i])] = given[i];
  return fallback;
}

// sizes (and, under keep_aspect_ratio_policy, the one common scale) -> attrs.
void resize_sizes(const NodeContext& ctx, const Shape& in, const Ints& axes, const Ints& given, Attrs& attrs) {
  Ints sizes = spread(ctx, given, axes, Ints(in.begin(), in.end()), "sizes");
  const std::string policy = ctx.attrs.get_string("keep_aspect_ratio_policy", "stretch");
  if (policy != "stretch") {
    if (policy != "not_larger" && policy != "not_smaller")
      ctx.fail("unknown keep_aspect_ratio_policy '" + policy + "'");
    double scale = policy == "not_larger" ? INFINITY : 0.0;
    for (auto a : axes) {
      const double s = static_cast<double>(sizes[a]) / static_cast<double>(in[a]);
      scale = policy == "not_larger" ? std::min(scale, s) : std::max(scale, s);
    }
    std::vector<double> scales(in.size(), 1.0);
    for (auto a : axes) {
      scales[a] = scale;
      const double size = scale * static_cast<double>(in[a]) + 0.5;
      if (!(size < static_cast<double>(kMaxTensorBytes))) {
        ctx.fail("sizes " + shape_str(given) + " give dim " + std::to_string(a) + " a size of " + std::to_string(size) +
                 ", beyond the tensor size limit");
      }
      sizes[a] = static_cast<std::int64_t>(size);
    }
    attrs.set("scales", scales);
  }
  attrs.set("sizes", sizes);
}

// Opset 10: (X, scales), asymmetric coordinates, nearest rounds down. Opset 11-18: (X, roi, scales,
// sizes), an empty tensor standing for an absent one.
std::vector<Tensor> resize(NodeContext& ctx) {
  const Tensor& x = required(ctx, 0, "X");
  Attrs attrs;
  for (const auto& [name, value] : ctx.attrs.items()) {
    if (name != "axes" && name != "antialias" && name != "keep_aspect_ratio_policy") attrs.set(name, value);
  }
  if (ctx.opset < 11) {
    attrs.set("coordinate_transformation_mode", std::string("asymmetric"));
    attrs.set("nearest_mode", std::string("floor"));
    attrs.set("scales", ctx.input_floats(1));
    return {call_op1("Resize", {x}, attrs, ctx.call())};
  }
  if (ctx.attrs.get_int("antialias", 0) != 0) ctx.fail("antialias=1 is not supported");
  const Ints axes = resize_axes(ctx, x.ndim());
  const std::vector<double> roi = optional_floats(ctx, 1), scales = optional_floats(ctx, 2);
  const Ints sizes = ctx.has_input(3) ? ctx.input_ints(3) : Ints{};
  if (scales.empty() == sizes.empty()) ctx.fail("exactly one of scales and sizes must be given (non-empty)");
  if (!sizes.empty()) {
    resize_sizes(ctx, x.shape(), axes, sizes, attrs);
  } else {
    attrs.set("scales", spread(ctx, scales, axes, std::vector<double>(x.shape().size(), 1.0), "scales"));
  }
  if (!roi.empty() && ctx.attrs.get_string("coordinate_transformation_mode", "") == "tf_crop_and_resize") {
    const std::size_t n = axes.size(), r = x.shape().size();
    if (roi.size() != 2 * n)
      ctx.fail("roi must have " + std::to_string(2 * n) + " values, got " + std::to_string(roi.size()));
    std::vector<double> full(r, 0.0);
    full.resize(2 * r, 1.0);
    for (std::size_t i = 0; i < n; ++i) {
      full[static_cast<std::size_t>(axes[i])] = roi[i];
      full[static_cast<std::size_t>(axes[i]) + r] = roi[i + n];
    }
    attrs.set("roi", full);
  }
  return {call_op1("Resize", {x}, attrs, ctx.call())};
}

// Upsample (opset 7: scales attribute; 9: scales input) is Resize with asymmetric coordinates and
// nearest rounding down (what the ONNX version converter gives Resize-10 -> 11).
std::vector<Tensor> upsample(NodeContext& ctx) {
  std::string mode = ctx.attrs.get_string("mode", "nearest");
  if (mode == "bilinear") mode = "linear";  // Upsample-1's name for it
  const std::vector<double> scales = ctx.has_input(1) ? ctx.input_floats(1) : ctx.attrs.get_floats("scales");
  const Attrs attrs{{"mode", mode},
                    {"coordinate_transformation_mode", std::string("asymmetric")},
                    {"nearest_mode", std::string("floor")},
                    {"scales", scales}};
  return {call_op1("Resize", {required(ctx, 0, "X")}, attrs, ctx.call())};
}

}  // namespace

NPUSCOPE_REGISTER_ONNX_ADAPTER("Conv", conv);
NPUSCOPE_REGISTER_ONNX_ADAPTER("AveragePool", average_pool);
NPUSCOPE_REGISTER_ONNX_ADAPTER("MaxPool", max_pool);
NPUSCOPE_REGISTER_ONNX_ADAPTER("GlobalAveragePool", global_average_pool);
NPUSCOPE_REGISTER_ONNX_ADAPTER("BatchNormalization", batch_normalization);
NPUSCOPE_REGISTER_ONNX_ADAPTER("LayerNormalization", layer_normalization);
NPUSCOPE_REGISTER_ONNX_ADAPTER("Softmax", softmax);
NPUSCOPE_REGISTER_ONNX_ADAPTER("LogSoftmax", log_softmax);
NPUSCOPE_REGISTER_ONNX_ADAPTER("Resize", resize);
NPUSCOPE_REGISTER_ONNX_ADAPTER("Upsample", upsample);

}  // namespace npuscope::emulator::onnx_import
