// LayerNorm, RMSNorm, BatchNorm (inference). NPU: statistics accumulated in f32 over 8 lanes (as a
// vector unit's partial sums), the result rounded to the output dtype once; CPU golden: f64.
//
// LayerNorm and RMSNorm see x as [rows, cols] with cols = the normalised trailing dims, and work row
// by row; BatchNorm sees x as [N, C, spatial] and applies one per-channel affine map per plane.
#include <cmath>
#include <string>

#include "kernel_util.h"

namespace npuscope::emulator::kernels {
namespace {

// ---- shapes -------------------------------------------------------------------------------------

Shape strip_leading_ones(const Shape& s) {
  std::size_t i = 0;
  while (i < s.size() && s[i] == 1) ++i;
  return Shape(s.begin() + static_cast<std::ptrdiff_t>(i), s.end());
}

// A per-row parameter (scale, bias, ...) must have the normalised shape; leading 1s are allowed.
void check_param(std::span<const TensorMeta> in, int i, const Shape& want, const char* op, const char* name,
                 const std::string& context) {
  const TensorMeta& m = in[static_cast<std::size_t>(i)];
  if (!m.present) return;
  require_floating(in, i, op);
  if (strip_leading_ones(m.shape) != strip_leading_ones(want)) {
    fail(op, std::string(name) + " has shape " + shape_str(m.shape) + " but must have shape " + shape_str(want) + " (" +
                 context + ")");
  }
}

std::int64_t layer_norm_axis(std::span<const TensorMeta> in, const Attrs& attrs) {
  return normalize_axis(attrs.get_int("axis", -1), static_cast<std::int64_t>(in[0].shape.size()), "LayerNorm");
}

std::vector<TensorMeta> infer_layer_norm(std::span<const TensorMeta> in, const Attrs& attrs) {
  require_floating(in, 0, "LayerNorm");
  const std::int64_t axis = layer_norm_axis(in, attrs);
  const Shape norm(in[0].shape.begin() + axis, in[0].shape.end());
  const std::string context = "x " + shape_str(in[0].shape) + ", axis " + std::to_string(attrs.get_int("axis", -1));
  if (!in[1].present) fail("LayerNorm", "scale is required");
  check_param(in, 1, norm, "LayerNorm", "scale", context);
  if (in.size() > 2) check_param(in, 2, norm, "LayerNorm", "bias", context);
  return {{in[0].shape, in[0].dtype}};
}

std::vector<TensorMeta> infer_rms_norm(std::span<const TensorMeta> in, const Attrs&) {
  require_floating(in, 0, "RMSNorm");
  if (in[0].shape.empty()) fail("RMSNorm", "x must have at least one dim");
  if (!in[1].present) fail("RMSNorm", "scale is required");
  const Shape norm{in[0].shape.back()};
  check_param(in, 1, norm, "RMSNorm", "scale", "x " + shape_str(in[0].shape) + ", last dim");
  return {{in[0].shape, in[0].dtype}};
}

std::vector<TensorMeta> infer_batch_norm(std::span<const TensorMeta> in, const Attrs&) {
  require_floating(in, 0, "BatchNorm");
  if (in[0].shape.size() < 2) fail("BatchNorm", "x must be [N, C, ...], got " + shape_str(in[0].shape));
  const Shape channels{in[0].shape[1]};
  const std::string context = "x " + shape_str(in[0].shape) + ", one value per channel";
  const char* names[] = {"scale", "bias", "mean", "var"};
  for (int i = 1; i <= 4; ++i) {
    if (!in[static_cast<std::size_t>(i)].present) fail("BatchNorm", std::string(names[i - 1]) + " is required");
    check_param(in, i, channels, "BatchNorm", names[i - 1], context);
  }
  return {{in[0].shape, in[0].dtype}};
}

KernelCost cost_layer_norm(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs&) {
  return vector_cost(in, out, 8);  // mean, centre, square-sum, scale, shift
}
KernelCost cost_rms_norm(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs&) {
  return vector_cost(in, out, 4);  // square-sum, multiply by rsqrt and scale
}
KernelCost cost_batch_norm(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs&) {
  return vector_cost(in, out, 2);  // one fused multiply-add per element once the channel map is folded
}

// ---- kernels ------------------------------------------------------------------------------------

// An optional input as T values, or empty when left out.
template <class T>
std::vector<T> load_optional(std::span<const TensorView> in, std::size_t i, const KernelContext& ctx) {
  if (i >= in.size() || in[i].data == nullptr) return {};
  return load<T>(in[i], ctx);
}

template <class T>
void layer_norm_kernel(KernelContext& ctx) {
  const TensorView& xv = ctx.inputs[0];
  const auto& shape = *xv.shape;
  const std::int64_t axis =
      normalize_axis(ctx.attrs.get_int("axis", -1), static_cast<std::int64_t>(shape.size()), "LayerNorm");
  std::int64_t cols = 1;
  for (std::size_t d = static_cast<std::size_t>(axis); d < shape.size(); ++d) cols *= shape[d];
  const T eps = static_cast<T>(ctx.attrs.get_float("epsilon", 1e-5));
  std::vector<T> x = load<T>(xv, ctx);
  const std::vector<T> scale = load<T>(ctx.inputs[1], ctx);
  const std::vector<T> bias = load_optional<T>(ctx.inputs, 2, ctx);
  const std::int64_t rows = cols == 0 ? 0 : xv.numel / cols;
  for (std::int64_t r = 0; r < rows; ++r) {
    T* row = x.data() + r * cols;
    const T mean = lane_sum<T>(cols, [row](std::int64_t j) { return row[j]; }) / static_cast<T>(cols);
    const T var = lane_sum<T>(cols, [row, mean](std::int64_t j) { return (row[j] - mean) * (row[j] - mean); }) /
                  static_cast<T>(cols);
    const T inv = T(1) / std::sqrt(var + eps);
    for (std::int64_t j = 0; j < cols; ++j) row[j] = (row[j] - mean) * inv * scale[j];
    if (!bias.empty()) {
      for (std::int64_t j = 0; j < cols; ++j) row[j] += bias[j];
    }
  }
  store<T>(ctx.outputs[0], x.data(), ctx);
}

template <class T>
void rms_norm_kernel(KernelContext& ctx) {
  const TensorView& xv = ctx.inputs[0];
  const std::int64_t cols = xv.shape->back();
  const T eps = static_cast<T>(ctx.attrs.get_float("epsilon", 1e-6));
  std::vector<T> x = load<T>(xv, ctx);
  const std::vector<T> scale = load<T>(ctx.inputs[1], ctx);
  const std::int64_t rows = cols == 0 ? 0 : xv.numel / cols;
  for (std::int64_t r = 0; r < rows; ++r) {
    T* row = x.data() + r * cols;
    const T ms = lane_sum<T>(cols, [row](std::int64_t j) { return row[j] * row[j]; }) / static_cast<T>(cols);
    const T inv = T(1) / std::sqrt(ms + eps);
    for (std::int64_t j = 0; j < cols; ++j) row[j] = row[j] * inv * scale[j];
  }
  store<T>(ctx.outputs[0], x.data(), ctx);
}

// NPU: folds each channel to y = x·a + b (a = scale/sqrt(var+eps), b = bias − mean·a), as a fused
// BNInfer kernel does; CPU golden: the textbook (x − mean)/sqrt(var + eps)·scale + bias.
template <class T, bool kFolded>
void batch_norm_kernel(KernelContext& ctx) {
  const TensorView& xv = ctx.inputs[0];
  const auto& shape = *xv.shape;
  const std::int64_t n = shape[0], c = shape[1];
  const std::int64_t plane = (n * c) == 0 ? 0 : xv.numel / (n * c);
  const T eps = static_cast<T>(ctx.attrs.get_float("epsilon", 1e-5));
  std::vector<T> x = load<T>(xv, ctx);
  const std::vector<T> scale = load<T>(ctx.inputs[1], ctx), bias = load<T>(ctx.inputs[2], ctx);
  const std::vector<T> mean = load<T>(ctx.inputs[3], ctx), var = load<T>(ctx.inputs[4], ctx);
  for (std::int64_t b = 0; b < n; ++b) {
    for (std::int64_t ch = 0; ch < c; ++ch) {
      T* p = x.data() + (b * c + ch) * plane;
      const T sd = std::sqrt(var[ch] + eps);
      if constexpr (kFolded) {
        const T a = scale[ch] / sd, off = bias[ch] - mean[ch] * a;
        for (std::int64_t j = 0; j < plane; ++j) p[j] = p[j] * a + off;
      } else {
        const T m = mean[ch], s = scale[ch], o = bias[ch];
        for (std::int64_t j = 0; j < plane; ++j) p[j] = (p[j] - m) / sd * s + o;
      }
    }
  }
  store<T>(ctx.outputs[0], x.data(), ctx);
}

}  // namespace

NPUSCOPE_REGISTER_OP(OpSchema{.type = "LayerNorm",
                              .category = OpCategory::kPrecisionSensitive,
                              .min_inputs = 2,
                              .max_inputs = 3,
                              .infer = infer_layer_norm,
                              .cost = cost_layer_norm});
NPUSCOPE_REGISTER_OP(OpSchema{.type = "RMSNorm",
                              .category = OpCategory::kPrecisionSensitive,
                              .min_inputs = 2,
                              .max_inputs = 2,
                              .infer = infer_rms_norm,
                              .cost = cost_rms_norm});
NPUSCOPE_REGISTER_OP(OpSchema{.type = "BatchNorm",
                              .category = OpCategory::kPrecisionSensitive,
                              .min_inputs = 5,
                              .max_inputs = 5,
                              .infer = infer_batch_norm,
                              .cost = cost_batch_norm});

NPUSCOPE_REGISTER_FLOAT_KERNELS("LayerNorm", layer_norm_kernel);
NPUSCOPE_REGISTER_FLOAT_KERNELS("RMSNorm", rms_norm_kernel);
NPUSCOPE_REGISTER_KERNEL("BatchNorm", Backend::kNpu, batch_norm_kernel<float, true>);
NPUSCOPE_REGISTER_KERNEL("BatchNorm", Backend::kCpu, batch_norm_kernel<double, false>);

}  // namespace npuscope::emulator::kernels
