// The dispatcher: runs one op on the device its inputs live on.
//
// npu inputs: infer outputs, allocate them on the device, choose the compute dtype from the
// precision mode, pick the NPU kernel (or fall back to the CPU kernel as an AI CPU task), and queue
// the task on the stream. cpu inputs: run the CPU golden kernel inline, as a kHostCpu task.
// Either way the host API, the task and (if wanted) the tensors reach the hooks.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "npuscope/emulator/attrs.h"
#include "npuscope/emulator/device.h"
#include "npuscope/emulator/op_registry.h"
#include "npuscope/emulator/tensor.h"

namespace npuscope::emulator {

struct CallOptions {
  std::string_view name;           // instance name; default: the op type. Prefixed by the NameScope.
  const Stream* stream = nullptr;  // default: the device's default stream
  // Preallocated outputs (PyTorch's out= and in-place ops), used instead of new tensors: one per
  // output the op infers, each with the inferred shape and dtype, on the op's device. An output may
  // share memory with an input of the same shape (an in-place op); see Note [In-place kernels].
  std::span<const Tensor> outputs;
};

std::vector<Tensor> call_op(std::string_view op_type, std::vector<Tensor> inputs, const Attrs& attrs = {},
                            const CallOptions& options = {});
// For single-output ops.
Tensor call_op1(std::string_view op_type, std::vector<Tensor> inputs, const Attrs& attrs = {},
                const CallOptions& options = {});

// Records a task whose work the caller has done itself, as the PyTorch device's CPU fallback does
// (PyTorch's CPU kernel on host copies of the inputs): an AI CPU task of type `op_type` on the
// inputs' device and the options' stream, with its host API, costed by the AI CPU model from the
// tensors' sizes, and tensor records when wanted. `sources` are the host results, one per output
// with its size in bytes: the task copies them into `outputs` when it runs, so that later tasks on
// the stream and the tensor records see them there, as if the AI CPU had computed them.
void record_host_task(std::string_view op_type, const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs,
                      const std::vector<Tensor>& sources, const CallOptions& options = {});

// The dtype an NPU kernel of `category` computes in for `storage` under `mode` on `spec`, or
// nullopt-like kBool when the NPU cannot run it at all (-> AI CPU fallback).
struct ComputeChoice {
  DType dtype = DType::kF32;
  bool npu_capable = true;
};
ComputeChoice choose_compute_dtype(OpCategory category, DType storage, PrecisionMode mode, const DeviceSpec& spec);

// InvalidArgument ("Add: expected 2 inputs, got 1") unless the op takes `count` inputs.
void check_input_count(const OpSchema& schema, std::size_t count);

// How call_op runs an op on an NPU of `spec` in `mode`: its NPU kernel in the chosen compute dtype,
// or (the one generic fallback rule) its CPU kernel as an AI CPU task in the storage dtype, with the
// cost's unit then kAiCpu. `npuscope calibrate` plans its points the same way. Throws
// OpRegistrationError when the op has neither kernel.
struct LaunchPlan {
  const KernelEntry* kernel = nullptr;
  bool fallback = false;
  DType compute_dtype = DType::kF32;
  KernelCost cost;
};
LaunchPlan plan_npu_launch(const OpSchema& schema, std::span<const TensorMeta> inputs,
                           std::span<const TensorMeta> outputs, const Attrs& attrs, const KernelCost& cost,
                           PrecisionMode mode, const DeviceSpec& spec);

// Names ops by the model structure: within a scope "layer0/attn", a MatMul is "layer0/attn/MatMul".
class NameScope {
 public:
  explicit NameScope(std::string_view name);
  ~NameScope();
  NameScope(const NameScope&) = delete;
  NameScope& operator=(const NameScope&) = delete;

 private:
  std::size_t previous_size_;
};

// Forgets the per-name call counters (so two runs in one process number their calls alike).
void reset_call_counters();

}  // namespace npuscope::emulator
