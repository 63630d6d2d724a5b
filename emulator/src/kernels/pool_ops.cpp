// MaxPool, AvgPool (2-D, NCHW) and GlobalAvgPool (NC..., any number of spatial dims), ONNX semantics.
// NPU: computed in f32 (f32 window sums), rounded to the output dtype once; CPU golden: f64.
//
// Note [Pool windows]
// Output size per spatial dim (ONNX): (in + pad_begin + pad_end − ((k − 1)·d + 1)) / stride + 1,
// rounded down, or up with ceil_mode. With ceil_mode a last window that would start in the right
// padding is dropped (PyTorch and the ONNX reference do the same), so every window overlaps the
// input. auto_pad (VALID, SAME_UPPER, SAME_LOWER) replaces the pads as the ONNX spec says. AvgPool
// divides by the taps inside the input, or with count_include_pad by the taps inside the padded
// input (a ceil_mode window may run past the right padding; those taps never count).
//
// Each output row and column first gets its range of valid kernel taps (one TapSpan per output
// index), so the window loops do no bounds checks.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "kernel_util.h"

namespace npuscope::emulator::kernels {
namespace {

// The valid kernel taps [k0, k1) of one output index, the first input index, and the divisor
// with count_include_pad.
struct TapSpan {
  std::int64_t k0 = 0, k1 = 0, start = 0, padded_taps = 0;
};

struct PoolAxis {
  std::int64_t in = 0, k = 1, stride = 1, dilation = 1, pad_begin = 0, pad_end = 0, out = 0;
};

struct PoolGeometry {
  std::int64_t n = 0, c = 0;
  PoolAxis h, w;
};

// Applies auto_pad, then the output-size rule of Note [Pool windows].
void resolve_axis(PoolAxis& a, const std::string& auto_pad, bool ceil_mode, const char* op) {
  const std::int64_t span = checked_mul(a.k - 1, a.dilation, op, "the dilated kernel extent") + 1;  // both <= 2^40
  if (auto_pad == "VALID") {
    a.pad_begin = a.pad_end = 0;
  } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    const std::int64_t out = (a.in + a.stride - 1) / a.stride;
    const std::int64_t total = std::max<std::int64_t>(0, (out - 1) * a.stride + span - a.in);
    a.pad_begin = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
    a.pad_end = total - a.pad_begin;
  } else if (auto_pad != "NOTSET" && !auto_pad.empty()) {
    fail(op, "unknown auto_pad '" + auto_pad + "'");
  }
  if (a.pad_begin >= span || a.pad_end >= span) {
    fail(op, "pads (" + std::to_string(a.pad_begin) + ", " + std::to_string(a.pad_end) +
                 ") must be smaller than the kernel extent " + std::to_string(span));
  }
  const std::int64_t room = a.in + a.pad_begin + a.pad_end - span;
  if (room < 0) {
    fail(op, "kernel extent " + std::to_string(span) + " is larger than the padded input " +
                 std::to_string(a.in + a.pad_begin + a.pad_end));
  }
  a.out = (ceil_mode ? (room + a.stride - 1) / a.stride : room / a.stride) + 1;
  if (ceil_mode && (a.out - 1) * a.stride >= a.in + a.pad_begin) --a.out;
}

// Validates x and the attributes (infer) and gives the geometry (infer and the kernels).
PoolGeometry pool_geometry(const Shape& x, const Attrs& attrs, bool dilations, const char* op) {
  if (x.size() != 4) fail(op, "expects a 4-D NCHW input, got " + shape_str(x));
  if (!attrs.has("kernel_shape")) fail(op, "kernel_shape is required");
  const auto kernel = attrs.get_ints("kernel_shape");
  const auto max_k = static_cast<std::int64_t>(kMaxTensorBytes);  // Note [Sizes from user input]
  if (kernel.size() != 2 || kernel[0] < 1 || kernel[1] < 1 || kernel[0] > max_k || kernel[1] > max_k) {
    fail(op, "kernel_shape must be 2 values in [1, " + std::to_string(max_k) + "], got " + shape_str(kernel));
  }
  const auto strides = dim_ints(attrs, "strides", 2, 1, 1, op);
  const auto pads = dim_ints(attrs, "pads", 4, 0, 0, op);  // {top, left, bottom, right}
  const auto dil = dilations ? dim_ints(attrs, "dilations", 2, 1, 1, op) : std::vector<std::int64_t>{1, 1};
  const std::string auto_pad = attrs.get_string("auto_pad", "NOTSET");
  const bool ceil_mode = attrs.get_int("ceil_mode", 0) != 0;
  PoolGeometry g;
  g.n = x[0];
  g.c = x[1];
  g.h = {x[2], kernel[0], strides[0], dil[0], pads[0], pads[2], 0};
  g.w = {x[3], kernel[1], strides[1], dil[1], pads[1], pads[3], 0};
  resolve_axis(g.h, auto_pad, ceil_mode, op);
  resolve_axis(g.w, auto_pad, ceil_mode, op);
  return g;
}

std::vector<TapSpan> tap_spans(const PoolAxis& a) {
  std::vector<TapSpan> spans(static_cast<std::size_t>(a.out));
  for (std::int64_t o = 0; o < a.out; ++o) {
    TapSpan& s = spans[static_cast<std::size_t>(o)];
    s.start = o * a.stride - a.pad_begin;
    // First tap at or after index 0, first tap at or after `limit`: ceil((limit − start) / d).
    auto first_tap_from = [&](std::int64_t limit) {
      const std::int64_t gap = limit - s.start;
      return std::clamp<std::int64_t>(gap <= 0 ? 0 : (gap + a.dilation - 1) / a.dilation, 0, a.k);
    };
    s.k0 = first_tap_from(0);
    s.k1 = std::max(s.k0, first_tap_from(a.in));
    s.padded_taps = first_tap_from(a.in + a.pad_end) - first_tap_from(-a.pad_begin);
  }
  return spans;
}

template <bool kMaxPool>
std::vector<TensorMeta> infer_pool(std::span<const TensorMeta> in, const Attrs& attrs) {
  const char* op = kMaxPool ? "MaxPool" : "AvgPool";
  if constexpr (!kMaxPool) require_floating(in, 0, op);
  const PoolGeometry g = pool_geometry(in[0].shape, attrs, kMaxPool || attrs.has("dilations"), op);
  return {{{g.n, g.c, g.h.out, g.w.out}, in[0].dtype}};
}

std::vector<TensorMeta> infer_global_avg_pool(std::span<const TensorMeta> in, const Attrs&) {
  require_floating(in, 0, "GlobalAvgPool");
  if (in[0].shape.size() < 3) {
    fail("GlobalAvgPool", "expects an [N, C, spatial...] input, got " + shape_str(in[0].shape));
  }
  Shape out(in[0].shape.size(), 1);
  out[0] = in[0].shape[0];
  out[1] = in[0].shape[1];
  return {{out, in[0].dtype}};
}

KernelCost cost_pool(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs& attrs) {
  const auto k = attrs.get_ints("kernel_shape", {1, 1});
  return vector_cost(in, out, static_cast<double>(k.size() == 2 ? k[0] * k[1] : 1));  // one op per tap
}

KernelCost cost_global_avg_pool(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs&) {
  const double per_out = out[0].numel() == 0 ? 0 : static_cast<double>(in[0].numel()) / out[0].numel();
  return vector_cost(in, out, per_out);
}

// One [H, W] plane -> one [OH, OW] plane.
template <class T, bool kMaxPool>
void pool_plane(const T* x, T* y, const PoolGeometry& g, const std::vector<TapSpan>& hs, const std::vector<TapSpan>& ws,
                [[maybe_unused]] bool count_include_pad) {
  const std::int64_t width = g.w.in, dh = g.h.dilation, dw = g.w.dilation;
  for (const TapSpan& sh : hs) {
    for (const TapSpan& sw : ws) {
      T acc = kMaxPool ? -std::numeric_limits<T>::infinity() : T(0);
      bool nan = false;  // max: a NaN in the window propagates (kept apart so the max stays branch-free)
      for (std::int64_t kh = sh.k0; kh < sh.k1; ++kh) {
        const T* row = x + (sh.start + kh * dh) * width;
        for (std::int64_t kw = sw.k0; kw < sw.k1; ++kw) {
          const T v = row[sw.start + kw * dw];
          if constexpr (kMaxPool) {
            acc = acc < v ? v : acc;
            nan |= v != v;
          } else {
            acc += v;
          }
        }
      }
      if constexpr (kMaxPool) {
        if (nan) acc = std::numeric_limits<T>::quiet_NaN();
      } else {
        const std::int64_t taps =
            count_include_pad ? sh.padded_taps * sw.padded_taps : (sh.k1 - sh.k0) * (sw.k1 - sw.k0);
        acc /= static_cast<T>(taps);
      }
      *y++ = acc;
    }
  }
}

template <class T, bool kMaxPool>
void pool_kernel(KernelContext& ctx) {
  const TensorView& xv = ctx.inputs[0];
  const char* op = kMaxPool ? "MaxPool" : "AvgPool";
  const PoolGeometry g = pool_geometry(*xv.shape, ctx.attrs, kMaxPool || ctx.attrs.has("dilations"), op);
  const bool count_include_pad = ctx.attrs.get_int("count_include_pad", 0) != 0;
  const std::vector<TapSpan> hs = tap_spans(g.h), ws = tap_spans(g.w);
  const std::vector<T> x = load<T>(xv, ctx);
  std::vector<T> y(static_cast<std::size_t>(ctx.outputs[0].numel));
  const std::int64_t in_plane = g.h.in * g.w.in, out_plane = g.h.out * g.w.out;
  for (std::int64_t p = 0; p < g.n * g.c; ++p) {
    pool_plane<T, kMaxPool>(x.data() + p * in_plane, y.data() + p * out_plane, g, hs, ws, count_include_pad);
  }
  store<T>(ctx.outputs[0], y.data(), ctx);
}

template <class T>
void global_avg_pool_kernel(KernelContext& ctx) {
  const TensorView& xv = ctx.inputs[0];
  const std::int64_t planes = ctx.outputs[0].numel;
  const std::int64_t plane = planes == 0 ? 0 : xv.numel / planes;
  const std::vector<T> x = load<T>(xv, ctx);
  std::vector<T> y(static_cast<std::size_t>(planes));
  for (std::int64_t p = 0; p < planes; ++p) {
    const T* src = x.data() + p * plane;
    T lanes[8] = {};
    for (std::int64_t j = 0; j < plane; ++j) lanes[j & 7] += src[j];
    const T sum = ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) + ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
    y[static_cast<std::size_t>(p)] = plane == 0 ? std::numeric_limits<T>::quiet_NaN() : sum / static_cast<T>(plane);
  }
  store<T>(ctx.outputs[0], y.data(), ctx);
}

// Integer max pools go to the CPU golden (f64 holds them exactly); the NPU kernel computes in f32.
bool max_pool_npu_supports(std::span<const TensorMeta> in, const Attrs&) { return is_floating(in[0].dtype); }

}  // namespace

NPUSCOPE_REGISTER_OP(OpSchema{.type = "MaxPool",
                              .category = OpCategory::kVector,
                              .min_inputs = 1,
                              .max_inputs = 1,
                              .infer = infer_pool<true>,
                              .cost = cost_pool});
NPUSCOPE_REGISTER_OP(OpSchema{.type = "AvgPool",
                              .category = OpCategory::kVector,
                              .min_inputs = 1,
                              .max_inputs = 1,
                              .infer = infer_pool<false>,
                              .cost = cost_pool});
NPUSCOPE_REGISTER_OP(OpSchema{.type = "GlobalAvgPool",
                              .category = OpCategory::kVector,
                              .min_inputs = 1,
                              .max_inputs = 1,
                              .infer = infer_global_avg_pool,
                              .cost = cost_global_avg_pool});

NPUSCOPE_REGISTER_KERNEL_IF("MaxPool", Backend::kNpu, (pool_kernel<float, true>), max_pool_npu_supports);
NPUSCOPE_REGISTER_KERNEL("MaxPool", Backend::kCpu, (pool_kernel<double, true>));
NPUSCOPE_REGISTER_KERNEL("AvgPool", Backend::kNpu, (pool_kernel<float, false>));
NPUSCOPE_REGISTER_KERNEL("AvgPool", Backend::kCpu, (pool_kernel<double, false>));
NPUSCOPE_REGISTER_KERNEL("GlobalAvgPool", Backend::kNpu, global_avg_pool_kernel<float>);
NPUSCOPE_REGISTER_KERNEL("GlobalAvgPool", Backend::kCpu, global_avg_pool_kernel<double>);

}  // namespace npuscope::emulator::kernels
