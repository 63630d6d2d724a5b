// Calling an op of the emulator's dispatcher from a PyTorch custom op: the glue torch_npu's
// EXEC_NPU_CMD is between a PyTorch op and its Ascend C kernel (seed document 004's flow). A kernel
// written with opkit and registered with NPUSCOPE_OPKIT_OP becomes `torch.ops.<namespace>.<name>`
// in a few lines:
//
//   TORCH_LIBRARY(my_ops, m) { m.def("gelu(Tensor x) -> Tensor"); }
//   at::Tensor gelu(const at::Tensor& x) { return npuscope::pytorch::run_emulator_op("GeluCustom", {x})[0]; }
//   TORCH_LIBRARY_IMPL(my_ops, PrivateUse1, m) { m.impl("gelu", gelu); }   // the kernel, on the device
//   TORCH_LIBRARY_IMPL(my_ops, CPU, m) { m.impl("gelu", gelu); }           // its CPU golden
//   TORCH_LIBRARY_IMPL(my_ops, AutogradPrivateUse1, m) {                    // no backward (1.13 needs it said)
//     m.impl("gelu", torch::autograd::autogradNotImplementedFallback());
//   }
//
// samples/opkit/torch_ops.cpp does this for the sample kernels.
#pragma once

#include <ATen/core/Tensor.h>

#include <vector>

#include "npuscope/emulator/attrs.h"

namespace npuscope::pytorch {

// Runs the emulator op `op_type` on `inputs`: on the device (privateuseone) as a task on the current
// stream, its outputs new device tensors; on CPU tensors through the op's CPU golden kernel. The
// inputs are made contiguous first; all must be on one device. Emulator errors become PyTorch errors
// (RuntimeError) naming the op.
std::vector<at::Tensor> run_emulator_op(const char* op_type, const std::vector<at::Tensor>& inputs,
                                        const emulator::Attrs& attrs = {});

}  // namespace npuscope::pytorch
