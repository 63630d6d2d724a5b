// Native 3-D max pooling, forward and backward: max_pool3d_with_indices (MaxPool3DWithArgmax) and
// max_pool3d_with_indices_backward (MaxPool3DGradWithArgmax), what F.max_pool3d and nn.MaxPool3d
// reach (kernel, stride, padding, dilation, ceil_mode, return_indices; NCDHW or unbatched CDHW).
// PyTorch 1.13 declares neither op structured, so the functional and out= overloads are both
// registered here. The indices are PyTorch's, flat within each (n, c) plane of D·H·W (Note [Max
// pool 3-D indices], emulator/src/kernels/max_pool3d_argmax_ops.cpp).
//
// Note [Max pool 3-D checks]
// Sizes and arguments go through ATen's own checks (pooling_output_shape, pool3d_shape_check,
// max_pool3d_backward_shape_check: the CPU kernel's), so a bad call raises the CPU's error here.
// What the emulator op does not take goes to the CPU fallback (Note [Native or fallback]): float64
// and integer inputs, an empty input (the CPU decides between an empty result and its error), and
// out= tensors of another dtype than the CPU kernel writes (it raises).
#include <ATen/ATen.h>
#include <ATen/native/Pool.h>
#include <torch/library.h>

#include <array>

#include "kernel_support.h"

namespace npuscope::pytorch {
namespace {

// PyTorch's (kT, kH, kW), (dT, dH, dW), (pT, pH, pW), (dilationT, dilationH, dilationW), one value
// or three; an empty stride is the kernel.
struct Pool3dArgs {
  std::array<int, 3> kernel{}, stride{}, padding{}, dilation{};
  std::vector<std::int64_t> attr(const std::array<int, 3>& a) const { return {a[0], a[1], a[2]}; }
};

std::array<int, 3> three(at::IntArrayRef a, const char* what) {
  TORCH_CHECK(a.size() == 1 || a.size() == 3, "max_pool3d: ", what,
              " must either be a single int, or a tuple of three ints");
  const int first = at::native::safe_downcast<int, std::int64_t>(a[0]);
  if (a.size() == 1) return {first, first, first};
  return {first, at::native::safe_downcast<int, std::int64_t>(a[1]),
          at::native::safe_downcast<int, std::int64_t>(a[2])};
}

Pool3dArgs pool3d_args(at::IntArrayRef kernel, at::IntArrayRef stride, at::IntArrayRef padding,
                       at::IntArrayRef dilation) {
  Pool3dArgs p;
  p.kernel = three(kernel, "kernel_size");
  TORCH_CHECK(stride.size() <= 1 || stride.size() == 3,
              "max_pool3d: stride must either be omitted, a single int, or a tuple of three ints");
  p.stride = stride.empty() ? p.kernel : three(stride, "stride");
  p.padding = three(padding, "padding");
  p.dilation = three(dilation, "dilation");
  return p;
}

emulator::Attrs pool3d_attrs(const Pool3dArgs& p, bool ceil_mode) {
  return {{"kernel", p.attr(p.kernel)},
          {"strides", p.attr(p.stride)},
          {"pads", p.attr(p.padding)},
          {"dilations", p.attr(p.dilation)},
          {"ceil_mode", std::int64_t{ceil_mode}}};
}

// The pooled (D, H, W) of `self`.
std::array<std::int64_t, 3> pooled_dims(const at::Tensor& self, const Pool3dArgs& p, bool ceil_mode) {
  std::array<std::int64_t, 3> out{};
  for (int i = 0; i < 3; ++i) {
    out[i] = at::native::pooling_output_shape<std::int64_t>(self.size(i - 3), p.kernel[i], p.padding[i], p.stride[i],
                                                            p.dilation[i], ceil_mode);
  }
  return out;
}

// ATen's checks of the forward (Note [Max pool 3-D checks]).
void check_forward(const char* aten, const at::Tensor& self, const Pool3dArgs& p,
                   const std::array<std::int64_t, 3>& o) {
  const auto& k = p.kernel;
  const auto& s = p.stride;
  const auto& pd = p.padding;
  const auto& d = p.dilation;
  at::native::pool3d_shape_check(self, self.size(-4), k[0], k[1], k[2], s[0], s[1], s[2], pd[0], pd[1], pd[2], d[0],
                                 d[1], d[2], self.size(-3), self.size(-2), self.size(-1), o[0], o[1], o[2], aten);
}

bool native_input(const at::Tensor& self) {
  return is_float(self.scalar_type()) && (self.dim() == 4 || self.dim() == 5) && self.numel() > 0;
}

void max_pool3d_into(const char* aten, const at::Tensor& self, const Pool3dArgs& p, bool ceil_mode,
                     const at::Tensor& out, const at::Tensor& indices) {
  check_same_device(aten, out, {self});
  check_same_device(aten, indices, {self});
  const std::array<std::int64_t, 3> o = pooled_dims(self, p, ceil_mode);
  check_forward(aten, self, p, o);
  std::vector<std::int64_t> shape(self.sizes().begin(), self.sizes().end() - 3);
  shape.insert(shape.end(), o.begin(), o.end());
  resize_out(out, shape);
  resize_out(indices, shape);
  OutputSlot y(out, aten), idx(indices, aten);
  run_op("MaxPool3DWithArgmax", aten, {operand(self, out.scalar_type(), aten)}, pool3d_attrs(p, ceil_mode),
         {y.tensor(), idx.tensor()});
  y.finish();
  idx.finish();
}

std::tuple<at::Tensor&, at::Tensor&> max_pool3d_with_indices_out(const at::Tensor& self, at::IntArrayRef kernel_size,
                                                                 at::IntArrayRef stride, at::IntArrayRef padding,
                                                                 at::IntArrayRef dilation, bool ceil_mode,
                                                                 at::Tensor& out, at::Tensor& indices) {
  if (!native_input(self) || out.scalar_type() != self.scalar_type() || indices.scalar_type() != at::kLong)
    return NPUSCOPE_FALLBACK(max_pool3d_with_indices_out, self, kernel_size, stride, padding, dilation, ceil_mode, out,
                             indices);
  max_pool3d_into("aten::max_pool3d_with_indices", self, pool3d_args(kernel_size, stride, padding, dilation), ceil_mode,
                  out, indices);
  return {out, indices};
}

std::tuple<at::Tensor, at::Tensor> max_pool3d_with_indices(const at::Tensor& self, at::IntArrayRef kernel_size,
                                                           at::IntArrayRef stride, at::IntArrayRef padding,
                                                           at::IntArrayRef dilation, bool ceil_mode) {
  if (!native_input(self))
    return NPUSCOPE_FALLBACK(max_pool3d_with_indices, self, kernel_size, stride, padding, dilation, ceil_mode);
  at::Tensor out = at::empty({0}, self.options());
  at::Tensor indices = at::empty({0}, self.options().dtype(at::kLong));
  max_pool3d_into("aten::max_pool3d_with_indices", self, pool3d_args(kernel_size, stride, padding, dilation), ceil_mode,
                  out, indices);
  return {out, indices};
}

void max_pool3d_backward_into(const char* aten, const at::Tensor& grad_output, const at::Tensor& self,
                              const Pool3dArgs& p, bool ceil_mode, const at::Tensor& indices,
                              const at::Tensor& grad_input) {
  check_same_device(aten, grad_input, {grad_output, self, indices});
  const auto& k = p.kernel;
  const auto& s = p.stride;
  const auto& pd = p.padding;
  const auto& d = p.dilation;
  at::native::max_pool3d_backward_shape_check(self, grad_output, indices, self.size(-4), k[0], k[1], k[2], s[0], s[1],
                                              s[2], pd[0], pd[1], pd[2], d[0], d[1], d[2], self.size(-3), self.size(-2),
                                              self.size(-1), grad_output.size(-3), grad_output.size(-2),
                                              grad_output.size(-1), aten);
  resize_out(grad_input, self.sizes());
  OutputSlot dx(grad_input, aten);
  // The window only times the kernel: each gradient's scatter scans its window's taps (the op's cost).
  run_op("MaxPool3DGradWithArgmax", aten,
         {operand(grad_output, grad_input.scalar_type(), aten), contiguous(indices, aten)},
         {{"input_size", ints(self.sizes())}, {"kernel", p.attr(k)}}, {dx.tensor()});
  dx.finish();
}

bool native_backward(const at::Tensor& grad_output, const at::Tensor& self, const at::Tensor& indices) {
  return native_input(self) && grad_output.dim() == self.dim() && indices.scalar_type() == at::kLong;
}

at::Tensor& max_pool3d_with_indices_backward_out(const at::Tensor& grad_output, const at::Tensor& self,
                                                 at::IntArrayRef kernel_size, at::IntArrayRef stride,
                                                 at::IntArrayRef padding, at::IntArrayRef dilation, bool ceil_mode,
                                                 const at::Tensor& indices, at::Tensor& grad_input) {
  if (!native_backward(grad_output, self, indices) || grad_input.scalar_type() != self.scalar_type())
    return NPUSCOPE_FALLBACK(max_pool3d_with_indices_backward_grad_input, grad_output, self, kernel_size, stride,
                             padding, dilation, ceil_mode, indices, grad_input);
  max_pool3d_backward_into("aten::max_pool3d_with_indices_backward", grad_output, self,
                           pool3d_args(kernel_size, stride, padding, dilation), ceil_mode, indices, grad_input);
  return grad_input;
}

at::Tensor max_pool3d_with_indices_backward(const at::Tensor& grad_output, const at::Tensor& self,
                                            at::IntArrayRef kernel_size, at::IntArrayRef stride,
                                            at::IntArrayRef padding, at::IntArrayRef dilation, bool ceil_mode,
                                            const at::Tensor& indices) {
  if (!native_backward(grad_output, self, indices))
    return NPUSCOPE_FALLBACK(max_pool3d_with_indices_backward, grad_output, self, kernel_size, stride, padding,
                             dilation, ceil_mode, indices);
  at::Tensor grad_input = at::empty({0}, self.options());
  max_pool3d_backward_into("aten::max_pool3d_with_indices_backward", grad_output, self,
                           pool3d_args(kernel_size, stride, padding, dilation), ceil_mode, indices, grad_input);
  return grad_input;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("max_pool3d_with_indices", TORCH_FN(max_pool3d_with_indices));
  m.impl("max_pool3d_with_indices.out", TORCH_FN(max_pool3d_with_indices_out));
  m.impl("max_pool3d_with_indices_backward", TORCH_FN(max_pool3d_with_indices_backward));
  m.impl("max_pool3d_with_indices_backward.grad_input", TORCH_FN(max_pool3d_with_indices_backward_out));
}

}  // namespace npuscope::pytorch
