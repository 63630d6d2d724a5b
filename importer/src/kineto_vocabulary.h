// What the words of a Kineto trace mean to npuscope: event categories, runtime call names, kernel
// names, collective and dtype names, and the arguments' list formats (docs/import.md "Kineto").
// Pure functions of text: the importer (kineto_import.cpp) applies them, tests check them alone.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "npuscope/collector/trace_rows.h"

namespace npuscope::importer::kineto {

// What an event is, by its category (and phase for the few that need it).
enum class EventKind : std::uint8_t {
  kHostOp,          // cpu_op (Operator in PyTorch <= 1.9)
  kUserAnnotation,  // user_annotation: ProfilerStep#N, record_function ranges, nccl:* scopes
  kPythonFunction,  // python_function: the Python stack tracer's frames and nn.Module calls (with_stack)
  kKernel,          // kernel (Kernel), and an accelerator's device events (mtia_ccp_events)
  kMemcpy,          // gpu_memcpy (Memcpy)
  kMemset,          // gpu_memset (Memset)
  kRuntime,         // cuda_runtime, cuda_driver, *_runtime, *_driver (Runtime): host API calls
  kMemory,          // cpu_instant_event "[memory]": allocator totals
  kCounter,         // ph C
  kOther,           // everything else: counted in UNMAPPED
};
EventKind classify(std::string_view ph, std::string_view cat, std::string_view name);

// ProfilerStep#N -> N.
std::optional<std::int64_t> profiler_step(std::string_view name);

// The host op kind and the pass a host op starts (an op inherits its parent's pass otherwise).
HostOpKind host_op_kind(std::string_view name, bool annotation);
std::optional<ModelPass> pass_started_by(std::string_view name);

// An aten op one vendor's library implements (aten::cudnn_convolution, aten::miopen_batch_norm,
// aten::_cudnn_rnn, aten::mkldnn_*): Note [Kineto op types] in kineto_import.cpp.
bool is_vendor_op(std::string_view name);

// A runtime or driver call's kind (CUDA, HIP, MTIA and PrivateUse1 names alike).
ApiKind api_kind(std::string_view name);

// A device task's type from its category and name: KERNEL, MEMCPY, MEMSET, HCCL (an NCCL/RCCL
// kernel), EVENT_RECORD / EVENT_WAIT (an accelerator's stream events).
TaskType task_type(EventKind kind, std::string_view name);
bool is_collective_kernel(std::string_view name);

// A copy's direction from its name ("Memcpy HtoD (Pageable -> Device)") or kind argument ("HtoD",
// "DEVICE_TO_HOST"); 0 when neither says.
std::int32_t copy_kind(std::string_view name, std::string_view kind_arg);

// A kernel's type when no host op launched it: its function's base name ("void
// at::native::vectorized_elementwise_kernel<4, ...>(...)" -> "vectorized_elementwise_kernel").
std::string_view kernel_type(std::string_view kernel_name);

// record_param_comms' "Collective name" ("allreduce", "all_gather", "_allgather_base", ...).
std::optional<CollectiveKind> collective_kind(std::string_view name);
// A reduction named in an NCCL kernel's name ("ncclKernel_AllReduce_RING_LL_Sum_float").
ReduceOp reduce_op(std::string_view kernel_name, CollectiveKind kind);
// A scalar type as Kineto writes it ("Float", "c10::BFloat16", "long int", "float", "Half", ...).
std::optional<DType> torch_dtype(std::string_view name);

// "Input Dims" ([[1, 141, 512], [], [512]]) in the shared form of tensor_lists.h, "1,141,512;;512;"
// (a list input keeps its inner brackets: "[2,3],[4];").
std::string input_shapes(std::string_view json);
// "Input type" (["float", "Scalar", ""]) in the shared form, "f32;Scalar;;" (tensor_lists.h dtype_list).
std::string input_dtypes(std::string_view json);
// "Call stack" frames ("a.py(1): f;b.py(2): g") as PYTORCH_API.stack_id's form ("...;\n...").
void append_stack(std::string& out, std::string_view frames);

// The elements of a JSON array of integers ("[0, 1]", "[8, 1, 1]"), calling f(int64) for each;
// false when it is not one.
template <class F>
bool for_each_int(std::string_view json, F&& f) {
  std::size_t i = 0;
  const auto skip = [&] {
    while (i < json.size() && (json[i] == ' ' || json[i] == '\n' || json[i] == '\t' || json[i] == '\r')) ++i;
  };
  skip();
  if (i >= json.size() || json[i] != '[') return false;
  ++i;
  for (;;) {
    skip();
    if (i < json.size() && json[i] == ']') return true;
    bool negative = false;
    if (i < json.size() && json[i] == '-') negative = true, ++i;
    const std::size_t start = i;
    std::int64_t v = 0;
    for (; i < json.size() && json[i] >= '0' && json[i] <= '9'; ++i) v = v * 10 + (json[i] - '0');
    if (i == start || i - start > 18) return false;
    f(negative ? -v : v);
    skip();
    if (i < json.size() && json[i] == ',') {
      ++i;
      continue;
    }
    return i < json.size() && json[i] == ']';
  }
}

}  // namespace npuscope::importer::kineto
