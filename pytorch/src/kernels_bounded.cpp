// Native piecewise-linear activations and their backward ops: hardtanh (ReLU6), hardswish,
// hardsigmoid, leaky_relu (ONNX's Clip / HardSwish / HardSigmoid / LeakyRelu forward, HardtanhGrad /
// HardswishGrad / HardsigmoidGrad / LeakyReluGrad backward), and clamp_min / clamp_max (Clip with
// one bound).
#include <ATen/ATen.h>
#include <torch/library.h>

#include "kernel_support.h"

namespace npuscope::pytorch {
namespace {

emulator::Attrs bounds(const at::Scalar& lo, const at::Scalar& hi) {
  return {{"min", lo.toDouble()}, {"max", hi.toDouble()}};
}

// ---- hardtanh -----------------------------------------------------------------------------------

at::Tensor& hardtanh_out(const at::Tensor& self, const at::Scalar& min_val, const at::Scalar& max_val,
                         at::Tensor& out) {
  if (!is_float(out.scalar_type())) return NPUSCOPE_FALLBACK(hardtanh_out, self, min_val, max_val, out);
  unary_op("Clip", "aten::hardtanh", self, out, bounds(min_val, max_val));
  return out;
}
at::Tensor hardtanh(const at::Tensor& self, const at::Scalar& min_val, const at::Scalar& max_val) {
  at::Tensor out = at::empty(self.sizes(), self.options());
  return hardtanh_out(self, min_val, max_val, out);
}
at::Tensor& hardtanh_(at::Tensor& self, const at::Scalar& min_val, const at::Scalar& max_val) {
  return (hardtanh_out)(self, min_val, max_val, self);
}

at::Tensor& hardtanh_backward_out(const at::Tensor& grad, const at::Tensor& self, const at::Scalar& min_val,
                                  const at::Scalar& max_val, at::Tensor& grad_input) {
  if (!is_float(grad_input.scalar_type()))
    return NPUSCOPE_FALLBACK(hardtanh_backward_grad_input, grad, self, min_val, max_val, grad_input);
  backward_op("HardtanhGrad", "aten::hardtanh_backward", grad, self, grad_input,
              {{"min_val", min_val.toDouble()}, {"max_val", max_val.toDouble()}});
  return grad_input;
}
at::Tensor hardtanh_backward(const at::Tensor& grad, const at::Tensor& self, const at::Scalar& min_val,
                             const at::Scalar& max_val) {
  at::Tensor out = at::empty(grad.sizes(), grad.options());
  return hardtanh_backward_out(grad, self, min_val, max_val, out);
}

// ---- hardswish, hardsigmoid ---------------------------------------------------------------------

at::Tensor& hardswish_out(const at::Tensor& self, at::Tensor& out) {
  if (!is_float(out.scalar_type())) return NPUSCOPE_FALLBACK(hardswish_out, self, out);
  unary_op("HardSwish", "aten::hardswish", self, out, {});
  return out;
}
at::Tensor hardswish(const at::Tensor& self) {
  at::Tensor out = at::empty(self.sizes(), self.options());
  return hardswish_out(self, out);
}
at::Tensor& hardswish_(at::Tensor& self) { return (hardswish_out)(self, self); }  // (): no ADL to at::

at::Tensor hardswish_backward(const at::Tensor& grad, const at::Tensor& self) {
  if (!is_float(grad.scalar_type())) return NPUSCOPE_FALLBACK(hardswish_backward, grad, self);
  at::Tensor out = at::empty(grad.sizes(), grad.options());
  backward_op("HardswishGrad", "aten::hardswish_backward", grad, self, out);
  return out;
}

at::Tensor& hardsigmoid_out(const at::Tensor& self, at::Tensor& out) {
  if (!is_float(out.scalar_type())) return NPUSCOPE_FALLBACK(hardsigmoid_out, self, out);
  unary_op("HardSigmoid", "aten::hardsigmoid", self, out, {{"alpha", 1.0 / 6.0}, {"beta", 0.5}});
  return out;
}

at::Tensor& hardsigmoid_backward_out(const at::Tensor& grad, const at::Tensor& self, at::Tensor& grad_input) {
  if (!is_float(grad_input.scalar_type()))
    return NPUSCOPE_FALLBACK(hardsigmoid_backward_grad_input, grad, self, grad_input);
  backward_op("HardsigmoidGrad", "aten::hardsigmoid_backward", grad, self, grad_input);
  return grad_input;
}

at::Tensor& leaky_relu_out(const at::Tensor& self, const at::Scalar& slope, at::Tensor& out) {
  if (!is_float(out.scalar_type())) return NPUSCOPE_FALLBACK(leaky_relu_out, self, slope, out);
  unary_op("LeakyRelu", "aten::leaky_relu", self, out, {{"alpha", slope.toDouble()}});
  return out;
}

at::Tensor& leaky_relu_backward_out(const at::Tensor& grad, const at::Tensor& self, const at::Scalar& slope,
                                    bool self_is_result, at::Tensor& grad_input) {
  if (!is_float(grad_input.scalar_type()) || (self_is_result && slope.toDouble() < 0))
    return NPUSCOPE_FALLBACK(leaky_relu_backward_grad_input, grad, self, slope, self_is_result, grad_input);
  // With a non-negative slope the result has the input's sign, so it serves as x (in-place leaky_relu_).
  backward_op("LeakyReluGrad", "aten::leaky_relu_backward", grad, self, grad_input,
              {{"negative_slope", slope.toDouble()}});
  return grad_input;
}

// ---- clamp_min, clamp_max -----------------------------------------------------------------------

at::Tensor& clamp_min_out(const at::Tensor& self, const at::Scalar& min, at::Tensor& out) {
  if (!is_float(out.scalar_type())) return NPUSCOPE_FALLBACK(clamp_min_out, self, min, out);
  unary_op("Clip", "aten::clamp_min", self, out, {{"min", min.toDouble()}});
  return out;
}

at::Tensor& clamp_max_out(const at::Tensor& self, const at::Scalar& max, at::Tensor& out) {
  if (!is_float(out.scalar_type())) return NPUSCOPE_FALLBACK(clamp_max_out, self, max, out);
  unary_op("Clip", "aten::clamp_max", self, out, {{"max", max.toDouble()}});
  return out;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("hardtanh", TORCH_FN(hardtanh));
  m.impl("hardtanh.out", TORCH_FN(hardtanh_out));
  m.impl("hardtanh_", TORCH_FN(hardtanh_));
  m.impl("hardtanh_backward", TORCH_FN(hardtanh_backward));
  m.impl("hardtanh_backward.grad_input", TORCH_FN(hardtanh_backward_out));
  m.impl("hardswish", TORCH_FN(hardswish));
  m.impl("hardswish.out", TORCH_FN(hardswish_out));
  m.impl("hardswish_", TORCH_FN(hardswish_));
  m.impl("hardswish_backward", TORCH_FN(hardswish_backward));
  m.impl("hardsigmoid.out", TORCH_FN(hardsigmoid_out));
  m.impl("leaky_relu.out", TORCH_FN(leaky_relu_out));
  m.impl("leaky_relu_backward.grad_input", TORCH_FN(leaky_relu_backward_out));
  m.impl("hardsigmoid_backward.grad_input", TORCH_FN(hardsigmoid_backward_out));
  m.impl("clamp_min.out", TORCH_FN(clamp_min_out));
  m.impl("clamp_max.out", TORCH_FN(clamp_max_out));
}

}  // namespace npuscope::pytorch
