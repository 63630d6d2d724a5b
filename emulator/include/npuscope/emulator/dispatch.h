// The dispatcher: runs one op on the device its inputs live on.
//
// npu inputs: infer outputs, allocate them on the device, choose the compute dtype from the
// precision mode, pick the NPU kernel (or fall back to the CPU kernel as an AI CPU task), and queue
// the task on the stream. cpu inputs: run the CPU golden kernel inline, as a kHostCpu task.
// Either way the host API, the task and (if wanted) the tensors reach the hooks.
#pragma once

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
};

std::vector<Tensor> call_op(std::string_view op_type, std::vector<Tensor> inputs, const Attrs& attrs = {},
                            const CallOptions& options = {});
// For single-output ops.
Tensor call_op1(std::string_view op_type, std::vector<Tensor> inputs, const Attrs& attrs = {},
                const CallOptions& options = {});

// The dtype an NPU kernel of `category` computes in for `storage` under `mode` on `spec`, or
// nullopt-like kBool when the NPU cannot run it at all (-> AI CPU fallback).
struct ComputeChoice {
  DType dtype = DType::kF32;
  bool npu_capable = true;
};
ComputeChoice choose_compute_dtype(OpCategory category, DType storage, PrecisionMode mode, const DeviceSpec& spec);

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
