// Max pooling with indices and its gradient, as aten's max_pool2d_with_indices and
// max_pool2d_with_indices_backward compute them on the CPU (NCHW or CHW):
//   MaxPoolWithArgmax     (x; kernel, strides (= kernel), pads {ph, pw} (0), dilations (1),
//                          ceil_mode (0)) -> (y, indices i64)
//   MaxPoolGradWithArgmax (dy, indices; input_size) -> dx
//
// Note [Max pool indices]
// Sizes: out = floor_or_ceil((in + 2·pad − dilation·(k − 1) − 1) / stride) + 1, and with ceil_mode
// a last window starting in the right padding is dropped; pad <= k/2. Each window scans its taps
// inside the input row by row; a value replaces the maximum when it is larger or NaN (so the last
// NaN wins, and y is NaN), and the index starts at the window's first tap inside the input (kept
// when every value is -inf). The index is h·W + w within the input plane. The gradient adds each dy
// into its plane at its index (windows overlap, so it accumulates, in f32 on the NPU, f64 on the
// CPU); an index outside the plane is a kernel fault.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>

#include "kernel_util.h"
#include "max_pool_axis.h"

namespace npuscope::emulator::kernels {
namespace {

constexpr char kPoolOp[] = "MaxPoolWithArgmax";
constexpr char kGradOp[] = "MaxPoolGradWithArgmax";

using Axis = MaxPoolAxis;

struct Geometry {
  std::int64_t planes = 0;  // N·C
  Axis h, w;
};

void resolve(Axis& a, bool ceil_mode, const char* dim) { resolve_max_pool_axis(a, ceil_mode, dim, kPoolOp); }

Geometry geometry(const Shape& x, const Attrs& attrs) {
  if (x.size() != 3 && x.size() != 4) fail(kPoolOp, "expects an NCHW or CHW input, got " + shape_str(x));
  const auto max_k = static_cast<std::int64_t>(kMaxTensorBytes);  // Note [Sizes from user input]
  const auto k = attrs.get_ints("kernel", {});
  if (k.size() != 2 || k[0] < 1 || k[1] < 1 || k[0] > max_k || k[1] > max_k) {
    fail(kPoolOp, "kernel must be 2 values in [1, " + std::to_string(max_k) + "], got " + shape_str(k));
  }
  const bool default_strides = attrs.get_ints("strides", {}).empty();
  const auto s = default_strides ? k : dim_ints(attrs, "strides", 2, 1, 1, kPoolOp);
  const auto p = dim_ints(attrs, "pads", 2, 0, 0, kPoolOp);
  const auto d = dim_ints(attrs, "dilations", 2, 1, 1, kPoolOp);
  const bool ceil_mode = attrs.get_int("ceil_mode", 0) != 0;
  const std::size_t r = x.size();
  Geometry g;
  g.planes = r == 4 ? x[0] * x[1] : x[0];
  g.h = {x[r - 2], k[0], s[0], p[0], d[0], 0};
  g.w = {x[r - 1], k[1], s[1], p[1], d[1], 0};
  resolve(g.h, ceil_mode, "H");
  resolve(g.w, ceil_mode, "W");
  return g;
}

std::vector<TensorMeta> infer_pool(std::span<const TensorMeta> in, const Attrs& attrs) {
  require_floating(in, 0, kPoolOp);
  const Geometry g = geometry(in[0].shape, attrs);
  Shape out = in[0].shape;
  out[out.size() - 2] = g.h.out;
  out[out.size() - 1] = g.w.out;
  return {{out, in[0].dtype}, {out, DType::kI64}};
}

std::vector<TensorMeta> infer_grad(std::span<const TensorMeta> in, const Attrs& attrs) {
  require_floating(in, 0, kGradOp);
  if (is_floating(in[1].dtype) || in[1].dtype == DType::kBool) {
    fail(kGradOp, "indices must be an integer tensor, got " + std::string(dtype_name(in[1].dtype)));
  }
  if (in[0].shape != in[1].shape) {
    fail(kGradOp, "dy " + shape_str(in[0].shape) + " and indices " + shape_str(in[1].shape) + " differ in shape");
  }
  if (!attrs.has("input_size")) fail(kGradOp, "needs the 'input_size' attribute");
  const Shape x = attrs.get_ints("input_size");
  const Shape& dy = in[0].shape;
  const bool ok = (x.size() == 3 || x.size() == 4) && x.size() == dy.size() &&
                  std::equal(x.begin(), x.end() - 2, dy.begin()) &&
                  std::all_of(x.begin(), x.end(), [](std::int64_t v) { return v >= 0; });
  if (!ok) fail(kGradOp, "input_size " + shape_str(x) + " does not fit dy " + shape_str(dy) + " (same N, C)");
  if (shape_numel(x) < 0 || static_cast<std::uint64_t>(shape_numel(x)) > kMaxTensorBytes) {
    fail(kGradOp, "input_size " + shape_str(x) + " is too large");
  }
  return {{x, in[0].dtype}};
}

KernelCost cost_pool(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs& attrs) {
  const auto k = attrs.get_ints("kernel", {1, 1});
  const double taps = static_cast<double>(k.size() == 2 ? k[0] * k[1] : 1);
  KernelCost c = vector_cost(in, out, taps);                   // one compare per tap
  c.argmax_taps = static_cast<double>(out[0].numel()) * taps;  // the argmax's index bookkeeping, scalar-bound
  return c;
}
KernelCost cost_grad(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs& attrs) {
  KernelCost c = vector_cost(in, out, 1);
  const auto k = attrs.get_ints("kernel", {});
  // Each gradient scatters to its argmax's tap (the window, when the op carries it; else one tap).
  c.argmax_taps = static_cast<double>(in[0].numel()) * static_cast<double>(k.size() == 2 ? k[0] * k[1] : 1);
  return c;
}

// Scans every window of `x` (planes of in_plane elements) into y and idx.
template <class T>
void pool_planes(const Geometry& g, const T* x, T* y, std::int64_t* idx) {
  const std::int64_t in_plane = g.h.in * g.w.in, out_plane = g.h.out * g.w.out;
  for (std::int64_t p = 0; p < g.planes; ++p) {
    const T* src = x + p * in_plane;
    std::int64_t o = p * out_plane;
    for (std::int64_t oh = 0; oh < g.h.out; ++oh) {
      const auto [h0, h1] = max_pool_window(g.h, oh);
      for (std::int64_t ow = 0; ow < g.w.out; ++ow, ++o) {
        const auto [w0, w1] = max_pool_window(g.w, ow);
        std::int64_t best = h0 * g.w.in + w0;
        T m = -std::numeric_limits<T>::infinity();
        for (std::int64_t ih = h0; ih < h1; ih += g.h.dilation) {
          for (std::int64_t iw = w0; iw < w1; iw += g.w.dilation) {
            const std::int64_t at = ih * g.w.in + iw;
            const T v = src[at];
            if (v > m || std::isnan(v)) {
              m = v;
              best = at;
            }
          }
        }
        y[o] = m;
        idx[o] = best;
      }
    }
  }
}

// Note [Max pooling in place]
// On the NPU in f32 (the training case: ResNet's stem pools 8 x 64 x 112 x 112 values a step), the
// kernel reads x where it is and writes y and the indices straight into the outputs, then applies the
// flags and overflow mode to y in one scan (finish_in_place), as store<float> would: the same values
// and flags without three copies of the tensor. The gradient likewise accumulates into dx itself.
bool direct_f32(const KernelContext& ctx) {
  if (ctx.backend != Backend::kNpu || ctx.compute_dtype != DType::kF32) return false;
  for (const TensorView& out : ctx.outputs) {
    for (const TensorView& in : ctx.inputs) {
      if (views_overlap(in, out)) return false;
    }
  }
  return true;
}

template <class T>
void pool_kernel(KernelContext& ctx) {
  const Geometry g = geometry(*ctx.inputs[0].shape, ctx.attrs);
  if constexpr (std::is_same_v<T, float>) {
    if (direct_f32(ctx) && ctx.inputs[0].dtype == DType::kF32 && ctx.outputs[0].dtype == DType::kF32 &&
        ctx.outputs[1].dtype == DType::kI64) {
      pool_planes<float>(g, ctx.inputs[0].as<const float>(), ctx.outputs[0].as<float>(),
                         ctx.outputs[1].as<std::int64_t>());
      finish_in_place(ctx.outputs[0].as<float>(), ctx.outputs[0].numel, ctx);
      return;
    }
  }
  const std::vector<T> x = load<T>(ctx.inputs[0], ctx);
  std::vector<T> y(static_cast<std::size_t>(g.planes * g.h.out * g.w.out));
  std::vector<std::int64_t> idx(y.size());
  pool_planes<T>(g, x.data(), y.data(), idx.data());
  store<T>(ctx.outputs[0], y.data(), ctx);
  store_i64(ctx.outputs[1], idx.data());
}

// Adds each dy into its plane of dx at its index; an index outside the plane is a kernel fault.
template <class T, class I>
void scatter_planes(KernelContext& ctx, const T* dy, const I* idx, std::int64_t planes, std::int64_t out_plane,
                    std::int64_t in_plane, T* dx) {
  for (std::int64_t p = 0; p < planes; ++p) {
    T* dst = dx + p * in_plane;
    for (std::int64_t o = p * out_plane; o < (p + 1) * out_plane; ++o) {
      const std::int64_t at = static_cast<std::int64_t>(idx[o]);
      if (at < 0 || at >= in_plane) [[unlikely]] {
        set_fault(ctx, std::string(kGradOp) + ": index " + std::to_string(at) + " of output element " +
                           std::to_string(o) + " is outside the input plane [0, " + std::to_string(in_plane) + ")");
        continue;
      }
      dst[at] += dy[o];
    }
  }
}

template <class T>
void grad_kernel(KernelContext& ctx) {
  const TensorView& dyv = ctx.inputs[0];
  const Shape& x = *ctx.outputs[0].shape;
  const std::int64_t in_plane = x[x.size() - 2] * x[x.size() - 1];
  const Shape& ds = *dyv.shape;
  const std::int64_t out_plane = ds[ds.size() - 2] * ds[ds.size() - 1];
  const std::int64_t planes = out_plane == 0 ? 0 : dyv.numel / out_plane;
  if constexpr (std::is_same_v<T, float>) {
    const TensorView& out = ctx.outputs[0];
    if (direct_f32(ctx) && dyv.dtype == DType::kF32 && out.dtype == DType::kF32 &&
        ctx.inputs[1].dtype == DType::kI64) {  // See Note [Max pooling in place]
      float* dx = out.as<float>();
      std::fill_n(dx, out.numel, 0.0f);
      scatter_planes<float>(ctx, dyv.as<const float>(), ctx.inputs[1].as<const std::int64_t>(), planes, out_plane,
                            in_plane, dx);
      finish_in_place(dx, out.numel, ctx);
      return;
    }
  }
  const std::vector<T> dy = load<T>(dyv, ctx);
  std::vector<std::int64_t> idx(static_cast<std::size_t>(ctx.inputs[1].numel));
  load_i64(ctx.inputs[1], idx.data());
  std::vector<T> dx(static_cast<std::size_t>(ctx.outputs[0].numel), T(0));
  scatter_planes<T>(ctx, dy.data(), idx.data(), planes, out_plane, in_plane, dx.data());
  store<T>(ctx.outputs[0], dx.data(), ctx);
}

}  // namespace

NPUSCOPE_REGISTER_OP(OpSchema{.type = kPoolOp,
                              .category = OpCategory::kVector,
                              .min_inputs = 1,
                              .max_inputs = 1,
                              .infer = infer_pool,
                              .cost = cost_pool});
NPUSCOPE_REGISTER_OP(OpSchema{.type = kGradOp,
                              .category = OpCategory::kVector,
                              .min_inputs = 2,
                              .max_inputs = 2,
                              .infer = infer_grad,
                              .cost = cost_grad});
NPUSCOPE_REGISTER_FLOAT_KERNELS(kPoolOp, pool_kernel);
NPUSCOPE_REGISTER_FLOAT_KERNELS(kGradOp, grad_kernel);

}  // namespace npuscope::emulator::kernels
