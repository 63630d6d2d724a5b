// See profile_adapters.h and Note [Kernels as data points] in profile_points.h.
#include "profile_adapters.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>

namespace npuscope::calibration::profile {
namespace {

using emulator::Attrs;
using emulator::Shape;
using emulator::shape_str;
using emulator::TensorMeta;

bool is_5hd(const KernelTensor& t) { return t.format.rfind("NC1HWC0", 0) == 0; }
bool is_fz(const KernelTensor& t) { return t.format == "FRACTAL_Z"; }

// kh = kw from the taps of a FRACTAL_Z shape's first dim over C1.
std::optional<std::int64_t> square_kernel(std::int64_t taps) {
  if (taps < 1) return std::nullopt;
  const auto k = static_cast<std::int64_t>(std::llround(std::sqrt(static_cast<double>(taps))));
  return k * k == taps ? std::optional(k) : std::nullopt;
}

// Strides and pads that map an input of spatial size [h, w] onto [oh, ow] with a k x k window.
std::string window_attrs(const Shape& x, const Shape& y, std::int64_t k, Attrs& attrs, bool conv) {
  if (x.size() != 4 || y.size() != 4)
    return "expected NCHW input and output, got " + shape_str(x) + " and " + shape_str(y);
  const auto sh = stride_pad(x[2], k, y[2]), sw = stride_pad(x[3], k, y[3]);
  if (!sh || !sw) {
    return "no stride and pad take " + shape_str(x) + " to " + shape_str(y) + " with a " + std::to_string(k) + "x" +
           std::to_string(k) + " window";
  }
  attrs.set("strides", std::vector<std::int64_t>{sh->first, sw->first});
  if (conv) {
    attrs.set("pads", std::vector<std::int64_t>{sh->second, sw->second, sh->second, sw->second});
  } else {
    attrs.set("pads", std::vector<std::int64_t>{sh->second, sw->second});
  }
  return {};
}

// The (adj_x, adj_y) that give `out` from a and b: none first (a shape fits several when square).
std::optional<std::pair<bool, bool>> transposes(const Shape& a, const Shape& b, const Shape& out) {
  if (a.size() < 2 || b.size() < 2 || out.size() < 2) return std::nullopt;
  for (int t = 0; t < 4; ++t) {
    const bool ta = (t & 2) != 0, tb = (t & 1) != 0;
    const std::int64_t m = a[a.size() - (ta ? 1 : 2)], ka = a[a.size() - (ta ? 2 : 1)];
    const std::int64_t kb = b[b.size() - (tb ? 1 : 2)], n = b[b.size() - (tb ? 2 : 1)];
    if (ka == kb && m == out[out.size() - 2] && n == out.back()) return std::make_pair(ta, tb);
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::pair<std::int64_t, std::int64_t>> stride_pad(std::int64_t in, std::int64_t k, std::int64_t out) {
  constexpr std::int64_t kMax = 64;
  if (in < 1 || k < 1 || out < 1) return std::nullopt;
  for (std::int64_t s = 1; s <= kMax; ++s) {
    for (std::int64_t p = 0; p < std::min(k, kMax); ++p) {
      if (in + 2 * p >= k && (in + 2 * p - k) / s + 1 == out) return std::make_pair(s, p);
    }
  }
  return std::nullopt;
}

TensorMeta meta(Shape shape, DType dtype) { return TensorMeta{.shape = std::move(shape), .dtype = dtype}; }

// A recorded tensor as the emulator's input: its logical shape and its dtype.
std::string as_input(const KernelTensor& t, TensorMeta& out) {
  const auto shape = logical_shape(t);
  if (!shape) return t.format + " shape " + shape_str(t.shape) + " is not 5-D";
  if (!t.dtype) return "dtype " + t.dtype_name + " not modelled";
  out = meta(*shape, *t.dtype);
  return {};
}

std::string need(const KernelTensors& k, std::size_t inputs, std::size_t outputs) {
  if (k.inputs.size() < inputs || k.outputs.size() < outputs) {
    return "expected " + std::to_string(inputs) + " inputs and " + std::to_string(outputs) + " outputs, got " +
           std::to_string(k.inputs.size()) + " and " + std::to_string(k.outputs.size());
  }
  return {};
}

// Conv2D (x 5HD, w FRACTAL_Z, bias?) -> y 5HD.
std::string conv2d(const KernelTensors& k, Adapted& a) {
  if (auto e = need(k, 2, 1); !e.empty()) return e;
  const KernelTensor &x = k.inputs[0], &w = k.inputs[1];
  if (!is_5hd(x) || !is_fz(w) || w.shape.size() != 4 || x.shape.size() != 5) {
    return "expected an NC1HWC0 input and a FRACTAL_Z weight, got " + x.format + " and " + w.format;
  }
  TensorMeta xm, ym;
  if (auto e = as_input(x, xm); !e.empty()) return e;
  if (auto e = as_input(k.outputs[0], ym); !e.empty()) return e;
  if (ym.shape.size() != 4) return "expected an NC1HWC0 output, got " + k.outputs[0].format;
  const bool bias = k.inputs.size() > 2 && k.inputs[2].shape.size() == 1;
  const std::int64_t cout = bias ? k.inputs[2].shape[0] : ym.shape[1];
  const auto kk = square_kernel(w.shape[0] / std::max<std::int64_t>(x.shape[1], 1));
  if (!kk) return "FRACTAL_Z weight " + shape_str(w.shape) + ": kh*kw is not a square";
  Shape y = ym.shape;
  y[1] = cout;
  a.inputs = {xm, meta({cout, xm.shape[1], *kk, *kk}, xm.dtype)};
  if (bias) a.inputs.push_back(meta({cout}, xm.dtype));
  a.outputs = {y};
  return window_attrs(xm.shape, y, *kk, a.attrs, true);
}

// Conv2DBackpropInput (size INT32 [4], w FRACTAL_Z, dy 5HD) -> dx 5HD.
std::string conv2d_backprop_input(const KernelTensors& k, Adapted& a) {
  if (auto e = need(k, 3, 1); !e.empty()) return e;
  const KernelTensor &w = k.inputs[1], &dy = k.inputs[2], &dx = k.outputs[0];
  if (!is_fz(w) || !is_5hd(dy) || !is_5hd(dx) || w.shape.size() != 4 || dx.shape.size() != 5) {
    return "expected a FRACTAL_Z weight and NC1HWC0 gradients, got " + w.format + ", " + dy.format + ", " + dx.format;
  }
  TensorMeta dym, dxm;
  if (auto e = as_input(dy, dym); !e.empty()) return e;
  if (auto e = as_input(dx, dxm); !e.empty()) return e;
  const auto kk = square_kernel(w.shape[0] / std::max<std::int64_t>(dx.shape[1], 1));
  if (!kk) return "FRACTAL_Z weight " + shape_str(w.shape) + ": kh*kw is not a square";
  a.inputs = {dym, meta({dym.shape[1], dxm.shape[1], *kk, *kk}, dym.dtype)};
  a.attrs.set("input_size", std::vector<std::int64_t>(dxm.shape));
  a.outputs = {dxm.shape};
  return window_attrs(dxm.shape, dym.shape, *kk, a.attrs, true);
}

// Conv2DBackpropFilter (x 5HD, size INT32 [4], dy 5HD) -> dw FRACTAL_Z.
std::string conv2d_backprop_filter(const KernelTensors& k, Adapted& a) {
  if (auto e = need(k, 3, 1); !e.empty()) return e;
  const KernelTensor &x = k.inputs[0], &dy = k.inputs[2], &dw = k.outputs[0];
  if (!is_5hd(x) || !is_5hd(dy) || !is_fz(dw) || dw.shape.size() != 4 || x.shape.size() != 5) {
    return "expected NC1HWC0 inputs and a FRACTAL_Z output, got " + x.format + ", " + dy.format + ", " + dw.format;
  }
  TensorMeta xm, dym;
  if (auto e = as_input(x, xm); !e.empty()) return e;
  if (auto e = as_input(dy, dym); !e.empty()) return e;
  const auto kk = square_kernel(dw.shape[0] / std::max<std::int64_t>(x.shape[1], 1));
  if (!kk) return "FRACTAL_Z output " + shape_str(dw.shape) + ": kh*kw is not a square";
  const Shape filter{dym.shape[1], xm.shape[1], *kk, *kk};
  a.inputs = {xm, dym};
  a.attrs.set("filter_size", std::vector<std::int64_t>(filter));
  a.outputs = {filter};
  return window_attrs(xm.shape, dym.shape, *kk, a.attrs, true);
}

// MatMulV2/V3 (a, b, bias?) and BatchMatMul*: transposes from the output shape. A 2-D product with
// a bias or a transposed operand is a Gemm (transA/transB; MatMul has no transposes), a batched one
// a BatchMatMul (adj_x/adj_y).
std::string matmul(const KernelTensors& k, Adapted& a) {
  if (auto e = need(k, 2, 1); !e.empty()) return e;
  TensorMeta am, bm;
  if (auto e = as_input(k.inputs[0], am); !e.empty()) return e;
  if (auto e = as_input(k.inputs[1], bm); !e.empty()) return e;
  const Shape& out = k.outputs[0].shape;
  const auto t = transposes(am.shape, bm.shape, out);
  if (!t) return "no transposes take " + shape_str(am.shape) + " x " + shape_str(bm.shape) + " to " + shape_str(out);
  a.inputs = {am, bm};
  a.outputs = {out};
  const bool bias = k.inputs.size() > 2 && !k.inputs[2].shape.empty() && k.inputs[2].dtype;
  const bool two_d = am.shape.size() == 2 && bm.shape.size() == 2;
  if (two_d && (bias || t->first || t->second)) {
    a.op = "Gemm";
    if (bias) a.inputs.push_back(meta(k.inputs[2].shape, *k.inputs[2].dtype));
    a.attrs.set("transA", std::int64_t{t->first}).set("transB", std::int64_t{t->second});
  } else if (!two_d) {
    a.op = "BatchMatMul";
    a.attrs.set("adj_x", std::int64_t{t->first}).set("adj_y", std::int64_t{t->second});
  }
  return {};
}

namespace {

// A 5HD max pool's square window (kh = kw) from its argmax mask [.., kh*kw, ceil(Ho*Wo/16)+1, 16],
// with x and y (or dy) read back to NCHW; "" when read, else why not.
std::string pool_window(const TensorMeta& x, const TensorMeta& y, const Shape& mask, const char* operands,
                        std::int64_t& kk) {
  if (x.shape.size() != 4 || y.shape.size() != 4 || mask.size() < 3) return std::string("expected 5HD ") + operands;
  const auto k = square_kernel(mask[mask.size() - 3]);
  if (!k) return "mask " + shape_str(mask) + ": kh*kw is not a square";
  kk = *k;
  return {};
}

}  // namespace

// MaxPoolWithArgmaxV1 (x 5HD C0 16) -> (y 5HD, mask [N, C1, kh*kw, ceil(Ho*Wo/16)+1, 16]).
std::string max_pool_argmax(const KernelTensors& k, Adapted& a) {
  if (auto e = need(k, 1, 2); !e.empty()) return e;
  TensorMeta xm, ym;
  if (auto e = as_input(k.inputs[0], xm); !e.empty()) return e;
  if (auto e = as_input(k.outputs[0], ym); !e.empty()) return e;
  std::int64_t kk = 0;
  if (auto e = pool_window(xm, ym, k.outputs[1].shape, "input, output and mask", kk); !e.empty()) return e;
  a.inputs = {xm};
  a.attrs.set("kernel", std::vector<std::int64_t>{kk, kk});
  a.outputs = {ym.shape, ym.shape};
  return window_attrs(xm.shape, ym.shape, kk, a.attrs, false);
}

// MaxPoolGradWithArgmaxV1 (x 5HD, dy 5HD, mask [.., kh*kw, ceil(Ho*Wo/16)+1, 16]) -> dx 5HD; the
// emulator's grad takes (dy, indices) and the input size.
std::string max_pool_grad_argmax(const KernelTensors& k, Adapted& a) {
  if (auto e = need(k, 3, 1); !e.empty()) return e;
  TensorMeta xm, dym;
  if (auto e = as_input(k.inputs[0], xm); !e.empty()) return e;
  if (auto e = as_input(k.inputs[1], dym); !e.empty()) return e;
  std::int64_t kk = 0;
  if (auto e = pool_window(xm, dym, k.inputs[2].shape, "input, grad and mask", kk); !e.empty()) return e;
  a.inputs = {dym, meta(dym.shape, DType::kI64)};
  a.attrs.set("input_size", std::vector<std::int64_t>(xm.shape));
  a.attrs.set("kernel", std::vector<std::int64_t>{kk, kk});
  a.outputs = {xm.shape};
  return window_attrs(xm.shape, dym.shape, kk, a.attrs, false);
}

// AdaptiveAvgPool3d on [N, D=1, H, W, C] (aclnnAdaptiveAvgPool2d between two Transposes) -> NCHW.
std::string adaptive_avg_pool3d(const KernelTensors& k, Adapted& a) {
  if (auto e = need(k, 1, 1); !e.empty()) return e;
  const Shape &x = k.inputs[0].shape, &y = k.outputs[0].shape;
  if (x.size() != 5 || y.size() != 5 || !k.inputs[0].dtype) return "expected [N,1,H,W,C] input and output";
  a.inputs = {meta({x[0], x[4], x[2], x[3]}, *k.inputs[0].dtype)};
  a.attrs.set("output_size", std::vector<std::int64_t>{y[2], y[3]});
  a.outputs = {{y[0], y[4], y[2], y[3]}};
  return {};
}

// AdaptiveAvgPool3dGrad (dy [1, Ho, Wo, N*C], x [N, C, 1, H, W]) -> dx as dy: NCHW with the input size.
std::string adaptive_avg_pool3d_grad(const KernelTensors& k, Adapted& a) {
  if (auto e = need(k, 2, 1); !e.empty()) return e;
  const Shape &dy = k.inputs[0].shape, &x = k.inputs[1].shape;
  if (dy.size() != 4 || x.size() != 5 || !k.inputs[0].dtype) return "expected [1,Ho,Wo,N*C] and [N,C,1,H,W] inputs";
  a.inputs = {meta({x[0], x[1], dy[1], dy[2]}, *k.inputs[0].dtype)};
  const Shape size{x[0], x[1], x[3], x[4]};
  a.attrs.set("input_size", std::vector<std::int64_t>(size));
  a.outputs = {size};
  return {};
}

// TransData (storage in, storage out): the contract of emulator op TransData (formats.h).
std::string trans_data(const KernelTensors& k, Adapted& a) {
  if (auto e = need(k, 1, 1); !e.empty()) return e;
  const KernelTensor &src = k.inputs[0], &dst = k.outputs[0];
  if (!src.dtype) return "dtype " + src.dtype_name + " not modelled";
  const bool src_plain = src.format == "NCHW" || src.format == "ND";
  const bool dst_plain = dst.format == "NCHW" || dst.format == "ND";
  if (src_plain == dst_plain) return "TransData from " + src.format + " to " + dst.format + " is not modelled";
  const KernelTensor& priv = src_plain ? dst : src;
  if (priv.shape.empty()) return "private-format shape " + shape_str(priv.shape) + " is empty";
  a.inputs = {meta(src.shape, *src.dtype)};
  a.attrs.set("src_format", src.format).set("dst_format", dst.format);
  a.attrs.set("base_shape", std::vector<std::int64_t>(src_plain ? src.shape : dst.shape));
  a.attrs.set("c0", priv.shape.back());
  a.outputs = {dst.shape};
  return {};
}

std::string normal_format(std::string_view format) {
  if (format == "FORMAT_ND") return "ND";
  if (format.rfind("FORMAT_", 0) == 0) format.remove_prefix(7);
  return std::string(format);
}

std::optional<Shape> logical_shape(const KernelTensor& t) {
  if (!is_5hd(t)) return t.shape;
  if (t.shape.size() != 5) return std::nullopt;
  return Shape{t.shape[0], t.shape[1] * t.shape[4], t.shape[2], t.shape[3]};
}

}  // namespace npuscope::calibration::profile
