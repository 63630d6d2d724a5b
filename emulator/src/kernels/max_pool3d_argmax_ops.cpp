// 3-D max pooling with indices, as aten's max_pool3d_with_indices computes it on the CPU (NCDHW or
// CDHW): CANN's MaxPool3DWithArgmax (aclnnMaxPool3dWithArgmax)
//   MaxPool3DWithArgmax (x; kernel {kd, kh, kw}, strides (= kernel), pads {pd, ph, pw} (0),
//                        dilations (1), ceil_mode (0)) -> (y, indices i64)
// Its gradient, MaxPool3DGradWithArgmax, is in max_pool3d_grad_argmax_ops.cpp.
//
// Note [Max pool 3-D indices]
// The 2-D op's rules (Note [Max pool indices], max_pool_argmax_ops.cpp) with a depth axis: sizes
// per axis out = floor_or_ceil((in + 2·pad − dilation·(k − 1) − 1) / stride) + 1, a ceil_mode window
// starting in the right padding dropped, pad <= k/2, and the input's D, H and W positive. Each window
// scans its taps inside the input depth-major (z, then y, then x); a value replaces the maximum when
// it is larger or NaN, so a tie keeps the first maximum, the last NaN wins and y is NaN; the index
// starts at the window's first tap inside the input (kept when every value is -inf: the padding
// counts as -inf and is never chosen). The index is z·H·W + y·W + x within the (n, c) plane, not
// within the tensor (unlike ONNX's MaxPoolWithIndices, Note [MaxPool Indices] in pool_ops.cpp).
// CANN's kernel writes int32 indices; this one writes PyTorch's int64, which the gradient takes
// as they are. Vector op; no arithmetic (y is one of x's values), so the NPU kernel (f32) and the
// CPU golden (f64) agree exactly in every float dtype.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>

#include "kernel_util.h"
#include "max_pool_axis.h"

namespace npuscope::emulator::kernels {
namespace {

constexpr char kOp[] = "MaxPool3DWithArgmax";

using Axis = MaxPoolAxis;

struct Geometry {
  std::int64_t planes = 0;  // N·C
  Axis d, h, w;
  std::int64_t in_plane() const { return d.in * h.in * w.in; }
  std::int64_t out_plane() const { return d.out * h.out * w.out; }
};

// The output size of one axis (Note [Max pool 3-D indices]); throws InvalidArgument when it is < 1.
void resolve(Axis& a, bool ceil_mode, const char* dim) {
  if (a.in < 1) fail(kOp, std::string("input size along ") + dim + " is " + std::to_string(a.in) + ": no window");
  resolve_max_pool_axis(a, ceil_mode, dim, kOp);
}

Geometry geometry(const Shape& x, const Attrs& attrs) {
  if (x.size() != 4 && x.size() != 5) fail(kOp, "expects an NCDHW or CDHW input, got " + shape_str(x));
  const auto max_k = static_cast<std::int64_t>(kMaxTensorBytes);  // Note [Sizes from user input]
  const auto k = attrs.get_ints("kernel", {});
  if (k.size() != 3 || std::any_of(k.begin(), k.end(), [&](std::int64_t v) { return v < 1 || v > max_k; })) {
    fail(kOp, "kernel must be 3 values in [1, " + std::to_string(max_k) + "], got " + shape_str(k));
  }
  const bool default_strides = attrs.get_ints("strides", {}).empty();
  const auto s = default_strides ? k : dim_ints(attrs, "strides", 3, 1, 1, kOp);
  const auto p = dim_ints(attrs, "pads", 3, 0, 0, kOp);
  const auto dl = dim_ints(attrs, "dilations", 3, 1, 1, kOp);
  const bool ceil_mode = attrs.get_int("ceil_mode", 0) != 0;
  const std::size_t r = x.size();
  Geometry g;
  g.planes = r == 5 ? checked_mul(x[0], x[1], kOp, "N * C") : x[0];
  g.d = {x[r - 3], k[0], s[0], p[0], dl[0], 0};
  g.h = {x[r - 2], k[1], s[1], p[1], dl[1], 0};
  g.w = {x[r - 1], k[2], s[2], p[2], dl[2], 0};
  resolve(g.d, ceil_mode, "D");
  resolve(g.h, ceil_mode, "H");
  resolve(g.w, ceil_mode, "W");
  return g;
}

std::vector<TensorMeta> infer(std::span<const TensorMeta> in, const Attrs& attrs) {
  require_floating(in, 0, kOp);
  const Geometry g = geometry(in[0].shape, attrs);
  Shape out = in[0].shape;
  const std::size_t r = out.size();
  out[r - 3] = g.d.out;
  out[r - 2] = g.h.out;
  out[r - 1] = g.w.out;
  return {{out, in[0].dtype}, {out, DType::kI64}};
}

KernelCost cost(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs& attrs) {
  const auto k = attrs.get_ints("kernel", {1, 1, 1});
  const double taps = static_cast<double>(k.size() == 3 ? k[0] * k[1] * k[2] : 1);
  KernelCost c = vector_cost(in, out, taps);                   // one compare per tap
  c.argmax_taps = static_cast<double>(out[0].numel()) * taps;  // the argmax's index bookkeeping, scalar-bound
  return c;
}

// One window of one plane: its maximum and the maximum's index (Note [Max pool 3-D indices]).
template <class T>
void pool_window(const Geometry& g, const T* src, std::int64_t od, std::int64_t oh, std::int64_t ow, T& y,
                 std::int64_t& idx) {
  const auto [d0, d1] = max_pool_window(g.d, od);
  const auto [h0, h1] = max_pool_window(g.h, oh);
  const auto [w0, w1] = max_pool_window(g.w, ow);
  const std::int64_t hw = g.h.in * g.w.in;
  std::int64_t best = d0 * hw + h0 * g.w.in + w0;
  T m = -std::numeric_limits<T>::infinity();
  for (std::int64_t z = d0; z < d1; z += g.d.dilation) {
    for (std::int64_t iy = h0; iy < h1; iy += g.h.dilation) {
      for (std::int64_t ix = w0; ix < w1; ix += g.w.dilation) {
        const std::int64_t at = z * hw + iy * g.w.in + ix;
        const T v = src[at];
        if (v > m || std::isnan(v)) {
          m = v;
          best = at;
        }
      }
    }
  }
  y = m;
  idx = best;
}

template <class T>
void pool_planes(const Geometry& g, const T* x, T* y, std::int64_t* idx) {
  const std::int64_t in_plane = g.in_plane();
  std::int64_t o = 0;
  for (std::int64_t p = 0; p < g.planes; ++p) {
    const T* src = x + p * in_plane;
    for (std::int64_t od = 0; od < g.d.out; ++od) {
      for (std::int64_t oh = 0; oh < g.h.out; ++oh) {
        for (std::int64_t ow = 0; ow < g.w.out; ++ow, ++o) pool_window(g, src, od, oh, ow, y[o], idx[o]);
      }
    }
  }
}

// On the NPU in f32, the kernel reads x in place and writes y and the indices straight into the
// outputs (See Note [Max pooling in place] in max_pool_argmax_ops.cpp).
bool direct_f32(const KernelContext& ctx) {
  if (ctx.backend != Backend::kNpu || ctx.compute_dtype != DType::kF32) return false;
  if (ctx.inputs[0].dtype != DType::kF32 || ctx.outputs[0].dtype != DType::kF32) return false;
  if (ctx.outputs[1].dtype != DType::kI64) return false;
  return !views_overlap(ctx.inputs[0], ctx.outputs[0]) && !views_overlap(ctx.inputs[0], ctx.outputs[1]);
}

template <class T>
void pool_kernel(KernelContext& ctx) {
  const Geometry g = geometry(*ctx.inputs[0].shape, ctx.attrs);
  if constexpr (std::is_same_v<T, float>) {
    if (direct_f32(ctx)) {
      pool_planes<float>(g, ctx.inputs[0].as<const float>(), ctx.outputs[0].as<float>(),
                         ctx.outputs[1].as<std::int64_t>());
      finish_in_place(ctx.outputs[0].as<float>(), ctx.outputs[0].numel, ctx);
      return;
    }
  }
  const std::vector<T> x = load<T>(ctx.inputs[0], ctx);
  std::vector<T> y(static_cast<std::size_t>(g.planes * g.out_plane()));
  std::vector<std::int64_t> idx(y.size());
  pool_planes<T>(g, x.data(), y.data(), idx.data());
  store<T>(ctx.outputs[0], y.data(), ctx);
  store_i64(ctx.outputs[1], idx.data());
}

}  // namespace

NPUSCOPE_REGISTER_OP(OpSchema{
    .type = kOp, .category = OpCategory::kVector, .min_inputs = 1, .max_inputs = 1, .infer = infer, .cost = cost});
NPUSCOPE_REGISTER_FLOAT_KERNELS(kOp, pool_kernel);

}  // namespace npuscope::emulator::kernels
