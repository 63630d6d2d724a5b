// The sample kernels as PyTorch custom ops (seed document 004's flow: an Ascend C kernel, then its
// PyTorch registration), on the emulated NPU's PyTorch device and, on CPU tensors, as their goldens:
//
//   import torch, npuscope.torch as npu
//   torch.ops.load_library("build/samples/opkit/libnpuscope_sample_torch_ops.so")
//   y = torch.ops.npuscope_samples.gelu(x.to(npu.device()))
#include <ATen/ATen.h>
#include <torch/csrc/autograd/autograd_not_implemented_fallback.h>
#include <torch/library.h>

#include "npuscope/pytorch/emulator_op.h"
#include "sample_kernels.h"

namespace {

using npuscope::pytorch::run_emulator_op;

at::Tensor add(const at::Tensor& x, const at::Tensor& y) { return run_emulator_op("AddCustom", {x, y})[0]; }
at::Tensor gelu(const at::Tensor& x) { return run_emulator_op("GeluCustom", {x})[0]; }
at::Tensor rms_norm(const at::Tensor& x, const at::Tensor& gamma, double eps) {
  npuscope::emulator::Attrs attrs;
  attrs.set("epsilon", eps);
  return run_emulator_op("RmsNormCustom", {x, gamma}, attrs)[0];
}
at::Tensor matmul(const at::Tensor& a, const at::Tensor& b) { return run_emulator_op("MatmulCustom", {a, b})[0]; }

// The kernels register as emulator ops when libnpuscope_sample_kernels loads: keep it linked.
[[maybe_unused]] const bool kKernelsLinked = !npuscope::samples::sample_kernel_types().empty();

}  // namespace

TORCH_LIBRARY(npuscope_samples, m) {
  m.def("add(Tensor x, Tensor y) -> Tensor");
  m.def("gelu(Tensor x) -> Tensor");
  m.def("rms_norm(Tensor x, Tensor gamma, float eps=1e-06) -> Tensor");
  m.def("matmul(Tensor a, Tensor b) -> Tensor");
}

TORCH_LIBRARY_IMPL(npuscope_samples, PrivateUse1, m) {
  m.impl("add", add);
  m.impl("gelu", gelu);
  m.impl("rms_norm", rms_norm);
  m.impl("matmul", matmul);
}

// No backward: a call on tensors that require grad works, and backward through it says so (without
// this the device's autograd fallthrough would give outputs without a grad_fn, as CPU PyTorch does).
TORCH_LIBRARY_IMPL(npuscope_samples, AutogradPrivateUse1, m) {
  for (const char* op : {"add", "gelu", "rms_norm", "matmul"})
    m.impl(op, torch::autograd::autogradNotImplementedFallback());
}

TORCH_LIBRARY_IMPL(npuscope_samples, CPU, m) {
  m.impl("add", add);
  m.impl("gelu", gelu);
  m.impl("rms_norm", rms_norm);
  m.impl("matmul", matmul);
}
