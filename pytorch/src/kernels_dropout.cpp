// Dropout as torch_npu runs it: a mask drawn on the device, applied by DropoutDoMask forward and
// backward (Note [Dropout as torch_npu runs it]).
//
// Note [Dropout as torch_npu runs it]
// PyTorch 1.13's at::dropout takes native_dropout on CUDA, XPU and lazy tensors only; on any other
// device it decomposes into bernoulli_, div_ and mul (three tasks forward, a Mul backward). torch_npu
// registers dropout for its device instead: the DSA engine draws the mask (DSAGenBitMask) and
// DropOutDoMask applies it, forward and backward (the shared 910B profile's AlexNet step: 2 masks
// and 4 DropOutDoMask). Here `dropout` is registered for AutogradPrivateUse1 and sends training-mode
// dropout of a float tensor with 0 < p < 1 to native_dropout, whose autograd formula calls
// native_dropout_backward; both are native: a Bernoulli task draws the bool mask (keep with
// probability 1 - p, seeded from PyTorch's generator), then DropoutDoMask(x, mask; scale 1 / (1 - p));
// backward is DropoutDoMask(grad, mask; scale). Anything else (eval, p of 0 or 1, an empty or
// integer tensor) is PyTorch's own dropout. The mask stays one bool per element, where CANN's is one
// bit: the DSA task's output is 8x larger here, and a diff against a real profile does not pair it.
#include <ATen/ATen.h>
#include <ATen/NativeFunctions.h>
#include <torch/library.h>

#include "kernel_support.h"
#include "tensor_bridge.h"

namespace npuscope::pytorch {
namespace {

at::Tensor dropout(const at::Tensor& input, double p, bool train) {
  if (train && p > 0 && p < 1 && input.numel() > 0 && is_float(input.scalar_type()))
    return std::get<0>(at::native_dropout(input, p, train));
  return at::native::dropout(input, p, train);
}

std::tuple<at::Tensor, at::Tensor> native_dropout(const at::Tensor& input, double p, c10::optional<bool> train) {
  constexpr const char* kAten = "aten::native_dropout";
  if (!is_float(input.scalar_type()) || input.numel() == 0 || (train.has_value() && !*train) || p < 0 || p > 1)
    return NPUSCOPE_FALLBACK(native_dropout, input, p, train);
  const at::Tensor x = operand(input, input.scalar_type(), kAten);
  at::Tensor mask = at::empty(input.sizes(), input.options().dtype(at::kBool));
  at::Tensor y = at::empty(input.sizes(), input.options());
  run_op("Bernoulli", kAten, {mask}, {{"p", 1.0 - p}, {"seed", generator_seed(c10::nullopt)}}, {mask});
  run_op("DropoutDoMask", kAten, {x, mask}, {{"scale", p == 1 ? 0.0 : 1.0 / (1.0 - p)}}, {y});
  return {y, mask};
}

at::Tensor native_dropout_backward(const at::Tensor& grad, const at::Tensor& mask, double scale) {
  constexpr const char* kAten = "aten::native_dropout_backward";
  if (!is_float(grad.scalar_type()) || mask.scalar_type() != at::kBool || !grad.sizes().equals(mask.sizes()))
    return NPUSCOPE_FALLBACK(native_dropout_backward, grad, mask, scale);
  at::Tensor dx = at::empty(grad.sizes(), grad.options());
  run_op("DropoutDoMask", kAten, {operand(grad, grad.scalar_type(), kAten), operand(mask, at::kBool, kAten)},
         {{"scale", scale}}, {dx});
  return dx;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, AutogradPrivateUse1, m) { m.impl("dropout", TORCH_FN(dropout)); }

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("native_dropout", TORCH_FN(native_dropout));
  m.impl("native_dropout_backward", TORCH_FN(native_dropout_backward));
}

}  // namespace npuscope::pytorch
