// The adapters of profile_adapters.h for 3-D max pooling, ROI pooling and alignment and deformable
// sampling: CANN lays these kernels out otherwise than the emulator's ops (NDC1HWC0, NHWC, rois with
// their batch index in a column, offsets and mask in one tensor) and passes as attributes what a
// profile does not record.
//
// Note [Attributes a profile does not record]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// A kernel_details row records shapes, dtypes and formats, not attributes. What the shapes fix is
// read from them: pooled and group sizes (the output's H and W), the number of rois (the output's
// N), the deformable kernel (the sampled H and W over the offsets'), its deformable groups and mask
// (the offsets' channels: 3 * dg * kh * kw with a mask, as CANN's only supported mode, else 2 * ...),
// the TBE 3-D pool's window volume kd * kh * kw (its bitmask's rows over C1; split into the most
// cubic window that gives the output sizes: the cost reads only the volume). Strides and pads are
// the smallest that give the output sizes, as for Conv2D.
// What the shapes do not fix takes a default: spatial_scale 1 (CANN's spatial_scale_h / _w), which
// the cost model does not read (a roi's extent is data to it), PSROIPooling's sampling_ratio 0
// (adaptive, priced as 2 x 2 samples a bin; CANN's kernel averages whole-pixel bins, which no ratio
// describes exactly) and ROIAlign(Grad)'s sample_num 2 (its REG_OP's default and torchvision's
// MultiScaleRoIAlign's; priced as 2 x 2 samples a bin, as adaptive would be). ROIAlign's roi_end_mode
// (torchvision's `aligned`) moves the samples by half a pixel, which the cost does not see: the
// emulator's default half_pixel stands for either.
// One attribute the cost reads and no recorded shape fixes: the window of the aclnn 3-D max pool
// (MaxPool3DWithArgmaxV2 and its gradient record their indices, not a mask). Per axis it is taken
// as the smallest stride s whose kernel s without pad gives the output size (PyTorch's default,
// stride = kernel), else kernel s + 1 with the smallest pad (a 3/2/1 stem when 2/2/0 cannot give
// the size). A pool whose windows overlap is costed with fewer taps than it reads (I3D's 3x3/2
// over 112 as 2x2/2): its compare work is modelled low by up to that ratio.
#include <algorithm>
#include <array>

#include "profile_adapters.h"

namespace npuscope::calibration::profile {
namespace {

using emulator::Attrs;
using emulator::Shape;
using emulator::shape_str;
using emulator::TensorMeta;

constexpr std::int64_t kMaxWindow = 64;  // as stride_pad's bound: garbage sizes cost nothing

// One spatial axis of a pool window.
struct Window {
  std::int64_t kernel = 1, stride = 1, pad = 0;
};
using Windows3d = std::array<Window, 3>;  // D, H, W

// The window of kernel k over `in` that gives `out`, with the emulator's pad rule (pad <= k / 2).
std::optional<Window> window_of(std::int64_t in, std::int64_t k, std::int64_t out) {
  const auto sp = stride_pad(in, k, out);
  if (!sp || sp->second > k / 2) return std::nullopt;
  return Window{k, sp->first, sp->second};
}

// An axis whose kernel is not recorded (Note [Attributes a profile does not record]).
std::optional<Window> guessed_window(std::int64_t in, std::int64_t out) {
  for (std::int64_t s = 1; s <= kMaxWindow && s <= in; ++s) {
    if (in / s == out) return Window{s, s, 0};
  }
  for (std::int64_t s = 1; s < kMaxWindow; ++s) {
    for (std::int64_t p = 0, k = s + 1; p <= k / 2; ++p) {
      if (in + 2 * p >= k && (in + 2 * p - k) / s + 1 == out) return Window{k, s, p};
    }
  }
  return std::nullopt;
}

// The last three dims of an NCDHW (or CDHW) shape.
std::array<std::int64_t, 3> spatial(const Shape& s) { return {s[s.size() - 3], s[s.size() - 2], s[s.size() - 1]}; }

// The windows of x (NCDHW or CDHW) pooled to y, each axis guessed; "" or why not.
std::string guessed_windows(const Shape& x, const Shape& y, Windows3d& w) {
  if ((x.size() != 4 && x.size() != 5) || y.size() != x.size())
    return "expected NCDHW (or CDHW) input and output, got " + shape_str(x) + " and " + shape_str(y);
  const auto in = spatial(x), out = spatial(y);
  for (std::size_t i = 0; i < 3; ++i) {
    const auto g = guessed_window(in[i], out[i]);
    if (!g) return "no pool window takes " + shape_str(x) + " to " + shape_str(y);
    w[i] = *g;
  }
  return {};
}

// The windows of kd * kh * kw = taps that take `in` to `out`, the most cubic (smallest largest kernel).
std::optional<Windows3d> windows_of_volume(std::array<std::int64_t, 3> in, std::array<std::int64_t, 3> out,
                                           std::int64_t taps) {
  std::optional<Windows3d> best;
  for (std::int64_t kd = 1; kd <= std::min(taps, kMaxWindow); ++kd) {
    if (taps % kd != 0) continue;
    for (std::int64_t kh = 1; kh <= std::min(taps / kd, kMaxWindow); ++kh) {
      if ((taps / kd) % kh != 0) continue;
      const std::int64_t kw = taps / kd / kh;
      const auto d = window_of(in[0], kd, out[0]), h = window_of(in[1], kh, out[1]), w = window_of(in[2], kw, out[2]);
      if (!d || !h || !w) continue;
      if (!best || std::max({kd, kh, kw}) < std::max({(*best)[0].kernel, (*best)[1].kernel, (*best)[2].kernel}))
        best = Windows3d{*d, *h, *w};
    }
  }
  return best;
}

void set_windows(const Windows3d& w, Attrs& attrs) {
  attrs.set("kernel", std::vector<std::int64_t>{w[0].kernel, w[1].kernel, w[2].kernel});
  attrs.set("strides", std::vector<std::int64_t>{w[0].stride, w[1].stride, w[2].stride});
  attrs.set("pads", std::vector<std::int64_t>{w[0].pad, w[1].pad, w[2].pad});
}

// NDC1HWC0 [N, D, C1, H, W, C0] -> NCDHW [N, C1 * C0, D, H, W].
Shape ncdhw_of_6hd(const Shape& s) { return {s[0], s[2] * s[5], s[1], s[3], s[4]}; }

// A recorded tensor as an NCHW input: as_input (5HD folded back), then NHWC permuted. A 4-D tensor
// of no named layout ("", ND) is NHWC when `plain_is_nhwc`.
std::string as_nchw(const KernelTensor& t, bool plain_is_nhwc, TensorMeta& out) {
  if (auto e = as_input(t, out); !e.empty()) return e;
  const bool unnamed = t.format.empty() || t.format == "ND";
  if (out.shape.size() == 4 && (t.format == "NHWC" || (plain_is_nhwc && unnamed))) {
    const Shape& s = out.shape;
    out.shape = {s[0], s[3], s[1], s[2]};
  }
  return {};
}

// "" when each tensor is 4-D, else which is not.
template <std::size_t N>
std::string four_d(const std::array<const TensorMeta*, N>& ts, const std::array<const char*, N>& names) {
  for (std::size_t i = 0; i < N; ++i) {
    if (ts[i]->shape.size() != 4) return std::string("expected a 4-D ") + names[i] + ", got " + shape_str(ts[i]->shape);
  }
  return {};
}

// Recorded rois ([R, 5] or [B, 5, R / B]: batch index, x1, y1, x2, y2 each) as the emulator's rois
// [R, 4] and batch_indices [R] (i32), appended to `out`, for the R rois of the output.
std::string append_rois(const KernelTensor& t, std::int64_t r, std::vector<TensorMeta>& out) {
  const Shape& s = t.shape;
  const bool flat = s.size() == 2 && s[1] == 5 && s[0] == r;
  const bool batched = s.size() == 3 && s[1] == 5 && s[2] > 0 && r % s[2] == 0 && r / s[2] == s[0];
  if (!flat && !batched)
    return "rois " + shape_str(s) + " are not [R, 5] or [B, 5, R / B] for R = " + std::to_string(r) + " rois";
  if (!t.dtype) return "dtype " + t.dtype_name + " not modelled";
  out.push_back(meta({r, 4}, *t.dtype));
  out.push_back(meta({r}, DType::kI32));
  return {};
}

// What DeformableOffsets(Grad) reads off x, the offsets and the sampled tensor (all NCHW here).
struct DeformGeometry {
  std::int64_t kh = 1, kw = 1, groups = 1;
  bool modulated = true;
  Window h, w;
};

std::string deform_geometry(const Shape& x, const Shape& off, const Shape& cols, DeformGeometry& g) {
  const std::int64_t ho = off[2], wo = off[3];
  if (ho < 1 || wo < 1 || cols[2] % ho != 0 || cols[3] % wo != 0) {
    return "sampled " + shape_str(cols) + ": H and W are not the offsets' " + shape_str(off) + " times a kernel";
  }
  g.kh = cols[2] / ho, g.kw = cols[3] / wo;
  const std::int64_t taps = g.kh * g.kw;
  g.modulated = off[1] % (3 * taps) == 0;
  if (!g.modulated && off[1] % (2 * taps) != 0) {
    return "offsets' channels " + std::to_string(off[1]) + " are not 3 (or 2) * groups * " + std::to_string(taps);
  }
  g.groups = off[1] / ((g.modulated ? 3 : 2) * taps);
  const auto sh = stride_pad(x[2], g.kh, ho), sw = stride_pad(x[3], g.kw, wo);
  if (!sh || !sw) return "no stride and pad take " + shape_str(x) + " to offsets " + shape_str(off);
  g.h = {g.kh, sh->first, sh->second}, g.w = {g.kw, sw->first, sw->second};
  return {};
}

// The emulator's offsets (and mask) for x and the geometry, appended to `in`; its attributes.
void deform_operands(const TensorMeta& x, const Shape& off, const DeformGeometry& g, std::vector<TensorMeta>& in,
                     Attrs& attrs) {
  const std::int64_t taps = g.groups * g.kh * g.kw;
  in.push_back(meta({off[0], 2 * taps, off[2], off[3]}, x.dtype));
  if (g.modulated) in.push_back(meta({off[0], taps, off[2], off[3]}, x.dtype));
  attrs.set("ksize", std::vector<std::int64_t>{g.kh, g.kw});
  attrs.set("strides", std::vector<std::int64_t>{g.h.stride, g.w.stride});
  attrs.set("pads", std::vector<std::int64_t>{g.h.pad, g.w.pad, g.h.pad, g.w.pad});
  attrs.set("deformable_groups", g.groups);
}

// What the ROI pools share: x (4-D or 5HD), rois and y -> a.inputs {x, rois [R, 4],
// batch_indices}, a.outputs {y}.
std::string roi_forward(const KernelTensors& k, Adapted& a) {
  if (auto e = need(k, 2, 1); !e.empty()) return e;
  TensorMeta x, y;
  if (auto e = as_nchw(k.inputs[0], false, x); !e.empty()) return e;
  if (auto e = as_nchw(k.outputs[0], false, y); !e.empty()) return e;
  if (auto e = four_d<2>({&x, &y}, {"x", "y"}); !e.empty()) return e;
  a.inputs = {x};
  a.outputs = {y.shape};
  return append_rois(k.inputs[1], y.shape[0], a.inputs);
}

// What their gradients share: grad (input 0), the rois (input `rois_at`) and dx -> a.inputs {grad,
// rois [R, 4], batch_indices}, a.outputs {dx}, dx's shape as xdiff_shape.
std::string roi_backward(const KernelTensors& k, std::size_t inputs, std::size_t rois_at, Adapted& a) {
  if (auto e = need(k, inputs, 1); !e.empty()) return e;
  TensorMeta dy, dx;
  if (auto e = as_nchw(k.inputs[0], false, dy); !e.empty()) return e;
  if (auto e = as_nchw(k.outputs[0], false, dx); !e.empty()) return e;
  if (auto e = four_d<2>({&dy, &dx}, {"grad", "dx"}); !e.empty()) return e;
  a.inputs = {dy};
  a.attrs.set("xdiff_shape", std::vector<std::int64_t>(dx.shape));
  a.outputs = {dx.shape};
  return append_rois(k.inputs[rois_at], dy.shape[0], a.inputs);
}

// ROIAlign(Grad)'s unrecorded attributes (Note [Attributes a profile does not record]).
void set_roi_align_defaults(Attrs& attrs) { attrs.set("spatial_scale", 1.0).set("sampling_ratio", std::int64_t{2}); }

}  // namespace

// MaxPool3DWithArgmaxV2 (x NCDHW) -> (y, argmax i32 as y): the window guessed per axis.
std::string max_pool3d_argmax(const KernelTensors& k, Adapted& a) {
  if (auto e = need(k, 1, 1); !e.empty()) return e;
  TensorMeta x;
  if (auto e = as_input(k.inputs[0], x); !e.empty()) return e;
  const Shape& y = k.outputs[0].shape;
  Windows3d w;
  if (auto e = guessed_windows(x.shape, y, w); !e.empty()) return e;
  a.inputs = {x};
  set_windows(w, a.attrs);
  a.outputs = {y};
  return {};
}

// MaxPool3DWithArgmax, TBE (x NDC1HWC0) -> (y NDC1HWC0, bitmask u16 [N, Do, C1 * kd*kh*kw, ceil(Ho*Wo/16), 16]).
std::string max_pool3d_argmax_6hd(const KernelTensors& k, Adapted& a) {
  if (auto e = need(k, 1, 2); !e.empty()) return e;
  const KernelTensor &x = k.inputs[0], &y = k.outputs[0], &mask = k.outputs[1];
  if (x.shape.size() != 6 || y.shape.size() != 6 || mask.shape.size() != 5) {
    return "expected NDC1HWC0 input and output and a 5-D bitmask, got " + shape_str(x.shape) + ", " +
           shape_str(y.shape) + " and " + shape_str(mask.shape);
  }
  if (!x.dtype) return "dtype " + x.dtype_name + " not modelled";
  const Shape xs = ncdhw_of_6hd(x.shape), ys = ncdhw_of_6hd(y.shape);
  const std::int64_t c1 = x.shape[2];
  if (c1 < 1 || mask.shape[2] % c1 != 0) return "bitmask " + shape_str(mask.shape) + ": rows are not C1 * taps";
  const auto w = windows_of_volume(spatial(xs), spatial(ys), mask.shape[2] / c1);
  if (!w) {
    return "no window of " + std::to_string(mask.shape[2] / c1) + " taps takes " + shape_str(xs) + " to " +
           shape_str(ys);
  }
  a.inputs = {meta(xs, *x.dtype)};
  set_windows(*w, a.attrs);
  a.outputs = {ys};
  return {};
}

// MaxPool3DGradWithArgmax (x, grad, argmax as grad; NCDHW: its REG_OP's order, where aclnn's API
// puts grad first; grad is the one of argmax's shape) -> dx: x's shape as input_size, the window
// guessed as the forward's.
std::string max_pool3d_grad_argmax(const KernelTensors& k, Adapted& a) {
  if (auto e = need(k, 3, 1); !e.empty()) return e;
  const bool grad_first = k.inputs[0].shape == k.inputs[2].shape && k.inputs[1].shape != k.inputs[2].shape;
  TensorMeta x, dy, argmax;
  if (auto e = as_input(k.inputs[grad_first ? 1 : 0], x); !e.empty()) return e;
  if (auto e = as_input(k.inputs[grad_first ? 0 : 1], dy); !e.empty()) return e;
  if (auto e = as_input(k.inputs[2], argmax); !e.empty()) return e;
  Windows3d w;
  if (auto e = guessed_windows(x.shape, dy.shape, w); !e.empty()) return e;
  a.inputs = {dy, argmax};
  a.attrs.set("input_size", std::vector<std::int64_t>(x.shape));
  set_windows(w, a.attrs);
  a.outputs = {k.outputs[0].shape};
  return {};
}

// DeformableOffsets (x NHWC, offsets NHWC [N, Ho, Wo, 3 * dg * kh * kw]) -> y NHWC [N, Ho * kh, Wo * kw, C].
std::string deformable_offsets(const KernelTensors& k, Adapted& a) {
  if (auto e = need(k, 2, 1); !e.empty()) return e;
  TensorMeta x, off, y;
  if (auto e = as_nchw(k.inputs[0], true, x); !e.empty()) return e;
  if (auto e = as_nchw(k.inputs[1], true, off); !e.empty()) return e;
  if (auto e = as_nchw(k.outputs[0], true, y); !e.empty()) return e;
  if (auto e = four_d<3>({&x, &off, &y}, {"x", "offsets", "y"}); !e.empty()) return e;
  DeformGeometry g;
  if (auto e = deform_geometry(x.shape, off.shape, y.shape, g); !e.empty()) return e;
  a.inputs = {x};
  deform_operands(x, off.shape, g, a.inputs, a.attrs);
  a.outputs = {y.shape};
  return {};
}

// DeformableOffsetsGrad (grad as y, x, offsets; NHWC) -> (grad_x, grad_offsets): the emulator's
// gradient gives the offsets' and the mask's as two outputs.
std::string deformable_offsets_grad(const KernelTensors& k, Adapted& a) {
  if (auto e = need(k, 3, 1); !e.empty()) return e;
  TensorMeta dy, x, off;
  if (auto e = as_nchw(k.inputs[0], true, dy); !e.empty()) return e;
  if (auto e = as_nchw(k.inputs[1], true, x); !e.empty()) return e;
  if (auto e = as_nchw(k.inputs[2], true, off); !e.empty()) return e;
  if (auto e = four_d<3>({&dy, &x, &off}, {"grad", "x", "offsets"}); !e.empty()) return e;
  DeformGeometry g;
  if (auto e = deform_geometry(x.shape, off.shape, dy.shape, g); !e.empty()) return e;
  a.inputs = {dy, x};
  deform_operands(x, off.shape, g, a.inputs, a.attrs);
  a.outputs = {x.shape};
  for (std::size_t i = 2; i < a.inputs.size(); ++i) a.outputs.push_back(a.inputs[i].shape);
  return {};
}

// RoiPoolingWithArgMax (x, rois, roi_actual_num?) -> (y [R, C, pooled_h, pooled_w], argmax).
std::string roi_pool(const KernelTensors& k, Adapted& a) {
  if (auto e = roi_forward(k, a); !e.empty()) return e;
  const Shape& y = a.outputs[0];
  a.attrs.set("pooled_h", y[2]).set("pooled_w", y[3]).set("spatial_scale", 1.0);
  return {};
}

// RoiPoolingGradWithArgMax (grad, x, rois, roi_actual_num?, argmax) -> dx.
std::string roi_pool_grad(const KernelTensors& k, Adapted& a) {
  if (auto e = roi_backward(k, 4, 2, a); !e.empty()) return e;
  TensorMeta argmax;
  if (auto e = as_nchw(k.inputs.back(), false, argmax); !e.empty()) return e;
  a.inputs.push_back(argmax);
  return {};
}

// PSROIPoolingV2 (x 5HD, rois [B, 5, R / B]) -> y 5HD [R, ceil(output_dim / 16), group_size, group_size, 16].
std::string ps_roi_pool(const KernelTensors& k, Adapted& a) {
  if (auto e = roi_forward(k, a); !e.empty()) return e;
  const Shape& y = a.outputs[0];
  a.attrs.set("output_height", y[2]).set("output_width", y[3]);
  a.attrs.set("spatial_scale", 1.0).set("sampling_ratio", std::int64_t{0});
  return {};
}

// PSROIPoolingGradV2D (grad 5HD, rois) -> dx 5HD; channel_mapping, which CANN's kernel derives from
// the bins, an i32 input of grad's shape.
std::string ps_roi_pool_grad(const KernelTensors& k, Adapted& a) {
  if (auto e = roi_backward(k, 2, 1, a); !e.empty()) return e;
  a.inputs.push_back(meta(a.inputs[0].shape, DType::kI32));
  a.attrs.set("spatial_scale", 1.0).set("sampling_ratio", std::int64_t{0});
  return {};
}

// ROIAlign (features 5HD or NCHW, rois [R, 5], rois_n?) -> y [R, C, pooled_height, pooled_width].
std::string roi_align(const KernelTensors& k, Adapted& a) {
  if (auto e = roi_forward(k, a); !e.empty()) return e;
  const Shape& y = a.outputs[0];
  a.attrs.set("output_height", y[2]).set("output_width", y[3]);
  set_roi_align_defaults(a.attrs);
  return {};
}

// ROIAlignGrad (ydiff, rois, rois_n?) -> xdiff: xdiff's shape as xdiff_shape (CANN's attribute too).
std::string roi_align_grad(const KernelTensors& k, Adapted& a) {
  if (auto e = roi_backward(k, 2, 1, a); !e.empty()) return e;
  set_roi_align_defaults(a.attrs);
  return {};
}

}  // namespace npuscope::calibration::profile
