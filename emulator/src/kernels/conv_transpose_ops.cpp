// ConvTranspose (ONNX): X [N, C, D1...] (1-D, 2-D, 3-D...), W [C, M/group, k1...], optional bias
// [M]; attributes strides, pads {begins..., ends...}, dilations, group, output_padding,
// output_shape, auto_pad, kernel_shape. Cube op: see Note [Cube numerics] in gemm_util.h.
//
// Note [ConvTranspose as GEMM + col2im]
// Each input pixel scatters W[c] (scaled by its value) into the output. Per (image, group) one
// GEMM gives col [M/group · prod(k), prod(D)] = W_gᵀ · X_g: row (m, tap) holds what every input
// pixel adds to output channel m at kernel tap `tap`; col2im then adds each row into the output at
// input·stride + tap·dilation − pad_begin (dropping what falls outside). The adds run in the GEMM's
// accumulation type (f32 on the NPU) and the output is rounded once.
//
// Output size per spatial dim (ONNX): stride·(in − 1) + output_padding + (k − 1)·dilation + 1 −
// pad_begin − pad_end. With output_shape (or auto_pad SAME_*, where output = in·stride) the pads come
// from total = that size without pads − output: SAME_UPPER puts floor(total / 2) at the beginning,
// anything else total − floor(total / 2). total may be negative (the output is larger than the full
// scatter), so the division floors, as the ONNX reference's does.
#include <algorithm>
#include <functional>
#include <numeric>
#include <string>

#include "conv_util.h"

namespace npuscope::emulator::kernels {
namespace {

constexpr const char* kOp = "ConvTranspose";
using Ints = std::vector<std::int64_t>;

struct CtGeom {
  std::int64_t n = 0, c = 0, m = 0, group = 1;  // images, input channels, output channels
  Ints in, k, out, stride, dil, pad_begin;      // per spatial dim
  std::int64_t rank() const { return static_cast<std::int64_t>(in.size()); }
  std::int64_t cin_g() const { return c / group; }
  std::int64_t mout_g() const { return m / group; }
  std::int64_t in_size() const { return prod(in); }
  std::int64_t k_size() const { return prod(k); }
  std::int64_t out_size() const { return prod(out); }
  std::int64_t col_rows() const { return mout_g() * k_size(); }  // GEMM M
  static std::int64_t prod(const Ints& v) {
    return std::accumulate(v.begin(), v.end(), std::int64_t{1}, std::multiplies<>());
  }
};

std::int64_t floor_div2(std::int64_t v) { return v >= 0 ? v / 2 : -((-v + 1) / 2); }

// Output sizes and begin pads from the attributes (Note [ConvTranspose as GEMM + col2im]).
void resolve_output(CtGeom& g, const Attrs& attrs) {
  const std::size_t r = g.in.size();
  const Ints opad = dim_ints(attrs, "output_padding", r, 0, 0, kOp);
  const Ints pads = dim_ints(attrs, "pads", 2 * r, 0, 0, kOp);
  const std::string auto_pad = attrs.get_string("auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "VALID" && auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER" &&
      !auto_pad.empty()) {
    fail(kOp, "unknown auto_pad '" + auto_pad + "'");
  }
  Ints want = attrs.get_ints("output_shape", {});
  if (want.size() == r + 2) want.erase(want.begin(), want.begin() + 2);  // a full [N, M, ...] shape
  if (!want.empty() && want.size() != r) {
    fail(kOp, "output_shape " + shape_str(want) + " must have " + std::to_string(r) + " values");
  }
  const bool same = auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
  g.out.assign(r, 0);
  g.pad_begin.assign(r, 0);
  for (std::size_t i = 0; i < r; ++i) {
    // Checked (Note [Sizes from user input]): strides and dilations are capped at 2^40, dims too.
    const std::int64_t strided = checked_mul(g.stride[i], g.in[i] - 1, kOp, "stride * (input size - 1)");
    const std::int64_t dilated = checked_mul(g.k[i] - 1, g.dil[i], kOp, "(kernel size - 1) * dilation");
    const std::int64_t full =
        checked_add(checked_add(strided, opad[i], kOp, "the output size"), dilated + 1, kOp, "the output size");
    if (!want.empty() || same) {
      g.out[i] = !want.empty() ? want[i] : checked_mul(g.in[i], g.stride[i], kOp, "input size * stride");
      const std::int64_t total = full - g.out[i];
      g.pad_begin[i] = auto_pad == "SAME_UPPER" ? floor_div2(total) : total - floor_div2(total);
    } else if (auto_pad == "VALID") {
      g.out[i] = full;
    } else {
      g.pad_begin[i] = pads[i];
      g.out[i] = full - pads[i] - pads[i + r];  // pads are in [0, 2^40]: no overflow
    }
    if (g.out[i] < 1) {
      fail(kOp, "output size " + std::to_string(g.out[i]) + " along spatial dim " + std::to_string(i) +
                    " is not positive (input " + std::to_string(g.in[i]) + ", kernel " + std::to_string(g.k[i]) +
                    ", pads " + shape_str(pads) + ")");
    }
  }
}

// Validates shapes and attributes (infer) and gives the geometry (infer, cost, kernel).
CtGeom ct_geom(std::span<const TensorMeta> in, const Attrs& attrs) {
  const Shape &x = in[0].shape, &w = in[1].shape;
  if (x.size() < 3 || w.size() != x.size()) {
    fail(kOp, "input must be [N, C, D1, ...] and weight [C, M/group, k1, ...] of the same rank, got " + shape_str(x) +
                  " and " + shape_str(w));
  }
  const std::size_t r = x.size() - 2;
  CtGeom g;
  g.n = x[0], g.c = x[1], g.group = attrs.get_int("group", 1);
  g.in.assign(x.begin() + 2, x.end());
  g.k.assign(w.begin() + 2, w.end());
  if (g.group < 1 || w[0] != g.c || g.c % g.group != 0) {
    fail(kOp, "group " + std::to_string(g.group) + " does not fit input " + shape_str(x) + " and weight " +
                  shape_str(w) + " (need weight dim 0 = C, C divisible by group)");
  }
  g.m = checked_mul(w[1], g.group, kOp, "output channels (weight dim 1 * group)");
  if (attrs.has("kernel_shape") && attrs.get_ints("kernel_shape") != g.k) {
    fail(kOp, "kernel_shape " + shape_str(attrs.get_ints("kernel_shape")) + " does not match weight " + shape_str(w));
  }
  if (std::any_of(g.k.begin(), g.k.end(), [](std::int64_t v) { return v < 1; })) {
    fail(kOp, "weight " + shape_str(w) + " has an empty kernel");
  }
  g.stride = dim_ints(attrs, "strides", r, 1, 1, kOp);
  g.dil = dim_ints(attrs, "dilations", r, 1, 1, kOp);
  resolve_output(g, attrs);
  if (in.size() > 2 && in[2].present && in[2].shape != Shape{g.m}) {
    fail(kOp, "bias must be [" + std::to_string(g.m) + "], got " + shape_str(in[2].shape));
  }
  return g;
}

std::vector<TensorMeta> infer_conv_transpose(std::span<const TensorMeta> in, const Attrs& attrs) {
  require_same_dtype(in, kOp);
  require_floating(in, 0, kOp);
  const CtGeom g = ct_geom(in, attrs);
  Shape out{g.n, g.m};
  out.insert(out.end(), g.out.begin(), g.out.end());
  return {{out, in[0].dtype}};
}

KernelCost cost_conv_transpose(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs& attrs) {
  const CtGeom g = ct_geom(in, attrs);
  return cube_cost(g.group, g.n * g.in_size(), g.col_rows(), g.cin_g(), io_bytes(in, out), out_bytes(out));
}

// Input indices j in [lo, hi) whose output index j·stride + off lies in [0, out).
std::pair<std::int64_t, std::int64_t> valid_inputs(std::int64_t in, std::int64_t stride, std::int64_t off,
                                                   std::int64_t out) {
  const std::int64_t lo = std::min(in, off >= 0 ? 0 : (-off + stride - 1) / stride);
  const std::int64_t hi = out - 1 - off < 0 ? lo : std::clamp((out - 1 - off) / stride + 1, lo, in);
  return {lo, hi};
}

// Adds one col row (input-shaped, `src`) into one output plane (`dst`) at kernel tap `tap`.
// `in_step`/`out_step` are the row-major strides of the input and output spatial dims.
template <class T>
void scatter_add(const T* src, T* dst, const CtGeom& g, const Ints& tap, const Ints& in_step, const Ints& out_step,
                 std::size_t dim) {
  const std::int64_t s = g.stride[dim], off = tap[dim] * g.dil[dim] - g.pad_begin[dim];
  const auto [lo, hi] = valid_inputs(g.in[dim], s, off, g.out[dim]);
  if (dim + 1 == g.in.size()) {
    for (std::int64_t j = lo; j < hi; ++j) dst[j * s + off] += src[j];
    return;
  }
  for (std::int64_t j = lo; j < hi; ++j) {
    scatter_add(src + j * in_step[dim], dst + (j * s + off) * out_step[dim], g, tap, in_step, out_step, dim + 1);
  }
}

// col [M/group · prod(k), prod(D)] -> the group's output planes (accumulating).
template <class T>
void col2im(const T* col, const CtGeom& g, T* y) {
  const Ints in_step = strides_of(g.in), out_step = strides_of(g.out);
  Ints tap(g.in.size(), 0);
  for (std::int64_t t = 0; t < g.k_size(); ++t) {
    for (std::int64_t mo = 0; mo < g.mout_g(); ++mo) {
      scatter_add(col + (mo * g.k_size() + t) * g.in_size(), y + mo * g.out_size(), g, tap, in_step, out_step, 0);
    }
    for (std::size_t d = tap.size(); d-- > 0;) {  // next tap, last dim fastest (W's layout)
      if (++tap[d] < g.k[d]) break;
      tap[d] = 0;
    }
  }
}

template <class T>
void conv_transpose_kernel(KernelContext& ctx) {
  const CtGeom g = ct_geom(conv_operand_metas(ctx), ctx.attrs);  // validated by infer: cannot throw here
  ConvOperands<T> op(ctx);
  const T *x = op.x.data(), *w = op.w.data();
  T* y = op.y.data();
  std::fill(y, y + ctx.outputs[0].numel, T(0));
  if (const T* b = op.bias()) {
    for (std::int64_t p = 0; p < g.n * g.m; ++p)
      std::fill(y + p * g.out_size(), y + (p + 1) * g.out_size(), b[p % g.m]);
  }
  ScratchBlock col_block;
  T* col = col_block.get<T>(g.col_rows() * g.in_size());
  for (std::int64_t i = 0; i < g.n; ++i) {
    for (std::int64_t gi = 0; gi < g.group; ++gi) {
      const T* xg = x + (i * g.c + gi * g.cin_g()) * g.in_size();
      const T* wg = w + gi * g.cin_g() * g.col_rows();
      gemm(true, false, g.col_rows(), g.in_size(), g.cin_g(), T(1), wg, g.col_rows(), xg, g.in_size(), T(0), col,
           g.in_size());
      col2im(col, g, y + (i * g.m + gi * g.mout_g()) * g.out_size());
    }
  }
  op.y.finish(ctx);
}

}  // namespace

NPUSCOPE_REGISTER_OP(OpSchema{.type = "ConvTranspose",
                              .category = OpCategory::kCube,
                              .min_inputs = 2,
                              .max_inputs = 3,
                              .infer = infer_conv_transpose,
                              .cost = cost_conv_transpose});
NPUSCOPE_REGISTER_CUBE_KERNELS("ConvTranspose", conv_transpose_kernel, cube_supports);

}  // namespace npuscope::emulator::kernels
