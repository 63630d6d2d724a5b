// Native average pooling, 2-D and 3-D, forward and backward: avg_pool2d / avg_pool3d (AvgPool) and
// their backward ops (AvgPoolGrad, CANN's AvgPoolV2Grad / AvgPool3DGrad), with ceil_mode,
// count_include_pad and divisor_override. Unbatched inputs (CHW, CDHW) run as a batch of one.
#include <ATen/ATen.h>
#include <ATen/native/Pool.h>
#include <torch/library.h>

#include "kernel_support.h"

namespace npuscope::pytorch {
namespace {

// The attributes of AvgPool / AvgPoolGrad for `spatial` (2 or 3) dims: PyTorch's one-or-all values
// spread over the dims, the stride the kernel when empty, symmetric pads.
emulator::Attrs avg_pool_attrs(std::size_t spatial, at::IntArrayRef kernel, at::IntArrayRef stride,
                               at::IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                               c10::optional<std::int64_t> divisor_override) {
  auto spread = [spatial](at::IntArrayRef a, std::int64_t fallback) {
    std::vector<std::int64_t> v(spatial, fallback);
    for (std::size_t i = 0; i < spatial && !a.empty(); ++i) v[i] = a.size() == 1 ? a[0] : a[i];
    return v;
  };
  const std::vector<std::int64_t> k = spread(kernel, 1);
  std::vector<std::int64_t> pads = spread(padding, 0);
  pads.insert(pads.end(), pads.begin(), pads.end());
  emulator::Attrs attrs{{"kernel_shape", k},
                        {"strides", stride.empty() ? k : spread(stride, 1)},
                        {"pads", pads},
                        {"ceil_mode", std::int64_t{ceil_mode}},
                        {"count_include_pad", std::int64_t{count_include_pad}}};
  if (divisor_override.has_value()) attrs.set("divisor_override", *divisor_override);
  return attrs;
}

// The output shape of the pool over the last `spatial` dims.
std::vector<std::int64_t> pooled_shape(const at::Tensor& self, const emulator::Attrs& attrs, std::size_t spatial,
                                       bool ceil_mode) {
  const auto k = attrs.get_ints("kernel_shape"), s = attrs.get_ints("strides"), p = attrs.get_ints("pads");
  std::vector<std::int64_t> shape(self.sizes().begin(), self.sizes().end() - static_cast<std::ptrdiff_t>(spatial));
  for (std::size_t i = 0; i < spatial; ++i) {
    const std::int64_t in = self.size(self.dim() - static_cast<std::int64_t>(spatial) + static_cast<std::int64_t>(i));
    shape.push_back(at::native::pooling_output_shape<std::int64_t>(in, k[i], p[i], s[i], 1, ceil_mode));
  }
  return shape;
}

// `t` with a batch dim of one added when it is unbatched (rank spatial + 1).
at::Tensor batched(const at::Tensor& t, std::size_t spatial) {
  return t.dim() == static_cast<std::int64_t>(spatial) + 1 ? t.unsqueeze(0) : t;
}

bool native_pool(const at::Tensor& self, std::size_t spatial) {
  const auto rank = static_cast<std::int64_t>(spatial);
  return is_float(self.scalar_type()) && (self.dim() == rank + 1 || self.dim() == rank + 2);
}

void avg_pool(const char* aten, std::size_t spatial, const at::Tensor& self, const emulator::Attrs& attrs,
              bool ceil_mode, const at::Tensor& out) {
  check_same_device(aten, out, {self});
  resize_out(out, pooled_shape(self, attrs, spatial, ceil_mode));
  if (out.numel() == 0) return;
  OutputSlot slot(out, aten);
  run_op("AvgPool", aten, {batched(operand(self, out.scalar_type(), aten), spatial)}, attrs,
         {batched(slot.tensor(), spatial)});
  slot.finish();
}

void avg_pool_backward(const char* aten, std::size_t spatial, const at::Tensor& grad_output, const at::Tensor& self,
                       emulator::Attrs attrs, const at::Tensor& grad_input) {
  check_same_device(aten, grad_input, {grad_output, self});
  resize_out(grad_input, self.sizes());
  if (grad_input.numel() == 0) return;
  OutputSlot slot(grad_input, aten);
  const at::Tensor dx = batched(slot.tensor(), spatial);
  attrs.set("input_size", ints(dx.sizes()));
  run_op("AvgPoolGrad", aten, {batched(operand(grad_output, grad_input.scalar_type(), aten), spatial)}, attrs, {dx});
  slot.finish();
}

at::Tensor& avg_pool2d_out(const at::Tensor& self, at::IntArrayRef kernel_size, at::IntArrayRef stride,
                           at::IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                           c10::optional<std::int64_t> divisor_override, at::Tensor& out) {
  if (!native_pool(self, 2))
    return NPUSCOPE_FALLBACK(avg_pool2d_out, self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                             divisor_override, out);
  avg_pool("aten::avg_pool2d", 2, self,
           avg_pool_attrs(2, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override), ceil_mode,
           out);
  return out;
}

at::Tensor& avg_pool2d_backward_out(const at::Tensor& grad_output, const at::Tensor& self, at::IntArrayRef kernel_size,
                                    at::IntArrayRef stride, at::IntArrayRef padding, bool ceil_mode,
                                    bool count_include_pad, c10::optional<std::int64_t> divisor_override,
                                    at::Tensor& grad_input) {
  if (!native_pool(self, 2))
    return NPUSCOPE_FALLBACK(avg_pool2d_backward_grad_input, grad_output, self, kernel_size, stride, padding, ceil_mode,
                             count_include_pad, divisor_override, grad_input);
  avg_pool_backward("aten::avg_pool2d_backward", 2, grad_output, self,
                    avg_pool_attrs(2, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override),
                    grad_input);
  return grad_input;
}

at::Tensor& avg_pool3d_out(const at::Tensor& self, at::IntArrayRef kernel_size, at::IntArrayRef stride,
                           at::IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                           c10::optional<std::int64_t> divisor_override, at::Tensor& out) {
  if (!native_pool(self, 3))
    return NPUSCOPE_FALLBACK(avg_pool3d_out, self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                             divisor_override, out);
  avg_pool("aten::avg_pool3d", 3, self,
           avg_pool_attrs(3, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override), ceil_mode,
           out);
  return out;
}

at::Tensor& avg_pool3d_backward_out(const at::Tensor& grad_output, const at::Tensor& self, at::IntArrayRef kernel_size,
                                    at::IntArrayRef stride, at::IntArrayRef padding, bool ceil_mode,
                                    bool count_include_pad, c10::optional<std::int64_t> divisor_override,
                                    at::Tensor& grad_input) {
  if (!native_pool(self, 3))
    return NPUSCOPE_FALLBACK(avg_pool3d_backward_grad_input, grad_output, self, kernel_size, stride, padding, ceil_mode,
                             count_include_pad, divisor_override, grad_input);
  avg_pool_backward("aten::avg_pool3d_backward", 3, grad_output, self,
                    avg_pool_attrs(3, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override),
                    grad_input);
  return grad_input;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("avg_pool2d.out", TORCH_FN(avg_pool2d_out));
  m.impl("avg_pool2d_backward.grad_input", TORCH_FN(avg_pool2d_backward_out));
  m.impl("avg_pool3d.out", TORCH_FN(avg_pool3d_out));
  m.impl("avg_pool3d_backward.grad_input", TORCH_FN(avg_pool3d_backward_out));
}

}  // namespace npuscope::pytorch
