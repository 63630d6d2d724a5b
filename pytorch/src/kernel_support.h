// What the native kernels share: operands in the right dtype and layout, scalars, output sizes,
// and the CPU fallback for the cases a native kernel does not cover (see Note [Native or fallback]).
#pragma once

#include <ATen/ATen.h>
#include <ATen/native/CPUFallback.h>
#include <ATen/native/Resize.h>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <vector>

#include "npu_device.h"
#include "tensor_bridge.h"

namespace npuscope::pytorch {

// Note [Native or fallback]
// A native kernel serves the common cases of its op (the dtypes the emulator's NPU op takes, the
// layouts and ranks the model zoo uses); anything else it hands to the CPU fallback with
// NPUSCOPE_FALLBACK, so that an unusual call is slower and reported (an AI CPU task, counted)
// rather than an error or a wrong result.
void cpu_fallback_boxed(const c10::OperatorHandle& op, torch::jit::Stack* stack);

#define NPUSCOPE_FALLBACK(op, ...) \
  at::native::call_fallback_fn<&::npuscope::pytorch::cpu_fallback_boxed, ::at::_ops::op>::call(__VA_ARGS__)

// A CPU tensor with one element that PyTorch lets into device ops (a wrapped Python number).
inline bool is_host_scalar(const at::Tensor& t) { return t.defined() && t.device().is_cpu() && t.dim() == 0; }
// `t` on `device`: a host scalar uploaded (a one-element copy), any other tensor as it is.
inline at::Tensor on_device(const at::Tensor& t, const at::Device& device) {
  return is_host_scalar(t) ? t.to(device) : t;
}
inline bool is_float(at::ScalarType t) { return t == at::kFloat || t == at::kHalf || t == at::kBFloat16; }
// The dtypes of index tensors the emulator's gathers and scatters take.
inline bool index_dtype(at::ScalarType t) { return t == at::kLong || t == at::kInt; }

// TORCH_CHECKs that every defined input (host scalars aside) is on `out`'s device.
void check_same_device(const char* aten_name, const at::Tensor& out, std::initializer_list<at::Tensor> inputs);

// `t` as a contiguous device tensor of `type` (a Cast task when the dtype differs).
at::Tensor operand(const at::Tensor& t, at::ScalarType type, const char* aten_name);
// Resizes an out= tensor to `shape` (PyTorch's resize_output rules).
inline void resize_out(const at::Tensor& out, at::IntArrayRef shape) { at::native::resize_output(out, shape); }

// The emulator dtype attribute value (Cast's "to").
std::int64_t dtype_attr(at::ScalarType type);

// A 2-D matrix operand for Gemm: the tensor itself when contiguous, its transpose with
// transposed = true when it is a transposed contiguous matrix (weight.t()), else a copy.
struct MatrixOperand {
  at::Tensor tensor;
  bool transposed = false;
};
MatrixOperand matrix_operand(const at::Tensor& t, at::ScalarType type, const char* aten_name);

std::vector<std::int64_t> ints(at::IntArrayRef a);

// A seed for a random op's task, drawn from PyTorch's generator (the default CPU one unless one is
// given), so that torch.manual_seed repeats a run.
std::int64_t generator_seed(c10::optional<at::Generator> generator);

// out = op(self) in out's dtype (self cast first), out resized to self's shape: the body of every
// element-wise unary kernel.
void unary_op(const char* op, const char* aten_name, const at::Tensor& self, const at::Tensor& out,
              const emulator::Attrs& attrs = {});
// grad_input = op(grad, saved) in grad_input's dtype, resized to grad's shape: the body of every
// element-wise backward kernel (threshold_backward, gelu_backward, hardtanh_backward, ...).
void backward_op(const char* op, const char* aten_name, const at::Tensor& grad, const at::Tensor& saved,
                 const at::Tensor& grad_input, const emulator::Attrs& attrs = {});

}  // namespace npuscope::pytorch
