// MaxPool, AvgPool, MaxPoolWithIndices (2-D NCHW and 3-D NCDHW) and GlobalAvgPool (NC..., any
// number of spatial dims), ONNX semantics, and AvgPoolGrad, AvgPool's gradient (CANN's AvgPoolV2Grad
// and AvgPool3DGrad: dy and the input's shape, input_size, with AvgPool's attributes -> dx).
// Attributes kernel_shape, strides, pads {begins..., ends...}, dilations, auto_pad, ceil_mode,
// count_include_pad (AvgPool), divisor_override (AvgPool, PyTorch's: every window's divisor when
// > 0), storage_order (MaxPoolWithIndices). NPU: computed in f32 (f32 window sums), rounded to the
// output dtype once; CPU golden: f64.
//
// Note [Pool windows]
// Output size per spatial dim (ONNX): (in + pad_begin + pad_end − ((k − 1)·d + 1)) / stride + 1,
// rounded down, or up with ceil_mode. With ceil_mode a last window that would start in the right
// padding is dropped (PyTorch and the ONNX reference do the same), so every window overlaps the
// input. auto_pad (VALID, SAME_UPPER, SAME_LOWER) replaces the pads as the ONNX spec says. AvgPool
// divides by the taps inside the input, or with count_include_pad by the taps inside the padded
// input (a ceil_mode window may run past the right padding; those taps never count).
//
// Each output index of each axis first gets its range of valid kernel taps (one TapSpan per output
// index), so the window loops do no bounds checks. A 2-D pool is a 3-D one with a depth of one.
//
// Note [MaxPool Indices]
// ONNX MaxPool's second output (MaxPoolWithIndices here) holds, for each output, the index of the
// maximum in the flattened input tensor: plane·(D·H·W) plus the voxel's index within the plane,
// row-major (storage_order 0: z·H·W + y·W + x) or column-major (storage_order 1: z + y·D + x·D·H),
// as the ONNX reference numbers them. The first maximum in scan order wins (a later equal value
// does not replace it); a NaN wins over numbers and the first NaN is kept. PyTorch's
// max_pool2d_with_indices counts within the plane instead: MaxPoolWithArgmax
// (max_pool_argmax_ops.cpp).
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "pool_util.h"

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
  PoolAxis d, h, w;  // a 4-D (NCHW) input has a depth axis of one voxel and a one-tap kernel
  std::int64_t in_plane() const { return d.in * h.in * w.in; }
  std::int64_t out_plane() const { return d.out * h.out * w.out; }
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

// Validates x (NCHW or NCDHW) and the attributes (infer) and gives the geometry (infer and the kernels).
PoolGeometry pool_geometry(const Shape& x, const Attrs& attrs, bool dilations, const char* op) {
  if (x.size() != 4 && x.size() != 5) fail(op, "expects a 4-D NCHW or 5-D NCDHW input, got " + shape_str(x));
  const std::size_t r = x.size() - 2;
  if (!attrs.has("kernel_shape")) fail(op, "kernel_shape is required");
  const auto kernel = attrs.get_ints("kernel_shape");
  const auto max_k = static_cast<std::int64_t>(kMaxTensorBytes);  // Note [Sizes from user input]
  if (kernel.size() != r || std::any_of(kernel.begin(), kernel.end(), [&](auto k) { return k < 1 || k > max_k; })) {
    fail(op, "kernel_shape must be " + std::to_string(r) + " values in [1, " + std::to_string(max_k) + "] for input " +
                 shape_str(x) + ", got " + shape_str(kernel));
  }
  const auto strides = dim_ints(attrs, "strides", r, 1, 1, op);
  const auto pads = dim_ints(attrs, "pads", 2 * r, 0, 0, op);  // {begins..., ends...}
  const auto dil = dilations ? dim_ints(attrs, "dilations", r, 1, 1, op) : std::vector<std::int64_t>(r, 1);
  const std::string auto_pad = attrs.get_string("auto_pad", "NOTSET");
  const bool ceil_mode = attrs.get_int("ceil_mode", 0) != 0;
  PoolGeometry g;
  g.n = x[0];
  g.c = x[1];
  g.d = {1, 1, 1, 1, 0, 0, 1};
  PoolAxis* axes[3] = {&g.d, &g.h, &g.w};
  for (std::size_t i = 0; i < r; ++i) {
    *axes[3 - r + i] = {x[2 + i], kernel[i], strides[i], dil[i], pads[i], pads[r + i], 0};
    resolve_axis(*axes[3 - r + i], auto_pad, ceil_mode, op);
  }
  return g;
}

Shape pool_out_shape(const PoolGeometry& g, std::size_t rank) {
  if (rank == 4) return {g.n, g.c, g.h.out, g.w.out};
  return {g.n, g.c, g.d.out, g.h.out, g.w.out};
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

enum class PoolKind { kMax, kAvg, kMaxIndices };

constexpr const char* pool_op(PoolKind kind) {
  return kind == PoolKind::kMax ? "MaxPool" : kind == PoolKind::kAvg ? "AvgPool" : "MaxPoolWithIndices";
}

template <PoolKind kKind>
std::vector<TensorMeta> infer_pool(std::span<const TensorMeta> in, const Attrs& attrs) {
  constexpr const char* op = pool_op(kKind);
  if constexpr (kKind == PoolKind::kAvg) require_floating(in, 0, op);
  const PoolGeometry g = pool_geometry(in[0].shape, attrs, kKind != PoolKind::kAvg || attrs.has("dilations"), op);
  const Shape out = pool_out_shape(g, in[0].shape.size());
  if constexpr (kKind == PoolKind::kMaxIndices) {
    const std::int64_t order = attrs.get_int("storage_order", 0);
    if (order != 0 && order != 1) fail(op, "storage_order must be 0 or 1, got " + std::to_string(order));
    return {{out, in[0].dtype}, {out, DType::kI64}};
  }
  return {{out, in[0].dtype}};
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
  double taps = 1;  // one op per kernel tap and output
  for (auto k : attrs.get_ints("kernel_shape", {})) taps *= static_cast<double>(k);
  return vector_cost(in, out, taps);
}

KernelCost cost_global_avg_pool(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs&) {
  const double per_out = out[0].numel() == 0 ? 0 : static_cast<double>(in[0].numel()) / out[0].numel();
  return vector_cost(in, out, per_out);
}

// The valid-tap spans of every axis, and how Indices number an input voxel (Note [MaxPool Indices]).
struct PoolPlan {
  PoolGeometry g;
  std::vector<TapSpan> ds, hs, ws;
  std::int64_t step_d = 0, step_h = 0, step_w = 0;  // index strides of z, y, x within a plane
};

PoolPlan pool_plan(const PoolGeometry& g, bool column_major) {
  PoolPlan p{g, tap_spans(g.d), tap_spans(g.h), tap_spans(g.w)};
  p.step_d = column_major ? 1 : g.h.in * g.w.in;
  p.step_h = column_major ? g.d.in : g.w.in;
  p.step_w = column_major ? g.d.in * g.h.in : 1;
  return p;
}

// The taps of one window inside one depth slice, folded into acc (the maximum, or the sum).
template <class T, bool kMax>
inline void fold_slice(const T* slice, std::int64_t width, std::int64_t dh, std::int64_t dw, const TapSpan& sh,
                       const TapSpan& sw, T& acc, bool& nan) {
  for (std::int64_t kh = sh.k0; kh < sh.k1; ++kh) {
    const T* row = slice + (sh.start + kh * dh) * width;
    for (std::int64_t kw = sw.k0; kw < sw.k1; ++kw) {
      const T v = row[sw.start + kw * dw];
      if constexpr (kMax) {
        acc = acc < v ? v : acc;
        nan |= v != v;  // kept apart so that the max stays branch-free
      } else {
        acc += v;
      }
    }
  }
}

// An average window's divisor (Note [Pool windows]; divisor_override > 0 replaces it).
struct AvgDivisor {
  bool count_include_pad = false;
  std::int64_t override_by = 0;
  std::int64_t of(const TapSpan& sd, const TapSpan& sh, const TapSpan& sw) const {
    if (override_by > 0) return override_by;
    return count_include_pad ? sd.padded_taps * sh.padded_taps * sw.padded_taps
                             : (sd.k1 - sd.k0) * (sh.k1 - sh.k0) * (sw.k1 - sw.k0);
  }
};

AvgDivisor avg_divisor(const Attrs& attrs) {
  return {attrs.get_int("count_include_pad", 0) != 0, attrs.get_int("divisor_override", 0)};
}

// One [D, H, W] plane -> one [OD, OH, OW] plane: each window's maximum (a NaN propagates) or
// average. A 2-D pool (a one-tap depth kernel) folds one slice per window without the depth loop.
template <class T, bool kMax>
void pool_plane(const T* x, T* y, const PoolGeometry& g, const PoolPlan& p, const AvgDivisor& divisor) {
  const std::int64_t width = g.w.in, plane = g.h.in * g.w.in;
  const std::int64_t dd = g.d.dilation, dh = g.h.dilation, dw = g.w.dilation;
  const bool flat = g.d.k == 1;
  for (const TapSpan& sd : p.ds) {
    for (const TapSpan& sh : p.hs) {
      for (const TapSpan& sw : p.ws) {
        T acc = kMax ? -std::numeric_limits<T>::infinity() : T(0);
        bool nan = false;
        if (flat) {
          fold_slice<T, kMax>(x + sd.start * plane, width, dh, dw, sh, sw, acc, nan);
        } else {
          for (std::int64_t kd = sd.k0; kd < sd.k1; ++kd) {
            fold_slice<T, kMax>(x + (sd.start + kd * dd) * plane, width, dh, dw, sh, sw, acc, nan);
          }
        }
        if constexpr (kMax) {
          *y++ = nan ? std::numeric_limits<T>::quiet_NaN() : acc;
        } else {
          *y++ = acc / static_cast<T>(divisor.of(sd, sh, sw));
        }
      }
    }
  }
}

// One window's maximum and its index within the plane (Note [MaxPool Indices]).
template <class T>
T argmax_window(const T* x, const PoolPlan& p, const TapSpan& sd, const TapSpan& sh, const TapSpan& sw,
                std::int64_t* index) {
  const PoolGeometry& g = p.g;
  T best = -std::numeric_limits<T>::infinity();
  std::int64_t at = -1;
  for (std::int64_t kd = sd.k0; kd < sd.k1; ++kd) {
    const std::int64_t z = sd.start + kd * g.d.dilation;
    for (std::int64_t kh = sh.k0; kh < sh.k1; ++kh) {
      const std::int64_t y = sh.start + kh * g.h.dilation;
      const T* row = x + (z * g.h.in + y) * g.w.in;
      for (std::int64_t kw = sw.k0; kw < sw.k1; ++kw) {
        const std::int64_t xi = sw.start + kw * g.w.dilation;
        const T v = row[xi];
        if (at < 0 || v > best || (v != v && best == best)) {
          best = v;
          at = z * p.step_d + y * p.step_h + xi * p.step_w;
        }
      }
    }
  }
  *index = at;
  return best;
}

// One plane's maxima and their indices in the input tensor (the plane starts at index `base`).
template <class T>
void argmax_plane(const T* x, T* y, std::int64_t* idx, std::int64_t base, const PoolPlan& p) {
  for (const TapSpan& sd : p.ds) {
    for (const TapSpan& sh : p.hs) {
      for (const TapSpan& sw : p.ws) {
        std::int64_t at = 0;
        *y++ = argmax_window<T>(x, p, sd, sh, sw, &at);
        *idx++ = base + at;
      }
    }
  }
}

template <class T, PoolKind kKind>
void pool_kernel(KernelContext& ctx) {
  const TensorView& xv = ctx.inputs[0];
  const PoolGeometry g =
      pool_geometry(*xv.shape, ctx.attrs, kKind != PoolKind::kAvg || ctx.attrs.has("dilations"), pool_op(kKind));
  const AvgDivisor divisor = avg_divisor(ctx.attrs);
  const PoolPlan plan = pool_plan(g, ctx.attrs.get_int("storage_order", 0) == 1);
  const std::vector<T> x = load<T>(xv, ctx);
  std::vector<T> y(static_cast<std::size_t>(ctx.outputs[0].numel));
  std::vector<std::int64_t> idx(kKind == PoolKind::kMaxIndices ? y.size() : 0);
  const std::int64_t in_plane = g.in_plane(), out_plane = g.out_plane();
  for (std::int64_t p = 0; p < g.n * g.c; ++p) {
    if constexpr (kKind == PoolKind::kMaxIndices) {
      argmax_plane<T>(x.data() + p * in_plane, y.data() + p * out_plane, idx.data() + p * out_plane, p * in_plane,
                      plan);
    } else {
      pool_plane<T, kKind == PoolKind::kMax>(x.data() + p * in_plane, y.data() + p * out_plane, g, plan, divisor);
    }
  }
  store<T>(ctx.outputs[0], y.data(), ctx);
  if constexpr (kKind == PoolKind::kMaxIndices) store_i64(ctx.outputs[1], idx.data());
}

template <class T>
void global_avg_pool_kernel(KernelContext& ctx) {
  global_pool_kernel<T>(ctx, [](const T* src, std::int64_t len) {
    T lanes[8] = {};
    for (std::int64_t j = 0; j < len; ++j) lanes[j & 7] += src[j];
    const T sum = ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) + ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
    return len == 0 ? std::numeric_limits<T>::quiet_NaN() : sum / static_cast<T>(len);
  });
}

// ---- AvgPoolGrad ---------------------------------------------------------------------------------

std::vector<TensorMeta> infer_avg_pool_grad(std::span<const TensorMeta> in, const Attrs& attrs) {
  constexpr const char* op = "AvgPoolGrad";
  require_floating(in, 0, op);
  const Shape x = size_attr(attrs, "input_size", {4, 5}, op);
  const PoolGeometry g = pool_geometry(x, attrs, attrs.has("dilations"), op);
  const Shape want = pool_out_shape(g, x.size());
  if (in[0].shape != want)
    fail(op, "dy has shape " + shape_str(in[0].shape) + " but the pool's output is " + shape_str(want));
  return {{x, in[0].dtype}};
}

KernelCost cost_avg_pool_grad(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs& attrs) {
  double taps = 1;  // one add per kernel tap and window
  for (auto k : attrs.get_ints("kernel_shape", {})) taps *= static_cast<double>(k);
  return vector_cost(
      in, out, taps * static_cast<double>(in[0].numel()) / std::max<double>(1.0, static_cast<double>(out[0].numel())));
}

// Every window hands dy / divisor to each of its taps inside the input.
template <class T>
void avg_pool_grad_kernel(KernelContext& ctx) {
  const PoolGeometry g = pool_geometry(size_attr(ctx.attrs, "input_size", {4, 5}, "AvgPoolGrad"), ctx.attrs,
                                       ctx.attrs.has("dilations"), "AvgPoolGrad");
  const PoolPlan p = pool_plan(g, false);
  const AvgDivisor divisor = avg_divisor(ctx.attrs);
  const std::vector<T> dy = load<T>(ctx.inputs[0], ctx);
  std::vector<T> dx(static_cast<std::size_t>(ctx.outputs[0].numel), T(0));
  const std::int64_t in_plane = g.in_plane(), out_plane = g.out_plane();
  for (std::int64_t plane = 0; plane < g.n * g.c; ++plane) {
    const T* src = dy.data() + plane * out_plane;
    T* dst = dx.data() + plane * in_plane;
    for (const TapSpan& sd : p.ds) {
      for (const TapSpan& sh : p.hs) {
        for (const TapSpan& sw : p.ws) {
          const T share = *src++ / static_cast<T>(divisor.of(sd, sh, sw));
          for (std::int64_t kd = sd.k0; kd < sd.k1; ++kd) {
            const std::int64_t z = sd.start + kd * g.d.dilation;
            for (std::int64_t kh = sh.k0; kh < sh.k1; ++kh) {
              T* row = dst + (z * g.h.in + sh.start + kh * g.h.dilation) * g.w.in;
              for (std::int64_t kw = sw.k0; kw < sw.k1; ++kw) row[sw.start + kw * g.w.dilation] += share;
            }
          }
        }
      }
    }
  }
  store<T>(ctx.outputs[0], dx.data(), ctx);
}

// Integer max pools go to the CPU golden (f64 holds them exactly); the NPU kernel computes in f32.
bool max_pool_npu_supports(std::span<const TensorMeta> in, const Attrs&) { return is_floating(in[0].dtype); }

}  // namespace

NPUSCOPE_REGISTER_OP(OpSchema{.type = "MaxPool",
                              .category = OpCategory::kVector,
                              .min_inputs = 1,
                              .max_inputs = 1,
                              .infer = infer_pool<PoolKind::kMax>,
                              .cost = cost_pool});
NPUSCOPE_REGISTER_OP(OpSchema{.type = "AvgPool",
                              .category = OpCategory::kVector,
                              .min_inputs = 1,
                              .max_inputs = 1,
                              .infer = infer_pool<PoolKind::kAvg>,
                              .cost = cost_pool});
NPUSCOPE_REGISTER_OP(OpSchema{.type = "MaxPoolWithIndices",
                              .category = OpCategory::kVector,
                              .min_inputs = 1,
                              .max_inputs = 1,
                              .infer = infer_pool<PoolKind::kMaxIndices>,
                              .cost = cost_pool});
NPUSCOPE_REGISTER_OP(OpSchema{.type = "AvgPoolGrad",
                              .category = OpCategory::kVector,
                              .min_inputs = 1,
                              .max_inputs = 1,
                              .infer = infer_avg_pool_grad,
                              .cost = cost_avg_pool_grad});
NPUSCOPE_REGISTER_OP(OpSchema{.type = "GlobalAvgPool",
                              .category = OpCategory::kVector,
                              .min_inputs = 1,
                              .max_inputs = 1,
                              .infer = infer_global_avg_pool,
                              .cost = cost_global_avg_pool});

NPUSCOPE_REGISTER_KERNEL_IF("MaxPool", Backend::kNpu, (pool_kernel<float, PoolKind::kMax>), max_pool_npu_supports);
NPUSCOPE_REGISTER_KERNEL("MaxPool", Backend::kCpu, (pool_kernel<double, PoolKind::kMax>));
NPUSCOPE_REGISTER_KERNEL_IF("MaxPoolWithIndices", Backend::kNpu, (pool_kernel<float, PoolKind::kMaxIndices>),
                            max_pool_npu_supports);
NPUSCOPE_REGISTER_KERNEL("MaxPoolWithIndices", Backend::kCpu, (pool_kernel<double, PoolKind::kMaxIndices>));
NPUSCOPE_REGISTER_FLOAT_KERNELS("AvgPool", pool_kernel, PoolKind::kAvg);
NPUSCOPE_REGISTER_FLOAT_KERNELS("AvgPoolGrad", avg_pool_grad_kernel);
NPUSCOPE_REGISTER_FLOAT_KERNELS("GlobalAvgPool", global_avg_pool_kernel);

}  // namespace npuscope::emulator::kernels
